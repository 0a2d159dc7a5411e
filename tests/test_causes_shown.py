"""Where the causes are shown (issue 36, items 1 and 2): interleaved rounds carry a cause record
(a real interleaved run), older rounds CSVs and tables still read, the dashboard's rows show both
flags with their causes and a CV above 100 % as outlier-driven, a contended row whose band spans
more than 10x says "not measurable now" in every table, and a plot's contended marker has one
legend entry. Data are injected where a cause must be present: no timed asserts."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from mlprof.measure import MeasureSettings
from mlprof.measure.interleave import (
    Config,
    InterleavedResult,
    comparison_rows,
    format_table,
    measure_interleaved_isolated,
    read_rounds,
    read_table,
    rounds_csv,
    table_csv,
)
from mlprof.measure.trust import BAND_MAX_RATIO, NOT_MEASURABLE, band_of, marked_points
from tests.helpers import DNN

OLD_IL = (Path(__file__).resolve().parent / "fixtures" / "store_v1" / "CompareInterleaved"
          / "dnn_l10u128__bb7860fc-dnn_l20u128__82f1c63c")


def test_interleaved_rounds_carry_their_causes(tmp_path):
    configs = [Config(f"m{i}", str(DNN), "onnxruntime", f"m{i}") for i in range(2)]
    res = measure_interleaved_isolated(
        configs, MeasureSettings(batch_size=1, n_calls=30, warmup=5, min_duration=0), 8)
    # every round judged (this is Linux with /proc): a list of causes, empty when none
    assert len(res.round_causes) == 8 and all(isinstance(c, list) for c in res.round_causes)
    prov = res.provenance
    windows = prov["round_environment"]
    assert windows[0]["rounds"][0] == 0 and windows[-1]["rounds"][1] == 7
    assert all(isinstance(w["causes"], list) and "others" not in w["causes"] for w in windows)
    assert prov["environment"]["probe_us"] and isinstance(prov["environment"]["causes"], list)
    assert prov["round_environment_s"] >= 0
    rows = comparison_rows(res)
    n = sum(1 for c in res.round_causes if c)
    assert [r["disturbed_rounds"] for r in rows] == [n, n]
    path = tmp_path / "rounds.csv"
    path.write_text(rounds_csv([res]))
    back = read_rounds(str(path))
    assert len(back) == 16 and all(isinstance(r["contended"], bool) for r in back)
    assert {r["round"]: r["causes"] for r in back} == dict(enumerate(res.round_causes))
    table = tmp_path / "speedup.csv"
    table.write_text(table_csv(rows))
    assert [r["disturbed_rounds"] for r in read_table(str(table))] == [n, n]
    assert "disturbed rounds" in format_table(rows).splitlines()[0]


def test_old_rounds_csv_and_table_read_without_causes(tmp_path):
    (rounds,) = OLD_IL.rglob("rounds_*.csv")
    rows = read_rounds(str(rounds))
    assert rows and all(r["contended"] is None and r["causes"] == [] for r in rows)
    (table,) = OLD_IL.rglob("speedup_*.csv")
    old = read_table(str(table))
    assert all(r["disturbed_rounds"] is None and r["causes"] == "" for r in old)
    assert "disturbed" not in format_table(old)  # nothing said where nothing was judged


def _result(causes, medians) -> InterleavedResult:
    configs = [Config("fp32", "x.onnx", "onnxruntime", "m"),
               Config("int8", "x.onnx", "onnxruntime", "m")]
    m = np.array([[1.0, x] for x in medians])
    return InterleavedResult(1, configs, m, [[0, 1], [1, 0]] * (len(medians) // 2), {}, causes)


def test_a_wide_interval_on_disturbed_rounds_is_not_measurable_now():
    # the second configuration's ratios run from 0.1 to 9: an interval far wider than 10x
    medians = [0.5, 2.0, 0.1, 9.0, 0.2, 3.0]
    disturbed = _result([[], ["cpu-wait"], [], ["gc", "cpu-wait"], [], []], medians)
    rows = comparison_rows(disturbed)
    assert rows[1]["ci_high"] / rows[1]["ci_low"] > BAND_MAX_RATIO
    assert (rows[1]["disturbed_rounds"], rows[1]["causes"]) == (2, "cpu-wait,gc")
    line = format_table(rows).splitlines()[2]
    assert NOT_MEASURABLE in line and "2 of 6: cpu-wait, gc" in line
    # the same rounds, none disturbed: the number stands (the spread is the model's own)
    quiet = format_table(comparison_rows(_result([[]] * 6, medians)))
    assert NOT_MEASURABLE not in quiet and "0 of 6" in quiet


def _stats(tmp_path, contended: bool, p95: float) -> str:
    from mlprof.measure.stats import summarize, write_stats_csv

    rows = []
    for bs in (1, 8):
        row = summarize(np.array([0.01] * 90 + [0.05] * 10), bs, contended=contended)
        if bs == 8:  # injected: the calls spread 0.01 to p95 ms
            row["p95_ms"] = p95
        rows.append(row)
    path = tmp_path / f"stats_{contended}_{p95}.csv"
    write_stats_csv(str(path), rows)
    return str(path)


def test_end_of_run_tables_say_not_measurable_now(tmp_path):
    from mlprof.measure.stats import medians_table, speedups_table, throughputs_table

    wide = _stats(tmp_path, True, 0.5)  # 50x on a contended point
    table = medians_table([("dnn", wide)])
    lines = table.splitlines()
    assert NOT_MEASURABLE in next(x for x in lines if x.strip().startswith("8 "))
    assert NOT_MEASURABLE not in next(x for x in lines if x.strip().startswith("1 "))
    assert NOT_MEASURABLE in throughputs_table([("dnn", wide)])
    assert NOT_MEASURABLE in speedups_table([("dnn", _stats(tmp_path, False, 0.02), wide)])
    # the same spread on a quiet point, and a contended point within 10x: numbers
    assert NOT_MEASURABLE not in medians_table([("dnn", _stats(tmp_path, False, 0.5))])
    assert NOT_MEASURABLE not in medians_table([("dnn", _stats(tmp_path, True, 0.05))])


def test_report_and_load_tables_say_not_measurable_now():
    from mlprof.report.load import format_table as load_table

    row = {"model": "m", "runtime": "onnxruntime", "batch_size": 8, "median_ms": 0.03,
           "min_ms": 0.01, "p95_ms": 0.5, "unstable": True, "contended": True,
           "contended_causes": "cpu-wait"}
    assert band_of(row) == (0.01, 0.5)
    text = marked_points([row])
    assert NOT_MEASURABLE in text and "cpu-wait" in text
    load = pd.DataFrame([{"scenario": "streams", "streams": 2, "threads": 1, "sessions": 1,
                          "batch_size": 1, "events_per_s": 12068.0, "events_per_cpu_s": 9000.0,
                          "p50_ms": 0.02, "p99_ms": 0.9, "contended": True,
                          "causes": "cpu-wait", "chosen": True, "rate": None, "host": "h",
                          "max_batch": None, "max_wait_ms": None, "_hosts": 1}])
    out = load_table(load)
    assert NOT_MEASURABLE in out and "contended: disturbed while measuring (cpu-wait)" in out


def test_dashboard_rows_show_both_flags_causes_and_outlier_driven_cv():
    from mlprof.report.site.table import flag_counts, html_table

    rows = [{"model": "m", "status": "contended", "unstable": True, "contended": True,
             "contended_causes": "cpu-wait,gc", "cv": 27.89, "median_ms": 0.033,
             "min_ms": 0.03, "p95_ms": 0.04},
            {"model": "m", "status": "contended", "unstable": False, "contended": True,
             "contended_causes": "", "cv": 0.05, "median_ms": 0.5, "min_ms": 0.01,
             "p95_ms": 0.9},
            {"model": "m", "status": "ok", "unstable": False, "contended": False,
             "cv": 0.02, "median_ms": 1.0, "min_ms": 0.9, "p95_ms": 1.1},
            {"model": "m", "status": "failed", "error": "boom"}]
    html = html_table(rows, ["model", "status", "median_ms", "cv"], table_id="t")
    assert "~ unstable · ! contended: cpu-wait, gc" in html
    assert "! contended: unexplained" in html
    assert "outlier-driven (CV 2,789%)" in html and "2789" not in html.replace("2,789", "")
    assert html.count(NOT_MEASURABLE) == 1  # the second row: 90x, contended
    assert ">failed<" in html
    # the card counts each flag on its own, as the rows show them
    assert flag_counts(rows) == {"ok": 1, "unstable": 1, "contended": 2}


def test_a_contended_marker_has_one_legend_entry(tmp_path):
    from mlprof.plotting.runtimes import OPEN_TEXTS, plot_runtimes, save_figure
    from tests.test_plot_legends import three

    fig = plot_runtimes(three(contended=(1, 64, 1024)), x_log=True)
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts.count(OPEN_TEXTS["contended"]) == 1, texts
    out = tmp_path / "flagged.pdf"
    save_figure(fig, [str(out)])
    if shutil.which("pdftoppm"):  # what a reader sees; the PNG is looked at by hand
        import subprocess

        subprocess.run(["pdftoppm", "-png", "-r", "60", str(out), str(tmp_path / "flagged")],
                       check=True)
