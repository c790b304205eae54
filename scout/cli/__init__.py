"""The ``scout`` command line: thin commands split by noun, one error-to-exit-code mapping."""
