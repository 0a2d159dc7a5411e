"""A store written by main before issue 35 (mlprof at 9783a38, record format 1) reads as it did:
``mlprof store list``, the Report's rows, statuses and medians, its load points' answers, the
ComparePrecisions rows' speed-ups and errors, PlotHistory and the Dashboard give what that code
gave. ``fixtures/store_v1`` is that store, ``fixtures/store_v1_expected`` what the code read
from it (see its README.md); paths there are relative to the store root.

Only the columns and fields that the recorded expectation has are compared (later code may add
some); none of them may go. Numbers agree within a relative 1e-9, text exactly. Only public
entry points are used (the report functions, the ``mlprof`` command, ``law run``), so that the
test outlives the modules behind them.
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
from mlprof.report import collect, to_frame
from mlprof.report.collect import collect_loads, collect_precisions
from mlprof.report.history import alerts_table, history_groups
from mlprof.report.load import load_frame, load_history_groups
from mlprof.report.site import build_dashboard, current_results
from tests.helpers import law_run

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OLD_STORE = FIXTURES / "store_v1"
EXPECTED = FIXTURES / "store_v1_expected"

#: a result, as the Report tells them apart (plus the host)
ROW_KEY = ["model", "runtime", "runtime_version", "settings_key", "version", "batch_size",
           "host"]
#: a load point of a version (Report's load.csv)
LOAD_KEY = ["model", "runtime", "settings_key", "version", "point"]
#: a row of a ComparePrecisions table
PRECISION_KEY = ["model", "runtime", "settings_key", "version", "batch_size", "precision"]
#: a current result of the dashboard
CURRENT_KEY = ["model", "runtime", "runtime_version", "settings_key", "batch_size"]


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA or (
        isinstance(x, str) and x == "")


def same(a, b, rel: float = 1e-9) -> bool:
    """Equal as the recorded CSV or JSON has it: missing ("" or NaN) alike, numbers within
    ``rel``, anything else as text."""
    if _missing(a) and _missing(b):
        return True
    if str(a) == str(b):
        return True
    if isinstance(a, str) and isinstance(b, str):
        return False  # text is compared as text ("1.0" and "1" are not the same text)
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return math.isclose(fa, fb, rel_tol=rel, abs_tol=0.0)


def _rel(path, root: Path):
    if isinstance(path, str) and os.path.isabs(path) and Path(path).is_relative_to(root):
        return os.path.relpath(path, root)
    return path


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


#: columns renamed since the fixture was written, on purpose: the load's bound has one name
#: from the option to the report (issue 35; format 1 records wrote ``bound_ms``)
RENAMED = {"load.csv": {"bound_ms": "latency_bound_ms"}}


def _expected_csv(name: str) -> pd.DataFrame:
    return _csv(EXPECTED / name).rename(columns=RENAMED.get(name, {}))


def _expected_json(name: str):
    with open(EXPECTED / name) as f:
        return json.load(f)


def _keyed(rows: list[dict], key: list[str]) -> dict[tuple, dict]:
    out: dict[tuple, dict] = {}
    for r in rows:
        k = tuple("" if _missing(r.get(c)) else str(r.get(c)) for c in key)
        assert k not in out, f"two rows for {k}"
        out[k] = r
    return out


def assert_same_rows(old: list[dict], new: list[dict], key: list[str], what: str,
                     skip: tuple[str, ...] = ()) -> None:
    """Every recorded row is a new row (by ``key``) with the same value in every recorded
    column (or field); no recorded column is gone and no row is added or lost."""
    cols = sorted({c for r in old for c in r} - set(skip))
    gone = sorted({c for c in cols if not any(c in r for r in new)}) if new else []
    assert not gone, f"{what}: columns gone: {gone}"
    o, n = _keyed(old, key), _keyed(new, key)
    assert sorted(o) == sorted(n), f"{what}: rows differ: recorded only " \
                                   f"{sorted(set(o) - set(n))}, new only {sorted(set(n) - set(o))}"
    diffs = [(k, c, o[k].get(c), n[k].get(c)) for k in o for c in cols
             if not same(o[k].get(c), n[k].get(c))]
    assert not diffs, f"{what}: {len(diffs)} value(s) differ, e.g. {diffs[:5]}"


def _records(df: pd.DataFrame, root: Path | None = None) -> list[dict]:
    rows = df.to_dict("records")
    if root is not None:
        for r in rows:
            for c in ("store", "path"):
                if c in r:
                    r[c] = _rel(r[c], root)
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A copy of the store somewhere else: nothing may depend on where it was written, and
    nothing may write into the fixture."""
    dst = tmp_path_factory.mktemp("v1") / "store"
    shutil.copytree(OLD_STORE, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def report(store: Path) -> pd.DataFrame:
    return to_frame(collect([store]))


@pytest.fixture(scope="module")
def loads(store: Path) -> list[dict]:
    return collect_loads([store])


@pytest.fixture(scope="module")
def precisions(store: Path) -> list[dict]:
    return collect_precisions([store])


# -- mlprof store list -------------------------------------------------------------------------


def test_the_fixture_holds_what_store_v0_lacks():
    entries = _expected_json("store_list.json")["entries"]
    tasks = {e["task"] for e in entries}
    assert {"ComparePrecisions", "QuantizeModel", "MeasureLoad", "PlotLoad", "CompareInterleaved",
            "ProfileRuntime", "PlotProfile", "MeasurePeak", "MeasureRuntime", "MergeRuntimes",
            "PlotRuntimes", "DiscoverModels", "ExportOnnx", "Report", "PlotHistory",
            "Dashboard"} <= tasks
    status = {e["path"]: e["status"] for e in entries}
    assert {p: s for p, s in status.items() if s != "ok"} == {
        "ExportOnnx/unexportable__3cff8f35/onnx-op18-fp32/v1": "failed"}


def test_store_list_json_gives_the_recorded_entries(store: Path, capsys):
    assert main(["store", "list", "--store", str(store), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    expected = _expected_json("store_list.json")
    assert {k: listing["totals"].get(k) for k in expected["totals"]} == expected["totals"]
    new = [{k: _rel(v, store) for k, v in e.items()} for e in listing["entries"]]
    assert_same_rows(expected["entries"], new, ["path"], "store list")


# -- Report ------------------------------------------------------------------------------------


def test_report_rows_statuses_and_medians_are_the_recorded_ones(store: Path,
                                                                 report: pd.DataFrame):
    old = _expected_csv("report.csv")
    assert len(report) == len(old) == 7
    assert_same_rows(_records(old), _records(report, store), ROW_KEY, "report")
    # spelled out: the statuses and the medians
    assert report["status"].value_counts().to_dict() == {"ok": 6, "failed": 1}
    for o, n in zip(_records(old.sort_values(ROW_KEY, ignore_index=True)),
                    _records(report.sort_values(ROW_KEY, ignore_index=True)), strict=True):
        assert (n["status"], same(o["median_ms"], n["median_ms"])) == (o["status"], True)
    failed = report[report["status"] == "failed"].iloc[0]
    assert (failed["model"], failed["stage"], failed["cause"]) == (
        "unexportable", "export", old.loc[old["status"] == "failed", "cause"].iloc[0])


def test_load_rows_and_answers_are_the_recorded_ones(store: Path, loads: list[dict]):
    old = _expected_csv("load.csv")
    assert len(loads) == len(old) == 6
    new = load_frame(loads)
    assert_same_rows(_records(old), _records(new, store), LOAD_KEY, "load.csv")
    answers = dict(zip(new["version"] + " " + new["point"], new["answer"], strict=True))
    assert answers == dict(zip(old["version"] + " " + old["point"], old["answer"], strict=True))
    assert answers["v1 server_w1_bs1_each_mb1_mw0_r2000_p90le5ms"].startswith(
        "max 2,004 events/s at p90 <= 5 ms")


def test_precision_rows_are_the_recorded_ones(store: Path, precisions: list[dict]):
    old = _expected_json("precisions.json")
    assert len(precisions) == len(old) == 2
    new = [{k: _rel(v, store) for k, v in r.items()} for r in precisions]
    assert_same_rows(old, new, PRECISION_KEY, "precisions")
    int8 = next(r for r in precisions if r["precision"] == "int8-dynamic")
    o8 = next(r for r in old if r["precision"] == "int8-dynamic")
    for c in ("speedup", "ci_low", "ci_high", "max_abs_error", "max_rel_error", "median_ms"):
        assert same(o8[c], int8[c]), c


# -- PlotHistory -------------------------------------------------------------------------------


def _group_json(lines: dict) -> dict:
    return {k: {"versions": list(map(str, v[0])), "values": [float(x) for x in v[1]]}
            for k, v in sorted(lines.items())}


def _assert_same_lines(old: dict, new: dict, what: str) -> None:
    assert sorted(old) == sorted(new), what
    for label, line in old.items():
        assert new[label]["versions"] == line["versions"], (what, label)
        assert all(same(a, b) for a, b in zip(line["values"], new[label]["values"],
                                              strict=True)), (what, label)


def test_history_is_the_recorded_history(report: pd.DataFrame, loads: list[dict]):
    expected = _expected_json("history_groups.json")
    old_alerts = _expected_csv("history_alerts.csv")
    alerts = alerts_table(report, "median_ms")
    assert len(alerts) == len(old_alerts) == 0
    new = history_groups(report, alerts.to_dict("records"), "median_ms")
    assert len(new) == len(expected["measurements"]) == 2

    def key(cfg):
        return (cfg["model"], cfg["runtime"], cfg["settings_key"])

    new_by = {key(g): (g, lines, marks) for g, lines, marks in new}
    assert sorted(new_by) == sorted(key(g["config"]) for g in expected["measurements"])
    for g in expected["measurements"]:
        cfg, lines, marks = new_by[key(g["config"])]
        diffs = {c: (v, cfg.get(c)) for c, v in g["config"].items() if not same(v, cfg.get(c))}
        assert not diffs, diffs
        _assert_same_lines(g["lines"], _group_json(lines), str(key(cfg)))
        assert [list(map(str, m)) for m in marks] == g["marks"]
    # the load answers over versions: the streams' points measured as v1 and v2
    new_loads = load_history_groups(loads)
    assert len(new_loads) == len(expected["loads"]) == 1
    for g, (cfg, lines, events) in zip(expected["loads"], new_loads, strict=True):
        diffs = {c: (v, cfg.get(c)) for c, v in g["config"].items() if not same(v, cfg.get(c))}
        assert not diffs, diffs
        _assert_same_lines(g["lines"], _group_json(lines), "load history")
        assert [list(map(str, e)) for e in events] == g["events"]


# -- Dashboard ---------------------------------------------------------------------------------


def _sections(text: str) -> list[list[str]]:
    return [list(s) for s in re.findall(
        r'<section id="((?:model-)?(?:precisions|load))"><h2>(.*?)</h2>', text)]


def test_dashboard_gives_the_recorded_results_pages_and_sections(
        store: Path, report: pd.DataFrame, precisions: list[dict], loads: list[dict],
        tmp_path: Path):
    expected = _expected_json("dashboard.json")
    cur = current_results(report, None)
    assert_same_rows(_records(_expected_csv("dashboard_current.csv")), _records(cur, store),
                     CURRENT_KEY, "current results")
    summary = build_dashboard(report, tmp_path, precisions=precisions, loads=loads)
    for k, v in expected["summary"].items():  # counts: the recorded ones (more may come)
        got = {c: summary[k].get(c) for c in v} if isinstance(v, dict) else summary[k]
        assert got == v, k
    assert summary["alerts"] == expected["alerts"] == []
    new_results = _csv(tmp_path / "results.csv")
    assert_same_rows(_records(_expected_csv("dashboard_results.csv")),
                     _records(new_results, store), CURRENT_KEY, "results.csv")
    for page, title in expected["page_titles"].items():
        text = (tmp_path / page).read_text()
        assert re.search(r"<title>(.*?)</title>", text).group(1) == title, page
        # the precision and load sections: "Precisions against fp32 (1; 1 gain less than
        # 1.2x)", "Load (4 load points)"
        assert _sections(text) == expected["sections"][page], page
    index = (tmp_path / "index.html").read_text()
    links = sorted({tuple(x) for x in re.findall(
        r'<a href="(models/[^"#]+)(?:#[^"]*)?">([^<]*)</a>', index)})
    assert links == sorted(tuple(x) for x in expected["index_model_links"])
    # the newest answer of each load point is on the front page
    newest = _expected_csv("load.csv").sort_values("timestamp").groupby("point").last()
    for answer in newest["answer"]:
        assert answer.replace(">", "&gt;").replace("<", "&lt;") in index or answer in index, \
            answer


# -- the tasks themselves ----------------------------------------------------------------------


@pytest.mark.slow  # three law runs: out of the 5-minute fast tier
def test_report_history_and_dashboard_tasks_read_the_store(store: Path, tmp_path: Path):
    """``law run`` Report, PlotHistory and Dashboard over the store (into another store)."""
    out = tmp_path / "new-store"
    for task in ("Report", "PlotHistory", "Dashboard"):
        proc = law_run(task, "--version", "new", "--stores", str(store), store=out)
        assert proc.returncode == 0, task + proc.stdout[-3000:] + proc.stderr[-3000:]
    (report_dir,) = out.glob("Report/*/new")
    assert_same_rows(_records(_expected_csv("report.csv")),
                     _records(_csv(report_dir / "report.csv"), store), ROW_KEY,
                     "Report's report.csv")
    assert_same_rows(_records(_expected_csv("load.csv")),
                     _records(_csv(report_dir / "load.csv"), store), LOAD_KEY,
                     "Report's load.csv")
    summary = (report_dir / "summary.txt").read_text()
    assert "load (4 load points" in summary
    (alerts_csv,) = out.glob("PlotHistory/*/new/alerts_median_ms.csv")
    assert len(_csv(alerts_csv)) == 0
    plots = sorted(p.name for p in out.glob("PlotHistory/*/new/history_median_ms/*.png"))
    assert len(plots) == 2 and plots[0].startswith("dnn_l10u128_"), plots  # + the load answers
    assert plots[1].startswith("load_dnn_l10u128_"), plots
    (site,) = out.glob("Dashboard/*/*/new/dashboard")
    expected = _expected_json("dashboard.json")
    for page, title in expected["page_titles"].items():
        text = (site / page).read_text()
        assert re.search(r"<title>(.*?)</title>", text).group(1) == title, page
        assert _sections(text) == expected["sections"][page], page
