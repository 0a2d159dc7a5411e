"""One series across a runtime upgrade or a model edit (issue 20): the history continues, the
change is an event on it, an alert that coincides with it names it, and PlotHistory and the
dashboard mark it.

The nights are copies of one real sweep (``measured``), their samples scaled: six steady
nights on one runtime version (or model content), a seventh and its confirmation 30 % slower
on another.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.plotting.history import EVENT_LABEL, figure_info, plot_history
from mlprof.report import collect, to_frame
from mlprof.report.history import alerts_table, history_groups
from mlprof.results import identity
from tests.test_history_plots import STEADY, copy_night, measured  # noqa: F401 (fixture)

NEW_VERSION = "9.99.0"
NEW_HASH = "abcdef01"


OLD_MODE, NEW_MODE = "jit (torch.compile)", "aot (torch.export + AOTInductor package)"


def _rewrite(directory: Path, *, runtime_version: str | None = None,
             model_hash: str | None = None, compile_mode: str | None = None) -> None:
    for js in directory.glob("runtime_bs_*.json"):
        prov = json.loads(js.read_text())
        if compile_mode:  # as a compiling runtime records it (mlprof.runtimes.torch)
            prov.setdefault("runtime_settings", {})["compile"] = {"mode": compile_mode}
        if runtime_version:
            prov["runtime_version"] = runtime_version
        if model_hash and isinstance(prov.get("model_identity"), dict):
            prov["model_identity"]["hash"] = model_hash
        js.write_text(json.dumps(prov))


def make_store(store: Path, measured: Path, change: str) -> tuple[str, str]:  # noqa: F811
    """Six nights as measured, n7 and n7.confirm 1.3x slower after ``change`` (``runtime``:
    another runtime version; ``model``: another model content; ``compile``: the same runtime
    version and model, compiled another way). Returns the old and new runtime segment or
    model segment (the compile modes for ``compile``)."""
    settings = measured.parent
    runtime_dir, model_dir = settings.parent, settings.parent.parent
    old_rt, old_model = runtime_dir.name, model_dir.name
    base = store / measured.relative_to(measured.parents[4]).parent
    for i, s in enumerate(STEADY):
        copy_night(measured, base / f"n{i + 1}", f"n{i + 1}",
                   f"2000-01-0{i + 1}T00:00:00+00:00", lambda bs, s=s: s)
        if change == "compile":
            _rewrite(base / f"n{i + 1}", compile_mode=OLD_MODE)
    if change == "compile":
        new_base, old, new = base, OLD_MODE, NEW_MODE
    elif change == "runtime":
        rt_name = old_rt.split("-", 1)[0]
        new_rt = f"{rt_name}-{NEW_VERSION}__{old_rt.rsplit('__', 1)[1]}"
        new_base = store / "MeasureRuntime" / old_model / new_rt / settings.name
        new, old = new_rt, old_rt
    else:
        new_model = f"{old_model.rsplit('__', 1)[0]}__{NEW_HASH}"
        new_base = store / "MeasureRuntime" / new_model / old_rt / settings.name
        new, old = new_model, old_model
    for v, ts in (("n7", "2000-01-07T00:00:00+00:00"),
                  ("n7.confirm", "2000-01-07T01:00:00+00:00")):
        copy_night(measured, new_base / v, v, ts, lambda bs: 1.3)
        _rewrite(new_base / v, runtime_version=NEW_VERSION if change == "runtime" else None,
                 model_hash=NEW_HASH if change == "model" else None,
                 compile_mode=NEW_MODE if change == "compile" else None)
    return old, new


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
@pytest.mark.parametrize("change", ["runtime", "model", "compile"])
def test_an_upgrade_or_edit_continues_the_series_and_the_alert_names_it(
        change: str, tmp_path: Path, measured: Path) -> None:  # noqa: F811
    store = tmp_path / "nights"
    old, new = make_store(store, measured, change)
    report = to_frame(collect([store]))
    assert set(report["status"]) == {"ok"}
    old_version = json.loads(next(measured.glob("runtime_bs_1.json")).read_text())[
        "runtime_version"]
    # one series per batch size across the change: 8 points each
    keys = {identity.key_of(r) for r in identity.assign(report).to_dict("records")}
    assert len(keys) == report["batch_size"].nunique()

    alerts = alerts_table(report)
    regressions = alerts[alerts["kind"] == "regression"]
    assert len(regressions) >= 1, alerts
    expected = {"runtime": f"onnxruntime {old_version} -> {NEW_VERSION}",
                "model": f"model changed ({old.rsplit('__', 1)[-1]} -> {NEW_HASH})",
                "compile": f"onnxruntime compiled by {old} -> {new}"}[change]
    assert set(regressions["event"]) == {expected}
    assert set(regressions["first_version"]) == {"n7"}

    # PlotHistory's figure: a dashed event line in every panel, named, in the legend
    groups = history_groups(report, alerts.to_dict("records"))
    (g, lines, marks), = groups
    assert g["events"] == [("n7", expected)]
    fig = plot_history(lines, alerts=marks, events=g["events"])
    assert EVENT_LABEL in figure_info(fig)["legend"]
    for ax in fig.axes:
        if ax.lines:
            ev = [ln for ln in ax.lines if ln.get_gid() == "event"]
            assert len(ev) == 1 and set(ev[0].get_xdata()) == {5.5}  # before n7 (x = 6)
            assert expected in [t.get_text() for t in ax.texts]
    # the same through law run PlotHistory: the alerts file names the event
    from tests.helpers import law_run

    proc = law_run("PlotHistory", "--version", "h1", "--stores", str(store),
                   store=tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    import pandas as pd

    (csv,) = (tmp_path / "out").rglob("alerts_median_ms.csv")
    assert set(pd.read_csv(csv)["event"].dropna()) == {expected}


@pytest.mark.parametrize("change", ["runtime", "model"])
def test_the_dashboard_marks_the_upgrade_or_edit(change: str, tmp_path: Path,
                                                 measured: Path) -> None:  # noqa: F811
    from mlprof.report.site import build_dashboard, current_results

    store = tmp_path / "nights"
    make_store(store, measured, change)
    report = to_frame(collect([store]))
    out = tmp_path / "site"
    build_dashboard(report, out, current_versions=["n7", "n7.confirm"], plots=False)
    index = (out / "index.html").read_text()
    # the alert rows name the upgrade or edit
    assert (f"-&gt; {NEW_VERSION}" if change == "runtime" else f"-&gt; {NEW_HASH})") in index
    pages = [p.read_text() for p in (out / "models").glob("*.html")]
    assert len(pages) == 1, "one model page across the change"
    assert pages[0].count('class="event"') == report["batch_size"].nunique()
    # the current results are the new version's or content's only (the old is history now)
    column, new = ("runtime_version", NEW_VERSION) if change == "runtime" else \
        ("model_hash", NEW_HASH)
    assert set(current_results(report, ["n7", "n7.confirm"])[column]) == {new}
    assert set(current_results(report)[column]) == {new}


def test_versions_measured_side_by_side_stay_apart(tmp_path: Path,
                                                   measured: Path) -> None:  # noqa: F811
    """--runtime-versions measures two versions in one run: a comparison, not a history."""
    store = tmp_path / "nights"
    make_store(store, measured, "runtime")
    # the old version measured again in n7, beside the new one
    settings = store / measured.relative_to(measured.parents[4]).parent
    copy_night(measured, settings / "n7", "n7", "2000-01-07T00:30:00+00:00", lambda bs: 1.0)
    report = to_frame(collect([store]))
    assigned = identity.assign(report)
    assert set(assigned["variant"]) == {f"runtime_version={v}" for v in
                                        set(report["runtime_version"])}
    alerts = alerts_table(report)
    assert alerts.empty or not alerts["event"].astype(bool).any()
