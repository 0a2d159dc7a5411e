"""What ``law run`` prints when it is done: each requested task's :meth:`run_summary` (a table
of the medians and the output paths), also when nothing had to run."""

from __future__ import annotations

import sys


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
        result = original(tasks, *args, **kwargs)
        if sys.argv and sys.argv[0].endswith(" run"):
            for task in tasks:
                summary = getattr(task, "run_summary", None)
                text = summary() if summary else None
                if text:
                    print(text, flush=True)
        return result

    schedule_and_run._mlprof = True  # type: ignore[attr-defined]
    li._schedule_and_run = schedule_and_run
