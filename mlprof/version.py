"""mlprof's version, in a module of its own so that every layer can read it (imports nothing)."""

__version__ = "0.1.0"
