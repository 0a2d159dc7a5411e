"""What ``law run`` prints: mlprof's own lines while it runs, then luigi's outcome in one line
and each requested task's :meth:`run_summary` (a table of the medians and the output paths),
also when nothing had to run.

luigi's INFO lines (two per task and state change, each with the task's full parameter repr:
60 of the quick start's 114 lines, 30 of them 273-695 characters long) are held back unless
``MLP_VERBOSE`` is set; its warnings and errors are shown as always.
"""

from __future__ import annotations

import collections
import logging
import sys
from typing import Any

# one rule for MLP_VERBOSE, read by law run here and by the measurement children
from mlprof.measure.quiet import verbose

#: the task ids whose :meth:`run_summary` ``law run`` prints at its end (its root tasks)
_summarized: set[str] = set()


def listed_at_end(task: Any) -> bool:
    """Whether ``law run`` prints ``task``'s summary (with its output paths) at its end: its
    ``plot: <path>`` line while it runs would be the same path twice (the quick start printed
    it twice). A plot that is not a root task (a Nightly's) still says where it went, and with
    ``MLP_VERBOSE`` every plot does."""
    return not verbose() and getattr(task, "task_id", None) in _summarized


def outcome_line(result: Any) -> str | None:
    """luigi's execution summary in one line: how many tasks ran, were complete already,
    failed or could not run, and luigi's verdict (":)" or ":(" and why)."""
    from luigi.execution_summary import _summary_dict

    worker = getattr(result, "worker", None)
    status = getattr(result, "status", None)
    if worker is None or status is None:
        return None
    sets = _summary_dict(worker)
    parts = [f"{len(sets['completed'])} ran", f"{len(sets['already_done'])} complete already"]
    failed = sets["failed"] | sets["scheduling_error"]
    if failed:
        kinds = collections.Counter(t.task_family for t in failed)
        parts.append(f"{len(failed)} failed ("
                     + ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(kinds.items()))
                     + ")")
    blocked = (sets["upstream_failure"] | sets["upstream_missing_dependency"]
               | sets["upstream_scheduling_error"] | sets["not_run"])
    if blocked:
        parts.append(f"{len(blocked)} not run because of that")
    missing = sets["still_pending_ext"]
    if missing:
        parts.append(f"{len(missing)} missing input(s)")
    smiley, why = status.value
    return f"luigi: {', '.join(parts)} {smiley} {why}"


def install_run_summary() -> None:
    """Print the requested tasks' summaries after luigi's run, under ``law run`` only.

    luigi offers no hook after a run whose tasks were all complete (no task event fires), so
    this wraps ``luigi.interface._schedule_and_run``, the one function every ``law run`` goes
    through with its root tasks; the Python API (``luigi.build``) stays quiet.
    """
    import luigi.interface as li

    original = li._schedule_and_run
    if getattr(original, "_mlprof", False):
        return

    def schedule_and_run(tasks, *args, **kwargs):
        under_law_run = bool(sys.argv) and sys.argv[0].endswith(" run")
        log = logging.getLogger("luigi-interface")
        level = log.level
        if under_law_run and not verbose():
            log.setLevel(logging.WARNING)
        if under_law_run:
            _summarized.update(t.task_id for t in tasks if getattr(t, "run_summary", None))
        try:
            result = original(tasks, *args, **kwargs)
        finally:
            log.setLevel(level)
        if under_law_run:
            if not verbose():
                line = outcome_line(result)
                if line:
                    print(line, flush=True)
            for task in tasks:
                summary = getattr(task, "run_summary", None)
                text = summary() if summary else None
                if text:
                    print(text, flush=True)
        return result

    schedule_and_run._mlprof = True  # type: ignore[attr-defined]
    li._schedule_and_run = schedule_and_run


def with_outputs(table: str, task: Any) -> str:
    """A summary table followed by the task's output paths (what ``law run`` prints at its
    end for a plot made of a table)."""
    return table + "\noutputs:\n" + "\n".join(f"  {t.path}" for t in task.output().values())
