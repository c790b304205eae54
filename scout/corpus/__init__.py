"""The documentation corpus: which projects and files qualify, how files become passages, indexing."""
