"""law tasks of mlprof: thin, declarative; the work is done by library code.

Importing this package makes sure ``MLP_BASE`` is set (to this checkout) so that the default
model file resolves even without ``source setup.sh``. It changes nothing else process-wide:
the task layer's hooks (one-line errors and ``sys.excepthook``, the summary at the end of
``law run``, law's scale patches, a heap freeze at exit, an early measurement server) are
installed by :func:`mlprof.tasks.framework.hooks.install_run_hooks`, which runs here only when
this process is ``law run`` (:func:`~mlprof.tasks.framework.hooks.started_by_law_run`; law has
no start-up hook, and this import is the first mlprof code ``law run`` runs) and which the
``mlprof`` command calls itself.
"""

import os as _os

from mlprof.util import checkout_dir as _checkout_dir

_os.environ.setdefault("MLP_BASE", _checkout_dir())

import law as _law  # noqa: E402,F401  (law configures its loggers from law.cfg on import)

from mlprof.tasks.framework.hooks import install_run_hooks, started_by_law_run  # noqa: E402

if started_by_law_run():
    install_run_hooks()

__all__ = ["install_run_hooks", "started_by_law_run"]
