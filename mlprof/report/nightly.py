"""What a nightly run records and says: experiment statuses, confirmation candidates and the
summary of new regressions (pure functions over files and DataFrames; the tasks wire them)."""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from typing import Any

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.ingest import printable
from mlprof.results.layout import CONFIRM_SUFFIX  # the suffix of a confirming version

#: the statuses of an experiment, as counted in the summary
STATUSES = ("ok", "partial", "failed", "inactive")

#: exit code of ``law run Nightly --fail-on-regression`` when the night found a new regression
#: or an experiment that failed (or partly failed); apart from luigi's own codes (10-40, see
#: ``[luigi_retcode]`` in law.cfg), so that cron and CI can tell "the night found something"
#: from "mlprof could not run"
EXIT_NIGHT_FAILED = 50

#: the experiment statuses that fail a night under ``--fail-on-regression``
FAILING_STATUSES = ("failed", "partial")


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def confirm_version(version: str) -> str:
    """The version of the confirming re-measurements of ``version``."""
    return f"{version}{CONFIRM_SUFFIX}"


#: the longest version the store takes (a path segment: :func:`mlprof.results.layout.
#: check_segment`; a test keeps the two equal)
VERSION_MAX_CHARS = 200


def check_version_room(version: str, max_chars: int = VERSION_MAX_CHARS) -> None:
    """Refuse a Nightly ``--version`` too long for its confirming version
    (``<version>.confirm``), in one line naming ``--version``.

    Checked when the Nightly starts: otherwise a version of 193-200 characters measures every
    experiment and then fails the night at the first result that needs confirming.
    """
    room = max_chars - len(CONFIRM_SUFFIX)
    if len(str(version)) > room:
        raise MLProfError(f"must be at most {room} characters for a Nightly, got "
                          f"{len(str(version))}: suspicious results are measured again under "
                          f"'<version>{CONFIRM_SUFFIX}', and a version has at most {max_chars}",
                          field="--version")


def experiment_status(file: str, version: str, exp: Any = None, error: str | None = None
                      ) -> dict:
    """The start of an experiment's ``status.json``: what it is (or why it could not be read)."""
    name = os.path.splitext(os.path.basename(file))[0]
    status: dict = {"file": file, "version": version, "name": name, "started": now()}
    if exp is None:
        status.update(title=name, status="failed", errors=[error or "unreadable"], results="")
    else:
        status.update(title=exp.title, description=exp.description, priority=exp.priority,
                      model_files=list(exp.model_files), runtimes=list(exp.runtimes),
                      batch_sizes=list(exp.batch_sizes), settings=exp.settings,
                      reference_runtime=exp.reference_runtime, notify=list(exp.notify))
    return status


def finish_status(status: dict, n_files: int, outcomes: Sequence[tuple[str, bool, str]],
                  errors: Sequence[str], plots: Sequence[str], started: float,
                  finished: float, skipped: Sequence[str] = ()) -> dict:
    """Complete ``status`` from the outcome of each model file (name, complete, reason) plus
    the errors of model files that could not even be set up. ``skipped`` are the (model file,
    runtime) pairs left out because the runtime does not measure that kind of model: recorded,
    never an error."""
    errors = list(errors) + [f"{name}: {reason}" for name, ok, reason in outcomes if not ok]
    n_ok = sum(1 for _, ok, _ in outcomes if ok)
    status.update(status="ok" if not errors else "partial" if n_ok else "failed",
                  errors=errors, results=f"{n_ok}/{n_files} model file(s) complete",
                  plots=list(plots), skipped=list(skipped))
    status.update(finished=now(), duration_s=round(finished - started, 2))
    return status


def status_line(status: Mapping[str, Any]) -> str:
    """``<title>: <status> (<errors>)``."""
    errors = status.get("errors") or []
    line = f"{status['title']}: {status['status']}" + (f" ({'; '.join(errors)})" if errors
                                                        else "")
    return terminal_text(line)


def utf8_safe(value: Any) -> Any:
    """``value`` (a status: dicts, lists, strings) with every lone surrogate written as
    ``\\udcff``: an experiment file whose name is not UTF-8 (``bad\\xff.yaml``) stopped the
    dashboard's HTML writer, and with it the night."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {utf8_safe(k): utf8_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_safe(v) for v in value]
    return value


def terminal_text(text: str) -> str:
    """``text`` safe for a terminal and any UTF-8 writer: control and bidi characters escaped
    (:func:`mlprof.ingest.printable`), lone surrogates (a file name that is not UTF-8) as
    ``\\udcff``; a title or a file name must not rewrite the terminal or stop the night."""
    return printable(text).encode("utf-8", "backslashreplace").decode("utf-8")


def inactive_status(path: str, exp: Any) -> dict:
    """The status of an inactive experiment (listed, never run)."""
    return {"name": exp.name, "file": path, "title": exp.title, "description": exp.description,
            "status": "inactive", "errors": [], "results": ""}


def rerun_params(candidate: Mapping[str, Any], version: str) -> dict | None:
    """The MeasureRuntime parameters that measure ``candidate`` once more under ``version``
    (None when its provenance does not record them)."""
    try:
        params = dict(ingest.load_json(candidate["path"])["task"]["params"])
    except (MLProfError, KeyError, ValueError, TypeError):
        return None
    params.pop("branch", None)
    # a report with one unreadable batch size (a failure record's ``abc``) holds the column as
    # floats: ``str(1.0)`` stopped the confirmation with luigi's ``int('1.0')``
    try:
        size = float(candidate["batch_size"])
    except (KeyError, TypeError, ValueError):
        return None
    if not size.is_integer():
        return None
    params.update(version=version, batch_sizes=str(int(size)))
    return params


def nightly_summary(version: str, statuses: list[dict], confirmed: list[dict], alerts,
                    dashboard_index: str) -> dict:
    """``nightly.json``: statuses, counts, confirmations and the regressions and improvements
    that are new in ``version`` (or its confirmation)."""
    current = (version, confirm_version(version))
    new = alerts[alerts["version"].isin(current) | alerts["first_version"].isin(current)]
    return {
        "version": version, "experiments": statuses,
        "counts": {s: sum(1 for e in statuses if e["status"] == s) for s in STATUSES},
        "confirmations": len(confirmed), "candidates": confirmed,
        "new_regressions": new[new["kind"] == "regression"].to_dict("records"),
        "new_improvements": new[new["kind"] == "improvement"].to_dict("records"),
        "dashboard": dashboard_index,
    }


def alert_phrase(r: Mapping[str, Any]) -> str:
    """``linear onnxruntime bs 8 +30% (onnxruntime 1.31.1 -> 1.32.0)``: an alert, with the
    runtime upgrade or model edit it coincides with."""
    event = r.get("event")
    return (f"{r['model']} {r['runtime']} bs {r['batch_size']} {100 * r['change']:+.0f}%"
            + (f" ({event})" if isinstance(event, str) and event else ""))


def summary_line(summary: Mapping[str, Any]) -> str:
    """The one line a nightly run prints and sends."""
    counts = summary["counts"]
    regs = ", ".join(alert_phrase(r) for r in summary["new_regressions"])
    return (f"nightly {summary['version']}: experiments {counts['ok']} ok, {counts['partial']} "
            f"partial, {counts['failed']} failed; {len(summary['new_regressions'])} new "
            f"regression(s){': ' + regs if regs else ''}; "
            f"{len(summary['new_improvements'])} improvement(s); dashboard: "
            f"file://{summary['dashboard']}")


def failing_reasons(summary: Mapping[str, Any]) -> list[str]:
    """Why a night fails under ``--fail-on-regression`` (empty: it does not): its new confirmed
    regressions and its failed or partial experiments, each as a short phrase. Improvements
    and inactive experiments never fail a night."""
    reasons = []
    regs = summary.get("new_regressions") or []
    if regs:
        reasons.append(f"{len(regs)} new regression(s): " + ", ".join(
            alert_phrase(r) for r in regs))
    bad = [e for e in summary.get("experiments") or [] if e.get("status") in FAILING_STATUSES]
    if bad:
        reasons.append(f"{len(bad)} failed or partial experiment(s): " + ", ".join(
            f"{e.get('name') or e.get('title')} ({e['status']})" for e in bad))
    return reasons


def failing_line(summary: Mapping[str, Any]) -> str | None:
    """The one line ``--fail-on-regression`` prints before exiting with
    :data:`EXIT_NIGHT_FAILED` (None: the night passes)."""
    reasons = failing_reasons(summary)
    if not reasons:
        return None
    return (f"nightly {summary['version']} fails (--fail-on-regression, exit code "
            f"{EXIT_NIGHT_FAILED}): {'; '.join(reasons)}")
