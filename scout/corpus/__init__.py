"""The documentation corpus: what qualifies, how files become passages, and indexing."""
