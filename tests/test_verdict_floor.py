"""Verdicts that use the host's noise floor (issue 36 item 4): alerts above max(rule, 2 x
floor), interleaved verdicts "within this host's noise", and the minimum detectable change
stated by Report and the dashboard. The noise records are written as CalibrateNoise writes
them, into a temporary store."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mlprof.measure.provenance import measurement_header
from mlprof.results import layout, records
from mlprof.sysinfo import fingerprint_id, host_fingerprint, system_info
from mlprof.util import write_json_atomic
from tests.helpers import REPO, files_in, law_run

FID = "abcdef012345"


def write_noise(store: Path, fid: str | None = None, classes=((1.0, 1, 0.04),),
                host: str = "vm") -> Path:
    """A noise record as CalibrateNoise writes it: ``classes`` of (call_ms, threads, floor)."""
    fid = fid or fingerprint_id()
    path = (store / "CalibrateNoise" / host / layout.fingerprint_segment(fid)
            / layout.NOISE_REVISION / layout.NOISE_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, records.stamp({
        **measurement_header().to_json(), "fingerprint": host_fingerprint(),
        "fingerprint_id": fid,
        "classes": [{"call_ms": c, "threads": t, "pairs": 20, "floor": f,
                     "ci_low": f * 0.8, "ci_high": f * 1.2} for c, t, f in classes]},
        "noise"))
    return path


#: a steady series (0.4 % noise), then a step measured twice
STEADY = [1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 1.0, 0.996, 1.002, 1.0]


def _report(values, host: str = "a", fid: str | None = FID, threads: int = 1):
    n = len(values)
    df = pd.DataFrame({
        "status": "ok", "model": "m", "model_hash": "h", "runtime": "onnxruntime",
        "runtime_version": "1.0", "device": "cpu", "host": host, "cpu_model": "x",
        "threads": threads, "settings_key": "s", "batch_size": 1,
        "version": [f"nightly-{i:02d}" for i in range(n)],
        "timestamp": [f"2026-11-{i + 1:02d}T00:00:00+00:00" for i in range(n)],
        "median_ms": values})
    if fid is not None:
        df["host_fingerprint"] = fid
    return df


def test_a_6_percent_step_alerts_without_a_floor_of_4_percent_not_with_it(tmp_path):
    from mlprof.report.history import NoiseFloors, alerts_table

    six = _report([*STEADY, 1.06, 1.061])
    bare = NoiseFloors([tmp_path / "none"])
    (row,) = alerts_table(six, floors=bare).to_dict("records")
    assert row["kind"] == "regression" and row["threshold"] == 0.05
    assert pd.isna(row["floor"]) and row["floor_fingerprint"] == ""
    assert "1 series of a host not calibrated: law run CalibrateNoise" in bare.summary()

    write_noise(tmp_path / "s", FID)
    floors = NoiseFloors([tmp_path / "s"])
    assert alerts_table(six, floors=floors).empty  # 6 % < 2 x 4 %
    # a 20 % step is still found, with the threshold and floor it was judged by
    (row,) = alerts_table(_report([*STEADY, 1.2, 1.205]), floors=floors).to_dict("records")
    assert row["kind"] == "regression"
    assert row["threshold"] == pytest.approx(0.08) and row["floor"] == pytest.approx(0.04)
    assert row["floor_fingerprint"] == FID
    assert f"above max(5 %, 2 x the noise floor of fingerprint {FID}" in floors.summary()


def test_the_floor_follows_the_class_and_the_fingerprint(tmp_path):
    from mlprof.report.history import NoiseFloors, alerts_table, candidates

    # a steady class (1 % at 1 ms, 1 thread) and a noisy one (4 % at 0.02 ms)
    write_noise(tmp_path, FID, classes=((1.0, 1, 0.01), (0.02, 1, 0.04)))
    floors = NoiseFloors([tmp_path])
    assert alerts_table(_report([*STEADY, 1.06, 1.061]), floors=floors)["floor"].tolist() == [
        pytest.approx(0.01)]
    short = _report([0.02 * v for v in [*STEADY, 1.06, 1.061]])
    assert alerts_table(short, floors=floors).empty
    # another fingerprint's points have no floor here: the rule as it is
    other = _report([*STEADY, 1.06, 1.061], fid="0123456789ab")
    assert len(alerts_table(other, floors=floors)) == 1
    # the nightly's re-measurement candidates use the same thresholds
    assert candidates(_report([0.02 * v for v in [*STEADY, 1.06]]), "nightly-12",
                      floors=floors) == []
    assert len(candidates(_report([0.02 * v for v in [*STEADY, 1.06]]), "nightly-12",
                          floors=NoiseFloors([tmp_path / "none"]))) == 1


def test_older_records_use_the_current_hosts_floor_by_host_name(tmp_path):
    from mlprof.report.history import NoiseFloors, alerts_table

    write_noise(tmp_path)  # this machine's fingerprint
    floors = NoiseFloors([tmp_path])
    here = str(system_info()["host"])
    old = _report([*STEADY, 1.06, 1.061], host=here, fid=None)
    assert alerts_table(old, floors=floors).empty
    elsewhere = _report([*STEADY, 1.06, 1.061], host=here + "-other", fid=None)
    assert len(alerts_table(elsewhere, floors=floors)) == 1


def test_alerts_csv_of_an_older_mlprof_still_reads(tmp_path):
    from mlprof.report.history import FLOOR_COLUMNS, NoiseFloors, alerts_table, read_alerts
    from mlprof.report.nightly import nightly_summary

    table = alerts_table(_report([*STEADY, 1.2, 1.205]), floors=NoiseFloors([tmp_path]))
    old = tmp_path / "alerts_old.csv"
    table.drop(columns=list(FLOOR_COLUMNS)).to_csv(old, index=False)
    df = read_alerts(str(old))
    assert df["threshold"].isna().all() and (df["floor_fingerprint"] == "").all()
    assert df["kind"].tolist() == ["regression"]
    # the nightly's summary reads either
    summary = nightly_summary("nightly-12", [], [], pd.read_csv(old), "index.html")
    assert len(summary["new_regressions"]) == 1


def _interleaved(ratio: float, rounds: int = 20, seed: int = 0):
    from mlprof.measure.interleave import Config, InterleavedResult

    rng = np.random.default_rng(seed)
    a = 1.0 + 0.002 * rng.standard_normal(rounds)
    b = a / ratio * (1 + 0.002 * rng.standard_normal(rounds))
    configs = [Config("A", "a.onnx", "onnxruntime", "A"), Config("B", "b.onnx", "onnxruntime",
                                                                   "B")]
    return InterleavedResult(1, configs, np.stack([a, b], axis=1), [[0, 1]] * rounds,
                             {"settings": {"threads": 1}})


def test_a_significant_speedup_within_the_floor_says_so(tmp_path):
    from mlprof.measure.interleave import comparison_rows, format_table, read_table, table_csv
    from mlprof.measure.noise import find_floor

    write_noise(tmp_path, FID, classes=((1.0, 1, 0.041),))
    noise = find_floor(str(tmp_path), FID)
    ref, b = comparison_rows(_interleaved(1.03), noise)
    assert b["significant"] and b["verdict"] == "within this host's noise (floor 4.1 %)"
    assert ref["floor"] == b["floor"] == pytest.approx(0.041)
    assert comparison_rows(_interleaved(1.10), noise)[1]["verdict"] == "faster"
    assert comparison_rows(_interleaved(0.90), noise)[1]["verdict"] == "slower"
    # without a floor: the interval's verdict, and the table says once that it is missing
    bare = comparison_rows(_interleaved(1.03))
    assert bare[1]["verdict"] == "faster" and bare[1]["floor"] is None
    text = format_table(bare)
    assert text.count("not calibrated: law run CalibrateNoise") == 1
    # the floor goes through the CSV and back
    path = tmp_path / "speedup.csv"
    path.write_text(table_csv([ref, b]))
    rows = read_table(str(path))
    assert rows[1]["floor"] == pytest.approx(0.041)
    assert rows[1]["verdict"] == "within this host's noise (floor 4.1 %)"
    assert "judged against this host's noise floor: 4.1 % at batch size 1" in format_table(rows)


def test_a_comparison_table_of_an_older_mlprof_still_reads(tmp_path):
    from mlprof.measure.interleave import TABLE_COLUMNS, comparison_rows, read_table, table_csv

    text = table_csv(comparison_rows(_interleaved(1.10)))
    lines = text.splitlines()
    cut = TABLE_COLUMNS.index("floor")
    old = "\n".join(",".join(line.split(",")[:cut]) for line in lines) + "\n"
    path = tmp_path / "old.csv"
    path.write_text(old)
    rows = read_table(str(path))
    assert [r["floor"] for r in rows] == [None, None]
    assert rows[1]["verdict"] == "faster"


def test_min_detectable_change_per_class_with_fingerprint_and_date(tmp_path):
    from mlprof.measure.noise import min_detectable_text
    from mlprof.report.history import NoiseFloors, min_detectable_lines

    rec_path = write_noise(tmp_path, FID, classes=((1.0, 1, 0.01), (0.02, 1, 0.04)))
    from mlprof.measure.noise import read_noise

    text = min_detectable_text(read_noise(str(rec_path)))
    assert text.startswith("minimum detectable change on this host: 8.0 % for 0.02 ms calls "
                           "with 1 thread; 2.0 % for 1 ms calls with 1 thread")
    assert f"fingerprint {FID}, calibrated 20" in text
    one = write_noise(tmp_path / "one", FID, classes=((1.0, 1, 0.03), (0.1, 2, 0.03)))
    assert "on this host: 6.0 % (2 x floor; " in min_detectable_text(read_noise(str(one)))
    floors = NoiseFloors([tmp_path / "none"])
    (line,) = min_detectable_lines(_report(STEADY), floors)
    assert line == ("minimum detectable change on host a: not calibrated: law run "
                    f"CalibrateNoise (fingerprint {FID})")


def test_the_dashboard_states_the_min_detectable_change(tmp_path):
    from mlprof.report import to_frame
    from mlprof.report.history import NoiseFloors
    from mlprof.report.site import build_dashboard

    df = _report([*STEADY, 1.06, 1.061], fid=fingerprint_id())
    df["p16_ms"], df["p84_ms"], df["count"] = df["median_ms"] * 0.99, df["median_ms"] * 1.01, 100
    df["path"] = [f"/nowhere/runtime_bs_1_{i}.json" for i in range(len(df))]
    df = to_frame(df.to_dict("records"))
    bare = build_dashboard(df, tmp_path / "bare", plots=False,
                           floors=NoiseFloors([tmp_path / "none"]))
    assert bare["regressions"] == 1
    page = (tmp_path / "bare" / "index.html").read_text()
    assert "minimum detectable change: not calibrated: law run CalibrateNoise" in page
    assert "1 series of a host not calibrated" in page
    model_page = next((tmp_path / "bare" / "models").glob("*.html")).read_text()
    assert "not calibrated: law run CalibrateNoise" in model_page

    write_noise(tmp_path / "s")
    summary = build_dashboard(df, tmp_path / "site", plots=False,
                              floors=NoiseFloors([tmp_path / "s"]))
    page = (tmp_path / "site" / "index.html").read_text()
    assert "minimum detectable change on this host: 8.0 % (2 x floor; fingerprint " in page
    assert summary["regressions"] == 0  # the 6 % step is within 2 x 4 %
    alerts = pd.read_csv(tmp_path / "site" / "alerts.csv")
    assert {"threshold", "floor", "floor_fingerprint"} <= set(alerts.columns)


@pytest.mark.slow
def test_report_summary_states_the_min_detectable_change(tmp_path):
    stores = tmp_path / "fixture"
    shutil.copytree(REPO / "tests" / "fixtures" / "store_v1", stores)
    proc = law_run("Report", "--version", "r1", "--stores", str(stores), store=tmp_path / "r")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (summary,) = [p for p in files_in(tmp_path / "r") if p.name == "summary.txt"]
    assert "minimum detectable change: not calibrated: law run CalibrateNoise" in (
        summary.read_text())
    write_noise(tmp_path / "r2")  # the fixture's records are older: this host's floor
    proc = law_run("Report", "--version", "r1", "--stores", str(stores), store=tmp_path / "r2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (summary,) = [p for p in files_in(tmp_path / "r2") if p.name == "summary.txt"]
    text = summary.read_text()
    assert "minimum detectable change on this host: 8.0 % (2 x floor; fingerprint" in text
    assert "minimum detectable change on this host: 8.0 %" in proc.stdout + proc.stderr


def test_the_floor_raises_the_change_not_the_agreement_tolerance():
    from mlprof.report.alerts import AlertRule, detect
    from mlprof.report.history import floor_rule

    rule = floor_rule(AlertRule(), 0.093)
    assert rule.min_change == pytest.approx(0.186) and rule.agree_within == 0.05
    assert floor_rule(AlertRule(), None) == AlertRule()
    # two runs +25 % and +45 %: a step by its mean, but they disagree on a 0.4 % history;
    # within 18.6 % of their mean they would have "agreed" had the tolerance followed the floor
    x = [*STEADY, 1.25, 1.45]
    assert detect(x, rule) == []
    assert len(detect(x, dataclasses.replace(rule, agree_within=None))) == 1
