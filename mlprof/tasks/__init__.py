"""law tasks of mlprof: thin, declarative; the work is done by library code.

Importing this package makes sure ``MLP_BASE`` is set (to this checkout) so that the default
model file resolves even without ``source setup.sh``.
"""

import atexit as _atexit
import gc as _gc
import os as _os

_os.environ.setdefault(
    "MLP_BASE", _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))))

# `law run` is a short-lived process that keeps its objects to the end: freezing the heap at exit
# spares the interpreter a full garbage collection over pandas and matplotlib at shutdown
# (0.5-0.8 s per run here, measured by benchmarks/overhead.py)
_atexit.register(_gc.freeze)
