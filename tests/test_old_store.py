"""A store written before the results package (mlprof at aa9a969, every task family) reads as it
did: ``mlprof store list``, the Report, PlotHistory and the Dashboard give the rows that the old
code gave (issue 20). ``fixtures/store_v0`` is that store, ``fixtures/store_v0_expected`` what
the old code read from it (see its README.md); paths there are relative to the store root.

The new code may add columns (``label``, ``events_per_call``, ``event``, ``variant``,
``model_file`` in the series key); only the old ones are compared. Intended differences are
asserted as such: the series key no longer holds ``runtime_version`` and ``model_hash`` (they
are properties of each point), and a model script measured through its export is labelled by the
model's name, not by the export's ``model`` (the old dashboard titled its page "model").
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mlprof.cli import main
from mlprof.measure.trust import CV_UNSTABLE
from mlprof.report import collect, to_frame
from mlprof.report.history import alerts_table, history_groups
from mlprof.report.site import build_dashboard, current_results
from mlprof.results.store import scan
from tests.helpers import law_run

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OLD_STORE = FIXTURES / "store_v0"
EXPECTED = FIXTURES / "store_v0_expected"

#: the nights of the fixture's nightly; the last one (and its confirmation) alerted
NIGHT4 = ["nightly-2026-01-04", "nightly-2026-01-04.confirm"]
CURRENT = {"latest": None, "night4": NIGHT4}

#: the model script's name; its old label was the export's, "model"
SCRIPT = "linear-ee07f9c5"
#: labels by model as the new code gives them (old: the script's was "model")
LABELS = {"dnn_l10u128": "DNN 10x128", SCRIPT: SCRIPT}
OLD_LABELS = {"dnn_l10u128": "DNN 10x128", SCRIPT: "model"}

#: a result, as the old Report told them apart (plus the host)
ROW_KEY = ["model", "runtime", "runtime_version", "settings_key", "version", "batch_size",
           "host"]

#: what the old alerts held that every alert still has (the rest may be there too)
ALERT_COLUMNS = ["model", "runtime", "device", "host", "cpu_model", "threads", "settings_key",
                 "batch_size", "statistic", "kind", "test", "version", "first_version",
                 "value", "baseline", "change", "z"]


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA or (
        isinstance(x, str) and x == "")


def same(a, b, rel: float = 1e-9) -> bool:
    """Equal as the old CSV or JSON has it: missing ("" or NaN) alike, numbers within ``rel``,
    anything else as text."""
    if _missing(a) and _missing(b):
        return True
    if str(a) == str(b):
        return True
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return math.isclose(fa, fb, rel_tol=rel, abs_tol=0.0)


def _rel(path, root: Path):
    if isinstance(path, str) and os.path.isabs(path) and Path(path).is_relative_to(root):
        return os.path.relpath(path, root)
    return path


def _old_csv(name: str) -> pd.DataFrame:
    return pd.read_csv(EXPECTED / name, keep_default_na=False, na_values=[""])


def _keyed(df: pd.DataFrame, key: list[str]) -> dict[tuple, dict]:
    out: dict[tuple, dict] = {}
    for r in df.to_dict("records"):
        k = tuple(str(r[c]) for c in key)
        assert k not in out, f"two rows for {k}"
        out[k] = r
    return out


def assert_same_rows(old: pd.DataFrame, new: pd.DataFrame, key: list[str], what: str,
                     skip: tuple[str, ...] = ()) -> None:
    """Every old row is a new row (by ``key``) with the same values in every old column."""
    missing_cols = [c for c in old.columns if c not in new.columns and c not in skip]
    assert not missing_cols, f"{what}: columns gone: {missing_cols}"
    o, n = _keyed(old, key), _keyed(new, key)
    assert sorted(o) == sorted(n), f"{what}: rows differ: old only {sorted(set(o) - set(n))}, " \
                                   f"new only {sorted(set(n) - set(o))}"
    diffs = [(k, c, o[k][c], n[k][c]) for k in o for c in old.columns
             if c not in skip and not same(o[k][c], n[k][c])]
    assert not diffs, f"{what}: {len(diffs)} value(s) differ, e.g. {diffs[:5]}"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A copy of the old store somewhere else: nothing may depend on where it was written."""
    dst = tmp_path_factory.mktemp("old") / "store"
    shutil.copytree(OLD_STORE, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def report(store: Path) -> pd.DataFrame:
    return to_frame(collect([store]))


def _store_list() -> dict:
    with open(EXPECTED / "store_list.json") as f:
        return json.load(f)


# -- mlprof store list -------------------------------------------------------------------------

ENTRY_FIELDS = ["task", "path", "model", "model_segment", "model_hash", "models", "runtime",
                "runtimes", "runtime_version", "device", "settings", "version", "status",
                "n_files", "failures"]


def test_the_fixture_holds_every_task_family():
    tasks = {e["task"] for e in _store_list()["entries"]}
    assert tasks == {
        "DiscoverModels", "ExportOnnx", "MeasureRuntime", "MergeRuntimes", "PlotRuntimes",
        "PlotMultiRuntimes", "PlotThroughput", "PlotSpeedup", "CompareInterleaved",
        "ProfileRuntime", "PlotProfile", "MeasurePeak", "Report", "PlotHistory", "Dashboard",
        "RunExperiment", "ConfirmResults", "Nightly"}
    assert {e["status"] for e in _store_list()["entries"]} == {"ok"}


def test_scan_gives_the_old_entries(store: Path):
    old = {e["path"]: e for e in _store_list()["entries"]}
    new = {os.path.relpath(e.path, store): e.to_dict() for e in scan(store).entries}
    assert sorted(new) == sorted(old)
    diffs = [(p, f, old[p].get(f), new[p].get(f)) for p in old for f in ENTRY_FIELDS
             if f != "path" and old[p].get(f) != new[p].get(f)]
    assert not diffs, diffs[:10]


def test_store_list_json_gives_the_old_rows(store: Path, capsys):
    assert main(["store", "list", "--store", str(store), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    expected = _store_list()
    assert {k: v for k, v in listing["totals"].items() if k != "size"} == expected["totals"]
    new = sorted(([_rel(e[f], store) if f == "path" else e.get(f) for f in ENTRY_FIELDS]
                  for e in listing["entries"]), key=str)
    old = sorted(([e.get(f) for f in ENTRY_FIELDS] for e in expected["entries"]), key=str)
    assert new == old


# -- Report ------------------------------------------------------------------------------------


def test_report_rows_are_the_old_rows(store: Path, report: pd.DataFrame):
    old = _old_csv("report.csv")
    assert len(report) == len(old) == 23
    new = report.copy()
    for c in ("store", "path"):
        new[c] = new[c].map(lambda p: _rel(p, store))
    assert_same_rows(old, new, ROW_KEY, "report")
    # added: the label, from the model the user named (the script's is its name now)
    assert dict(zip(new["model"], new["label"], strict=True)) == LABELS
    # every model of the fixture has a batch dimension: an event per batch entry
    assert (new["events_per_call"].astype(int) == new["batch_size"].astype(int)).all()


def test_the_report_does_not_need_the_old_model_files(report: pd.DataFrame):
    """The records name files of the checkout they were measured in (/work/wt-old/...): read
    as recorded, never opened."""
    files = {str(f).split("::")[0] for f in report["model_file"]}
    assert all(f.startswith("/work/wt-old/") for f in files), files
    assert (report["status"] == "ok").all()


# -- PlotHistory -------------------------------------------------------------------------------


def test_history_alerts_are_the_old_alerts(report: pd.DataFrame):
    old = _old_csv("history_alerts.csv")
    new = alerts_table(report, "median_ms")
    assert len(old) == len(new) == 1
    common = [c for c in old.columns if c in new.columns]
    assert set(ALERT_COLUMNS) <= set(common)
    assert_same_rows(old[common], new[common], ["model", "runtime", "batch_size", "version"],
                     "alerts")
    # intended: runtime version and model hash are properties of the points, not of the series;
    # nothing changed along this one, so no event is named
    if "event" in new:
        assert new["event"].map(_missing).all(), new["event"].tolist()


def test_history_groups_are_the_old_groups(report: pd.DataFrame):
    with open(EXPECTED / "history_groups.json") as f:
        old = json.load(f)
    alerts = alerts_table(report, "median_ms").to_dict("records")
    new = history_groups(report, alerts, "median_ms")
    assert len(new) == len(old) == 3

    def key(cfg):
        return (cfg["model"], cfg["runtime"], cfg["settings_key"])

    new_by = {key(g): (g, lines, marks) for g, lines, marks in new}
    assert sorted(new_by) == sorted(key(g["config"]) for g in old)
    for g in old:
        cfg, lines, marks = new_by[key(g["config"])]
        for c, v in g["config"].items():
            if c in cfg:  # model_hash left the key
                assert same(v, cfg[c]), (c, v, cfg[c])
        assert sorted(lines) == sorted(g["lines"])
        for label, line in g["lines"].items():
            versions, values = lines[label][0], lines[label][1]
            assert list(map(str, versions)) == line["versions"], label
            assert all(same(a, b) for a, b in zip(line["values"], values, strict=True)), label
        assert sorted(tuple(map(str, m[:3])) for m in marks) == sorted(map(tuple, g["marks"]))


# -- Dashboard ---------------------------------------------------------------------------------


def _dashboard_expected() -> dict:
    with open(EXPECTED / "dashboard.json") as f:
        return json.load(f)


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_dashboard_current_results_are_the_old_rows(name: str, store: Path,
                                                    report: pd.DataFrame):
    old = _old_csv(f"dashboard_current_{name}.csv")
    new = current_results(report, CURRENT[name])
    for c in ("store", "path"):
        new[c] = new[c].map(lambda p: _rel(p, store))
    assert_same_rows(old, new, ["model", "runtime", "runtime_version", "settings_key",
                                "batch_size"], f"current results ({name})")


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_dashboard_builds_with_the_old_rows_and_pages(name: str, store: Path,
                                                      report: pd.DataFrame, tmp_path: Path):
    expected = _dashboard_expected()[name]
    summary = build_dashboard(report, tmp_path, current_versions=CURRENT[name])
    for k in ("results", "failures", "failure_groups", "regressions", "improvements",
              "new_regressions", "new_improvements", "pages"):
        assert summary[k] == expected["summary"][k], k
    # the counts: each flag on its own since issue 36 (the old card counted a row both
    # unstable and contended as contended only): the old counts plus those rows as unstable
    rows = pd.read_csv(tmp_path / "results.csv", keep_default_na=False, na_values=[""])
    both = int(((rows["status"] == "contended") & (rows["cv"] > CV_UNSTABLE)).sum())
    old_counts = expected["summary"]["counts"]
    assert summary["counts"] == {**old_counts, "unstable": old_counts["unstable"] + both}
    assert both >= 1  # the fixture has such a row: the test could fail
    for page in summary["pages"]:
        assert (tmp_path / page).is_file(), page
    # results.csv: the old rows and columns; the script's label is its name now (was "model")
    old = _old_csv(f"dashboard_results_{name}.csv")
    new = pd.read_csv(tmp_path / "results.csv", keep_default_na=False, na_values=[""])
    assert_same_rows(old, new, ["model", "runtime", "runtime_version", "settings_key",
                                "batch_size"], f"results.csv ({name})", skip=("label",))
    assert dict(zip(old["model"], old["label"], strict=True)) == OLD_LABELS
    assert dict(zip(new["model"], new["label"], strict=True)) == LABELS
    # the alerts, on the old columns that remain
    assert len(summary["alerts"]) == len(expected["alerts"]) == 1
    for a_old, a_new in zip(expected["alerts"], summary["alerts"], strict=True):
        diffs = {c: (v, a_new[c]) for c, v in a_old.items() if c in a_new
                 and not same(v, a_new[c])}
        assert not diffs, diffs
    # page titles and the index's links to the model pages: the same but for the script,
    # which the old dashboard called "model" (issue 20), and the new one by its name
    titles = {p: re.search(r"<title>(.*?)</title>", (tmp_path / p).read_text()).group(1)
              for p in summary["pages"]}
    script_page = f"models/{SCRIPT}__0d847216.html"
    assert expected["page_titles"][script_page] == "model"
    assert titles == {**expected["page_titles"], script_page: SCRIPT}
    index = (tmp_path / "index.html").read_text()
    links = {tuple(x) for x in re.findall(
        r'<a href="(models/[^"#]+)(?:#[^"]*)?">([^<]*)</a>', index)}
    old_links = {tuple(x) for x in expected["index_model_links"]}
    assert (script_page, "model") in old_links
    assert links == old_links - {(script_page, "model")}
    assert "model" not in {text for _, text in links}


# -- the tasks themselves ----------------------------------------------------------------------


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_report_history_and_dashboard_tasks_read_the_old_store(store: Path, tmp_path: Path):
    """``law run`` Report, PlotHistory and Dashboard over the old store (into another store)."""
    out = tmp_path / "new-store"
    for task in ("Report", "PlotHistory", "Dashboard"):
        proc = law_run(task, "--version", "new", "--stores", str(store), store=out)
        assert proc.returncode == 0, task + proc.stdout[-3000:] + proc.stderr[-3000:]
    (report_csv,) = out.glob("Report/*/new/report.csv")
    assert len(pd.read_csv(report_csv)) == len(_old_csv("report.csv"))
    (alerts_csv,) = out.glob("PlotHistory/*/new/alerts_median_ms.csv")
    old, new = _old_csv("history_alerts.csv"), pd.read_csv(alerts_csv, keep_default_na=False,
                                                           na_values=[""])
    common = [c for c in old.columns if c in new.columns]
    assert_same_rows(old[common], new[common], ["model", "runtime", "batch_size", "version"],
                     "PlotHistory's alerts")
    plots = list(out.glob("PlotHistory/*/new/history_median_ms/*.png"))
    assert len(plots) == 2  # the two configurations with two nights (torch has one)
    (site,) = out.glob("Dashboard/*/*/new/dashboard")
    assert (site / "index.html").is_file()
    assert sorted(p.name for p in (site / "models").glob("*.html")) == [
        "dnn_l10u128__bb7860fc.html", f"{SCRIPT}__0d847216.html"]
