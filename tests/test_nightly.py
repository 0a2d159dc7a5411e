"""Nightly runs end to end: experiments, confirmations, alerts and the dashboard.

The regression scenario is deterministic: the watched model is the test model
``tests/scripts/delayed.py`` (a Linear layer whose every call sleeps 20 ms), copied into the
test's folder. Nights n1, n2 and n3 measure it as it is (n3 is the first night that could alert:
it must not); before n4 the test writes ``extra_delay_ms`` beside the copy, so that from n4 on
each call sleeps :data:`EXTRA_MS` more: a known slowdown of the same experiment, about 5x, which
a busy machine does not make or hide (a sleeping call waits, it does not compete for a core).
No test here starts busy loops or counts cores. The browser tests open the dashboards in
Chromium.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mlprof.measure.trust import CV_UNSTABLE
from tests.helpers import REPO, law_run, open_page

pytestmark = pytest.mark.slow

MODEL = REPO / "examples" / "dnn" / "model_onnx_l20u256.yaml"
EXPERIMENT = f"""
title: Regression watch
description: The 20x256 DNN at batch sizes 1 and 512.
priority: 1
model_files: [{MODEL}]
batch_sizes: [1, 512]
settings: {{n_calls: 10, warmup: 2, min_duration: 0}}
"""

#: the statuses of a measured result in results.csv (flagged ones were measured too)
MEASURED = ("ok", "unstable", "contended")
DNN_YAML = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"
LINEAR = REPO / "models" / "selftest" / "linear.py"

#: the test model with a known speed (see its docstring): 20 ms per call, plus the test's delay
DELAYED = REPO / "tests" / "scripts" / "delayed.py"
#: the delay added from a given night on: 20 -> 100 ms per call (+400 %), far beyond the 60 % a
#: short history needs, and beyond what a busy machine adds to a sleep (a few ms)
EXTRA_MS = 80.0


def delayed_model(root: Path) -> Path:
    """A copy of the test model in ``root`` (its own switch file; the same identity)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(DELAYED, root / DELAYED.name))


def slow_down(model: Path, extra_ms: float = EXTRA_MS) -> None:
    """From the next night on, each call of ``model`` (a :func:`delayed_model`) sleeps
    ``extra_ms`` more: the test hook of ``tests/scripts/delayed.py``."""
    tmp = model.with_name("extra_delay_ms.tmp")
    tmp.write_text(f"{extra_ms}\n")
    tmp.replace(model.with_name("extra_delay_ms"))


def watch(model: Path) -> str:
    """The watched experiment: ``model`` on torch at batch sizes 1 and 4."""
    return f"""
title: Regression watch
description: The delayed test model at batch sizes 1 and 4.
priority: 1
model_files: [{model}]
runtimes: [torch]
batch_sizes: [1, 4]
settings: {{n_calls: 10, warmup: 2, min_duration: 0}}
"""


#: for the nights of the delayed model: measured without the machine-wide measurement lock, so
#: that they never wait for other mlprof runs (other tests, other checkouts); a model that
#: sleeps does not notice them, and its alerts must not either
NO_LOCK = {"MLP_NO_LOCK": "1"}


def nightly(store: Path, experiments: Path, version: str, env: dict | None = None) -> dict:
    """``law run Nightly`` (with ``env`` added to its environment); its nightly.json."""
    r = law_run("Nightly", "--version", version, "--experiments", str(experiments),
                store=store, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (path,) = store.glob(f"Nightly/*/{version}/nightly.json")
    summary = json.loads(path.read_text())
    summary["_stdout"] = r.stdout + r.stderr
    return summary


def make_experiments(root: Path, **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / f"{name}.yaml").write_text(text)
    return root


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Four nights of one experiment: n1-n3 as the model is, n4 with its calls 80 ms slower."""
    root = tmp_path_factory.mktemp("nights")
    model = delayed_model(root / "model")
    exps = make_experiments(root / "experiments", watch=watch(model))
    store = root / "store"
    runs = {}
    for v in ("n1", "n2", "n3", "n4"):
        if v == "n4":
            slow_down(model)
        runs[v] = nightly(store, exps, v, env=NO_LOCK)
    return {"store": store, "runs": runs}


BROKEN = f"""
title: Broken on purpose
model_files: [{MODEL}]
batch_sizes: [1, -4]
"""


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from tests.onnx_factory import hardcoded_reshape_model

    root = tmp_path_factory.mktemp("broken")
    # a model whose graph only takes batch size 1: its batch size 128 fails when measured
    fixed = hardcoded_reshape_model(root / "fixed.onnx", batch=1)
    exps = make_experiments(root / "experiments", good=EXPERIMENT, broken=BROKEN,
                            off=EXPERIMENT.replace("priority: 1", "active: false"),
                            partial=f"title: Fixed batch\nmodel_files: [{fixed}]\n"
                            "batch_sizes: [1, 128]\nsettings: {n_calls: 10, min_duration: 0}\n",
                            mixed=f"title: Mixed\nmodel_files: [{DNN_YAML}, {LINEAR}]\n"
                            "runtimes: [onnxruntime, torch]\nreference_runtime: onnxruntime\n"
                            "batch_sizes: [1]\nsettings: {n_calls: 5, min_duration: 0}\n")
    store = root / "store"
    return {"store": store, "experiments": exps, "summary": nightly(store, exps, "v1")}


def read_csv(path: str | Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def site(summary: dict) -> Path:
    return Path(summary["dashboard"]).parent


def test_regression_is_confirmed_and_listed(nights: dict) -> None:
    runs = nights["runs"]
    assert [runs[v]["new_regressions"] for v in ("n1", "n2", "n3")] == [[], [], []]
    n4 = runs["n4"]
    assert n4["confirmations"] == 2, "both slow n4 results are measured again before alerting"
    regs = n4["new_regressions"]
    assert sorted(r["batch_size"] for r in regs) == [1, 4], n4["_stdout"][-3000:]
    for r in regs:
        assert r["first_version"] == "n4" and r["version"] == "n4.confirm"
        # 20 -> 100 ms per call, about +400 %: beyond the 60 % a short history needs even
        # where a busy machine widened a run's spread (a disturbed run's slowdown counts only
        # beyond a neighbour's 2x: measured here beside busy loops, +152 % and +354 %)
        assert r["change"] >= 0.6, r
    assert n4["new_improvements"] == []
    # the dashboard lists them: in alerts.csv and in the index's alerts table
    alerts = read_csv(site(n4) / "alerts.csv")
    assert sorted(a["batch_size"] for a in alerts
                  if a["first_version"] == "n4" and a["kind"] == "regression") == ["1", "4"]
    index = (site(n4) / "index.html").read_text()
    table = index.split('id="alerts-table"', 1)[1].split("</table>", 1)[0]
    assert "regression" in table and ">n4<" in table and ">n4.confirm<" in table
    # the confirming measurements are in the store under their own version, in the same
    # result directory as the earlier nights (the same experiment, measured slower)
    for bs in (1, 4):
        (confirm,) = nights["store"].glob(f"MeasureRuntime/*/*/*/n4.confirm/runtime_bs_{bs}.json")
        assert (confirm.parent.parent / "n1" / f"runtime_bs_{bs}.json").exists()


def test_nights_without_a_change_give_no_alert(nights: dict) -> None:
    """n3, the first night with enough history to alert, measured the model as n1 and n2 did:
    no alert, nothing measured again, and its dashboard says so."""
    n3 = nights["runs"]["n3"]
    assert n3["new_regressions"] == [] and n3["new_improvements"] == [], n3
    assert n3["confirmations"] == 0
    assert read_csv(site(n3) / "alerts.csv") == []
    assert "no regressions or improvements" in (site(n3) / "index.html").read_text()
    results = read_csv(site(n3) / "results.csv")
    # a measured result's status is ok, or says how it was measured (flagged, still measured)
    assert len(results) == 2 and {r["status"] for r in results} <= set(MEASURED)


def test_broken_experiment_does_not_stop_the_good_one(broken_run: dict) -> None:
    s = broken_run["summary"]
    by_name = {e["name"]: e for e in s["experiments"]}
    assert by_name["good"]["status"] == "ok"
    assert by_name["off"]["status"] == "inactive"
    broken = by_name["broken"]
    assert broken["status"] == "failed"
    (message,) = broken["errors"]
    assert str(broken_run["experiments"] / "broken.yaml") in message
    assert "batch_sizes" in message and "-4" in message
    index = (site(s) / "index.html").read_text()
    assert "broken.yaml" in index
    assert "batch_sizes: batch sizes must be &gt;= 1, got -4" in index
    results = read_csv(site(s) / "results.csv")
    good = [r for r in results if r["model"] == "dnn_l20u256"]
    assert sorted(int(r["batch_size"]) for r in good) == [1, 512]
    assert all(r["status"] in MEASURED and float(r["median_ms"]) > 0 for r in good)
    # a measurement that failed inside an experiment: its error, and what did work
    partial = by_name["partial"]
    assert partial["status"] == "failed" and "fixed batch dimension of 1" in partial["errors"][0]
    fixed = {int(r["batch_size"]): r for r in results if r["model"] == "fixed"}
    assert fixed[1]["status"] in MEASURED and fixed[128]["status"] == "failed"
    failures = index.split('id="failures-table"', 1)[1].split("</table>", 1)[0]
    assert "fixed batch dimension of 1" in failures and ">128<" in failures


def test_a_runtime_that_does_not_apply_skips_its_pair_and_the_experiment_is_ok(
        broken_run: dict) -> None:
    """torch on an ONNX YAML model: that pair only is skipped, with one line; the YAML model is
    measured on onnxruntime, the script on both, and the experiment is ok."""
    mixed = {e["name"]: e for e in broken_run["summary"]["experiments"]}["mixed"]
    assert mixed["status"] == "ok", mixed
    assert mixed["errors"] == [] and mixed["results"] == "2/2 model file(s) complete"
    (line,) = mixed["skipped"]
    assert line.startswith("skipped torch on model_onnx_l10u128.yaml: runtime torch measures")
    assert line in broken_run["summary"]["_stdout"]
    results = read_csv(site(broken_run["summary"]) / "results.csv")
    measured = {(r["model"].split("-")[0], r["runtime"]) for r in results  # linear-ee07f9c5
                if r["model"].startswith(("dnn_l10u128", "linear")) and r["status"] in MEASURED}
    assert measured == {("dnn_l10u128", "onnxruntime"), ("linear", "onnxruntime"),
                        ("linear", "torch")}


def test_rerun_is_complete(broken_run: dict) -> None:
    """A second run of the same version has nothing left to do."""
    r = law_run("Nightly", "--version", "v1", "--experiments", str(broken_run["experiments"]),
                store=broken_run["store"])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-2000:]
    assert any(line.startswith("luigi: 0 ran, 1 complete already :) ")
               for line in out.splitlines()), out[-2000:]


# -- the dashboard in a real browser -------------------------------------------------------

def images_ok(page) -> list[str]:
    """The images of ``page`` that did not load."""
    return page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")


def table_rows(page, table_id: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"#{table_id} tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))")


def check_site(browser, summary: dict) -> None:
    root = site(summary)
    page, problems, _ = open_page(browser, root / "index.html")
    assert problems == []
    # the results table is results.csv, row by row
    csv_rows = read_csv(root / "results.csv")
    rows = table_rows(page, "results-table")
    assert len(rows) == len(csv_rows) > 0
    # the table's columns by name (a new column moves the others)
    from mlprof.report.site import TABLE_COLUMNS

    BS, MEDIAN, STATUS, VERSION = (TABLE_COLUMNS.index(c) for c in (
        "batch_size", "median_ms", "status", "version"))
    for row, rec in zip(rows, csv_rows, strict=True):
        assert row[0] == rec["model"] and row[1] == rec["runtime"]
        assert int(row[BS]) == int(rec["batch_size"])
        if rec["median_ms"]:
            assert float(row[MEDIAN]) == pytest.approx(float(rec["median_ms"]), rel=1e-3)
        else:  # a failure: no statistics
            assert row[MEDIAN] == "" and rec["status"] != "ok"
        assert row[VERSION] == rec["version"]
        if rec["status"] in ("ok", "unstable", "contended"):
            # both flags are shown, a contended one with its causes (issue 36): the status
            # is in the cell, and an unstable contended row says both
            assert rec["status"] in row[STATUS], (row[STATUS], rec["status"])
            if rec["status"] == "contended":
                assert row[STATUS].startswith(("! contended", "~ unstable · ! contended"))
                cv = float(rec["cv"]) if rec.get("cv") else 0.0
                assert ("unstable" in row[STATUS]) == (cv > CV_UNSTABLE), (row[STATUS], cv)
        else:
            assert row[STATUS] == rec["status"]
    # sorting by the median column orders the rows numerically (both ways)
    header = page.locator("#results-table thead th", has_text="median")
    header.click()
    medians = [float(r[MEDIAN] or "inf") for r in table_rows(page, "results-table")]
    assert medians == sorted(medians)  # failures (no median) last
    header.click()
    medians = [float(r[MEDIAN] or "inf") for r in table_rows(page, "results-table")]
    assert medians == sorted(medians, reverse=True)
    # every model page: loads cleanly, all plots load
    links = page.eval_on_selector_all("#results-table a", "as => as.map(a => a.href)")
    assert links
    for href in sorted(set(links)):
        mpage, mproblems, _ = open_page(browser, Path(href.removeprefix("file://")))
        assert mproblems == []
        assert mpage.locator("img").count() >= 3  # latency, throughput, distributions
        assert images_ok(mpage) == []
        assert mpage.locator("#provenance-table tbody tr").count() >= 1
        mpage.close()
    page.close()


@pytest.mark.browser
def test_dashboard_in_browser_regression(browser, nights: dict) -> None:
    n4 = nights["runs"]["n4"]
    check_site(browser, n4)
    page, problems, _ = open_page(browser, site(n4) / "index.html")
    alerts = table_rows(page, "alerts-table")
    for bs in ("1", "4"):
        assert any("regression" in r and "n4" in r and bs in r for r in alerts), alerts
    assert "step" in alerts[0] or "trend" in alerts[0], alerts     # the rule's test column
    assert problems == []
    # the model page shows the history plot with the regression marked
    page.click("#alerts-table a")
    assert "history" in " ".join(page.eval_on_selector_all("img", "i => i.map(x => x.src)"))
    assert images_ok(page) == []


@pytest.mark.browser
def test_dashboard_in_browser_broken_experiment(browser, broken_run: dict) -> None:
    s = broken_run["summary"]
    check_site(browser, s)
    page, _, _ = open_page(browser, site(s) / "index.html")
    exps = {Path(r[3]).name: r for r in table_rows(page, "experiments-table")}
    assert exps["good.yaml"][:2] == ["Regression watch", "ok"]
    assert exps["off.yaml"][1] == "inactive"
    assert exps["broken.yaml"][1] == "failed" and "batch_sizes" in exps["broken.yaml"][4]
    failures = page.locator("#experiment-failures-table").inner_text()
    assert "broken.yaml" in failures


def test_notifications_when_configured_never_fail_the_run(tmp_path: Path) -> None:
    """Slack configured in law.cfg: the summary goes to Slack by default; a transport that
    cannot send (no client installed here) is a warning, the run still succeeds."""
    cfg = tmp_path / "law.cfg"
    cfg.write_text(f"[core]\ninherit: {REPO / 'law.cfg'}\nindex_file: {tmp_path / 'index'}\n\n"
                   "[notifications]\nslack_token: xoxb-test\nslack_channel: nightly\n")
    exps = make_experiments(tmp_path / "experiments", tiny=f"model_files: [{REPO}/examples/dnn/"
                            "model_onnx_l10u128.yaml]\nbatch_sizes: [1]\n"
                            "settings: {n_calls: 10, min_duration: 0}\n")
    env = {"LAW_CONFIG_FILE": str(cfg)}
    subprocess.run(["law", "index", "-q"], env={**os.environ, **env}, check=True, cwd=REPO)
    r = law_run("Nightly", "--version", "v1", "--experiments", str(exps),
                store=tmp_path / "store", env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "notification via transport" in out and "Slack" in out and "failed" in out
    # turned off explicitly: nothing is attempted
    r = law_run("Nightly", "--version", "v2", "--experiments", str(exps), "--notify-slack",
                "False", store=tmp_path / "store", env=env)
    assert r.returncode == 0 and "notification via transport" not in r.stdout + r.stderr


# -- --fail-on-regression: the exit code for cron and CI ------------------------------------

def tiny(model: Path) -> str:
    """A one-point experiment: ``model`` on torch at batch size 1."""
    return f"""
title: Tiny watch
model_files: [{model}]
runtimes: [torch]
batch_sizes: [1]
settings: {{n_calls: 10, warmup: 1, min_duration: 0}}
"""


def copy_measurements(src: Path, dst: Path, version: str, timestamp: str) -> None:
    """The MeasureRuntime results of ``src`` as version ``version`` in ``dst`` (provenance
    rewritten, samples as measured): an earlier night, as a nightly run writes it."""
    dst.mkdir(parents=True)
    for js in sorted(src.glob("runtime_bs_*.json")):
        prov = json.loads(js.read_text())
        prov["timestamp"] = timestamp
        prov["task"]["version"] = prov["task"]["params"]["version"] = version
        (dst / js.name).write_text(json.dumps(prov))
        shutil.copy(js.with_suffix(".csv"), dst / js.with_suffix(".csv").name)


def test_fail_on_regression_sets_the_exit_code(tmp_path: Path) -> None:
    from mlprof.report.nightly import EXIT_NIGHT_FAILED

    model = delayed_model(tmp_path / "model")
    exps = make_experiments(tmp_path / "experiments", tiny=tiny(model))
    # a first night: nothing to compare with, nothing fails
    first = tmp_path / "first"
    r = law_run("Nightly", "--version", "n0", "--experiments", str(exps),
                "--fail-on-regression", store=first, env=NO_LOCK)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "fails (--fail-on-regression" not in r.stdout + r.stderr
    # five earlier nights as that one measured the model (a history long enough for the full
    # rule), then the model's calls sleep 80 ms more from tonight on: a regression tonight
    store = tmp_path / "store"
    (measured,) = first.glob("MeasureRuntime/*/*/*/n0")
    rel = measured.parent.relative_to(first)
    for i in range(1, 6):
        copy_measurements(measured, store / rel / f"n{i}", f"n{i}", f"2000-01-0{i}T00:00:00+00:00")
    slow_down(model)
    args = ("Nightly", "--version", "n6", "--experiments", str(exps))
    r = law_run(*args, "--fail-on-regression", store=store, env=NO_LOCK)
    out = r.stdout + r.stderr
    assert r.returncode == EXIT_NIGHT_FAILED, out[-3000:]
    (why,) = [ln for ln in r.stderr.splitlines() if "fails (--fail-on-regression" in ln]
    assert why.startswith("nightly n6 fails") and "1 new regression(s): delayed-" in why
    assert " torch bs 1 +" in why, why
    # the night itself is complete: summary, dashboard, the confirmation
    (path,) = store.glob("Nightly/*/n6/nightly.json")
    summary = json.loads(path.read_text())
    assert [(r["batch_size"], r["version"]) for r in summary["new_regressions"]] == [
        (1, "n6.confirm")]
    assert Path(summary["dashboard"]).exists()
    # the exit code is the night's verdict: the same when the night is done already
    r = law_run(*args, "--fail-on-regression", store=store, env=NO_LOCK)
    assert r.returncode == EXIT_NIGHT_FAILED
    assert any(line.startswith("luigi: 0 ran, 1 complete already ")
               for line in r.stdout.splitlines()), r.stdout[-2000:]
    # without the option (the default) the same night exits 0
    r = law_run(*args, store=store, env=NO_LOCK)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "new regression(s): delayed-" in r.stdout


def test_fail_on_regression_fails_a_night_with_a_failed_experiment(tmp_path: Path) -> None:
    from mlprof.report.nightly import EXIT_NIGHT_FAILED

    exps = make_experiments(tmp_path / "experiments", broken=BROKEN)
    r = law_run("Nightly", "--version", "b1", "--experiments", str(exps),
                "--fail-on-regression", store=tmp_path / "store")
    assert r.returncode == EXIT_NIGHT_FAILED, (r.stdout + r.stderr)[-3000:]
    assert "1 failed or partial experiment(s): broken (failed)" in r.stderr
    assert "new regression" not in r.stderr.split("fails (--fail-on-regression", 1)[1]


def test_improvements_and_inactive_experiments_never_fail_a_night() -> None:
    from mlprof.report.nightly import failing_line, failing_reasons

    night = {"version": "n5", "new_regressions": [],
             "new_improvements": [{"model": "m", "runtime": "onnxruntime", "batch_size": 1,
                                   "change": -0.4}],
             "experiments": [{"name": "a", "status": "ok"}, {"name": "b", "status": "inactive"}]}
    assert failing_reasons(night) == [] and failing_line(night) is None
    night["experiments"].append({"name": "c", "status": "partial"})
    assert failing_reasons(night) == ["1 failed or partial experiment(s): c (partial)"]
