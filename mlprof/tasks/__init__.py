"""law tasks of mlprof: thin, declarative; the work is done by library code.

Importing this package makes sure ``MLP_BASE`` is set (to this checkout) so that the default
model file resolves even without ``source setup.sh``, and installs the task layer's process-wide
hooks, here and nowhere else: one-line errors (:func:`mlprof.tasks.base.install_error_handling`),
the summary ``law run`` prints at its end (:mod:`mlprof.tasks.summary`), law's scale patches
(:mod:`mlprof.tasks._scale`), a heap freeze at exit and, under ``law run`` with a model script,
an early start of the measurement server.
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

from mlprof.tasks import _scale  # noqa: E402,F401  (law 0.1.21 scale patches, see there)
from mlprof.tasks.base import install_error_handling as _install_error_handling  # noqa: E402
from mlprof.tasks.summary import install_run_summary as _install_run_summary  # noqa: E402

_install_error_handling()
_install_run_summary()


def _prestart_for_scripts() -> None:
    """Under ``law run`` with a model script argument, start the measurement server now.

    It imports torch (~2.5 s); started here, that overlaps with law's own start-up and the
    scheduling instead of delaying the first discovery (measured: -0.3 to -0.5 s per run).
    """
    import sys

    argv = sys.argv
    if not argv or not _os.path.basename(argv[0]).startswith("law"):
        return
    if "run" not in argv[1:3] and not argv[0].endswith(" run"):
        return
    if any(a.endswith(".py") or ".py::" in a for a in argv[2:]):
        from mlprof.measure.isolate import prestart

        prestart(torch=True)


_prestart_for_scripts()
