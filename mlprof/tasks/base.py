"""BaseTask: ``--version``, the store layout and one-line errors for bad input."""

from __future__ import annotations

import logging
import os
import re
from collections import OrderedDict

import law
import luigi

from mlprof.errors import MLProfError

logger = logging.getLogger("mlprof")

#: the order of path segments below $MLP_STORE, the same for every task
STORE_ORDER = ("task", "model", "runtime", "settings")


def store_base() -> str:
    """The store directory: ``$MLP_STORE`` (default ``$MLP_BASE/data/store``)."""
    store = os.environ.get("MLP_STORE") or os.path.join(os.environ["MLP_BASE"], "data", "store")
    return os.path.abspath(os.path.expandvars(os.path.expanduser(store)))


def path_safe(text: str, max_len: int = 64) -> str:
    """Make ``text`` safe as one path segment (letters, digits, ``._-+``)."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "_", str(text)).strip("_.") or "x"
    return safe[:max_len]


class BaseTask(law.Task):
    """Base of all mlprof tasks.

    Outputs live in ``$MLP_STORE/<Task>/<model>/<runtime>__<device>/<settings>/<version>/``;
    each parameter mixin contributes its own segment through :meth:`store_parts`.
    """

    version = luigi.Parameter(description="version of outputs to produce; a new version never "
                                          "reuses the outputs of another")

    task_namespace = None
    exclude_params_req = set()

    def store_parts(self) -> OrderedDict[str, str]:
        """Path segments below the store, keyed by :data:`STORE_ORDER` names."""
        return OrderedDict(task=self.__class__.__name__)

    def local_path(self, *path: str) -> str:
        """Absolute path of ``path`` in this task's output directory."""
        parts = self.store_parts()
        ordered = [parts[k] for k in STORE_ORDER if k in parts]
        ordered += [v for k, v in parts.items() if k not in STORE_ORDER]
        return os.path.join(store_base(), *ordered, str(self.version), *map(str, path))

    def local_target(self, *path: str, **kwargs) -> law.LocalFileTarget:
        """A file target in this task's output directory."""
        return law.LocalFileTarget(self.local_path(*path), **kwargs)

    #: file next to a task's outputs that records why it failed (never an output itself;
    #: MeasureRuntime branches use _failure_bs_<N>.json)
    FAILURE_FILE = "_failure.json"

    def failure_path(self) -> str:
        """Where this task records its failure."""
        return self.local_path(self.FAILURE_FILE)

    def failure(self) -> dict | None:
        """The recorded failure of this task (None if it did not fail, or succeeded since)."""
        import json

        try:
            with open(self.failure_path()) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def on_failure(self, exception: BaseException) -> str:
        """Record the failure next to the outputs; one line for mlprof's own errors."""
        import datetime
        import traceback

        from mlprof.util import write_json_atomic

        status = getattr(exception, "status", "failed")
        message = str(exception) if isinstance(exception, MLProfError) else \
            f"{type(exception).__name__}: {exception}"
        try:
            write_json_atomic(self.failure_path(), {
                "task": self.task_family, "task_id": self.task_id, "status": status,
                "message": message, "error": type(exception).__name__,
                "traceback": None if isinstance(exception, MLProfError) else
                "".join(traceback.format_exception(exception))[-4000:],
                "time": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
            })
        except OSError:
            pass
        if isinstance(exception, MLProfError):
            return str(exception)
        return super().on_failure(exception)

    def on_success(self):
        """Drop a failure record left by an earlier run."""
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(self.failure_path())
        return super().on_success()


def failure_reason(task) -> str:
    """The recorded failure of ``task`` or of the first failed task below it."""
    from luigi.task import flatten

    seen = set()
    stack = [task]
    while stack:
        t = stack.pop()
        if t.task_id in seen:
            continue
        seen.add(t.task_id)
        failure = t.failure() if hasattr(t, "failure") else None
        if failure is None and hasattr(t, "is_workflow") and t.is_workflow():
            for b in t.get_branch_tasks().values():
                failure = b.failure() or failure
        if failure:
            return failure["message"]
        stack.extend(flatten(t.requires()))
    return "did not complete (see the log above)"


class _OneLineErrors(logging.Filter):
    """Log mlprof's bad-input errors as one line instead of a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, MLProfError):
            msg = record.getMessage()
            if msg.startswith("Uncaught exception"):
                record.msg = f"mlprof error: {exc}"
            else:
                record.msg = f"{msg}\nmlprof error: {exc}"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def install_error_handling() -> None:
    """One-line errors in luigi's log and for errors raised while parsing parameters."""
    import sys

    lg = logging.getLogger("luigi-interface")
    if not any(isinstance(f, _OneLineErrors) for f in lg.filters):
        lg.addFilter(_OneLineErrors())

    previous = sys.excepthook
    if getattr(previous, "_mlprof", False):
        return

    def hook(etype, value, tb):
        if isinstance(value, MLProfError):
            print(f"mlprof error: {value}", file=sys.stderr)
            return
        previous(etype, value, tb)

    hook._mlprof = True  # type: ignore[attr-defined]
    sys.excepthook = hook
