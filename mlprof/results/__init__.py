"""Results: what mlprof writes and how it is read back (no law import).

One package owns a result, so that every reader agrees on what a result is:

- :mod:`~mlprof.results.layout`: the store layout, paths built from settings and parsed back;
- :mod:`~mlprof.results.families`: one declaration per task family (path segments, files, when
  a directory is complete, its failure records), read by the tasks' ``output()`` and by
  ``mlprof store``;
- :mod:`~mlprof.results.records`: typed records with a format version (provenance) and the
  reading of the version-less records written before;
- :mod:`~mlprof.results.identity`: what makes two results the same result, and a series;
- :mod:`~mlprof.results.store`: store operations (scan, select, clean, delete).

It imports only :mod:`mlprof.errors`, :mod:`mlprof.util` and the runtime registry.
"""
