"""Issue 36's last gaps, on injected rows (no timed asserts): the speed-up plot draws a point
within this host's noise open, ComparePrecisions' CSV keeps the rounds' causes and the floor
(an older CSV still reads), and Report's load summary says "not measurable now" for a
disturbed load point whose calls spread over more than 10x."""

from __future__ import annotations

import numpy as np

from mlprof.measure.noise import within_noise
from mlprof.plotting import use_backend


def _speedup_rows(floor: float | None) -> list[dict]:
    """A reference and one configuration at batch sizes 1 and 8: at 1 a significant 1.02x
    (interval [1.01, 1.03]), at 8 a significant 1.30x."""
    rows = []
    for bs, (s, lo, hi) in ((1, (1.02, 1.01, 1.03)), (8, (1.30, 1.25, 1.35))):
        rows.append({"batch_size": bs, "config": "a", "reference": "a", "speedup": 1.0,
                     "ci_low": 1.0, "ci_high": 1.0, "significant": False,
                     "verdict": "reference", "floor": floor})
        within = floor is not None and abs(s - 1) <= floor
        rows.append({"batch_size": bs, "config": "b", "reference": "a", "speedup": s,
                     "ci_low": lo, "ci_high": hi, "significant": True, "floor": floor,
                     "verdict": within_noise(floor) if within else "faster"})
    return rows


def _open_points(ax) -> list[tuple[float, float]]:
    """The points drawn open (white face, no line) on ``ax``."""
    from matplotlib.colors import to_rgba

    out = []
    for line in ax.get_lines():
        if (line.get_linestyle() == "None" and len(line.get_xdata())
                and to_rgba(line.get_markerfacecolor()) == to_rgba("white")):
            out += list(zip(line.get_xdata(), line.get_ydata(), strict=True))
    return out


def test_speedup_plot_draws_within_noise_open_with_one_legend_entry() -> None:
    """A significant 1.02x on a host whose floor is 3 % reads "within this host's noise" in
    the table: the plot draws it open as it does a not significant one, the legend says so
    once, and the floor is drawn at 1 +- 3 %; the 1.30x stays filled."""
    from mlprof.plotting.compare import OPEN_TITLE, OPEN_TITLE_FLOOR, plot_comparison

    fig = plot_comparison(_speedup_rows(0.03))
    ax = fig.axes[0]
    assert _open_points(ax) == [(1, 1.02)]
    legend = ax.get_legend()
    assert legend.get_title().get_text() == OPEN_TITLE_FLOOR
    texts = [t.get_text() for t in legend.get_texts()]
    assert sum("noise" in t for t in texts) == 1, texts
    floor_lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert sorted(round(float(y), 6) for ln in floor_lines for y in ln.get_ydata()) == [
        0.97, 0.97, 1.03, 1.03]
    use_backend().close(fig)

    # not calibrated: the same points, judged by their intervals alone: both filled
    fig = plot_comparison(_speedup_rows(None))
    ax = fig.axes[0]
    assert _open_points(ax) == []
    assert ax.get_legend().get_title().get_text() == OPEN_TITLE
    assert not [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    use_backend().close(fig)


def test_is_open_reads_the_verdict() -> None:
    from mlprof.plotting.compare import is_open

    assert is_open({"significant": False, "verdict": "not significant"})
    assert is_open({"significant": True, "verdict": within_noise(0.031)})
    assert not is_open({"significant": True, "verdict": "slower"})



def _precision_rows(tmp_path, round_causes: list[list[str]], medians: list[float],
                    floor: float | None = None) -> list[dict]:
    """ComparePrecisions' rows as its CSV has them: fp32 against int8-dynamic at batch size 8
    in interleaved rounds of injected medians and causes (no measurement; ``floor``: the
    host's, as :func:`comparison_rows` sets it from a noise record), written by the task's own
    writer and read back by the dashboard's reader."""
    from mlprof.measure.interleave import Config, InterleavedResult, comparison_rows
    from mlprof.report.precision import COLUMNS, read_precision_table
    from mlprof.tasks.precision import _csv

    configs = [Config("fp32", "x.onnx", "onnxruntime", "m"),
               Config("int8-dynamic", "x.onnx", "onnxruntime", "m")]
    m = np.array([[1.0, x] for x in medians])
    result = InterleavedResult(8, configs, m, [[0, 1], [1, 0]] * (len(medians) // 2), {},
                               round_causes)
    rows = [{**r, "precision": r["config"], "floor": floor} for r in comparison_rows(result)]
    table = [{**{k: r.get(k) for k in COLUMNS if k != "why"}, "why": ""} for r in rows]
    path = tmp_path / "precisions_bs_8_il6_budget60s.csv"
    path.write_text(_csv(table))
    return read_precision_table(path)


#: the second precision's ratios run from 0.1 to 9: an interval far wider than 10x
WIDE = [0.5, 2.0, 0.1, 9.0, 0.2, 3.0]


def test_precision_csv_keeps_the_rounds_causes_and_floor(tmp_path) -> None:
    """The CSV has how many rounds were disturbed, by what, and the floor; read back they are
    what the interleaved rows said."""
    rows = _precision_rows(tmp_path, [[], ["cpu-wait"], [], ["gc", "cpu-wait"], [], []], WIDE,
                           floor=0.031)
    low = rows[1]
    assert (low["rounds"], low["disturbed_rounds"], low["causes"], low["floor"]) == (
        6, 2, "cpu-wait,gc", 0.031)
    # rounds not judged (no /proc): empty, read as None
    rows = _precision_rows(tmp_path, [None] * 6, WIDE)
    assert (rows[1]["disturbed_rounds"], rows[1]["causes"], rows[1]["floor"]) == (None, "", None)


def test_older_precision_csvs_read_with_the_rounds_columns_empty(tmp_path) -> None:
    from mlprof.report.precision import COLUMNS_V1, COLUMNS_V2, read_precision_table

    for columns, fp32 in ((COLUMNS_V2, "8,fp32,2,1,1,1,reference,,,,,"),
                          (COLUMNS_V1, "8,fp32,2,1,1,1,reference,,,,")):
        path = tmp_path / f"old_{len(columns)}.csv"
        path.write_text(",".join(columns) + "\n" + fp32 + "\n")
        (row,) = read_precision_table(path)
        assert (row["rounds"], row["disturbed_rounds"], row["causes"], row["floor"]) == (
            None, None, "", None)


def test_a_damaged_rounds_column_is_a_damaged_table(tmp_path) -> None:
    import pytest

    from mlprof.errors import CorruptResult
    from mlprof.report.precision import COLUMNS, read_precision_table

    good = "8,fp32,2,1,1,1,reference,,,,,,6,2,cpu-wait,0.03"
    for field, bad in (("rounds", "8,fp32,2,1,1,1,reference,,,,,,0,,,"),
                       ("disturbed_rounds", "8,fp32,2,1,1,1,reference,,,,,,6,7,,"),
                       ("disturbed_rounds", "8,fp32,2,1,1,1,reference,,,,,,6,-1,,"),
                       ("causes", '8,fp32,2,1,1,1,reference,,,,,,6,2,"<b>",'),
                       ("floor", "8,fp32,2,1,1,1,reference,,,,,,6,2,gc,nan"),
                       ("floor", "8,fp32,2,1,1,1,reference,,,,,,6,2,gc,11")):
        path = tmp_path / "bad.csv"
        path.write_text(",".join(COLUMNS) + "\n" + good + "\n" + bad + "\n")
        with pytest.raises(CorruptResult, match=f"{field} in line 3"):
            read_precision_table(path)


def test_dashboard_precision_rows_say_not_measurable_now_with_the_causes(tmp_path) -> None:
    """From the CSV alone: a disturbed row whose interval spans more than 10x reads "not
    measurable now" with its disturbed rounds and causes; the same spread on quiet rounds
    keeps its number and no flag."""
    from mlprof.measure.trust import NOT_MEASURABLE
    from mlprof.report.site.precision import current_precisions

    where = {"model": "m", "model_hash": "h", "runtime": "onnxruntime", "settings_key": "s",
             "version": "v1", "mtime": 1.0}
    disturbed = _precision_rows(tmp_path, [[], ["cpu-wait"], [], ["gc", "cpu-wait"], [], []],
                                WIDE)
    (row,) = current_precisions([{**where, **r} for r in disturbed])
    assert row["speedup"] == NOT_MEASURABLE
    assert row["flags"] == "! 2 of 6: cpu-wait, gc"
    quiet = _precision_rows(tmp_path, [[]] * 6, WIDE)
    (row,) = current_precisions([{**where, **r} for r in quiet])
    assert row["speedup"] != NOT_MEASURABLE and row["flags"] == ""


def _load_row(p99_ms: float, contended: bool, version: str = "v1") -> dict:
    """A row as :func:`mlprof.report.collect.collect_loads` makes it: the issue's streams
    point (12,068 events/s, p50 0.05 ms), its p99 and whether a point was contended."""
    return {"model": "dnn", "model_hash": "h", "runtime": "onnxruntime",
            "runtime_version": "1.32.0", "device": "cpu", "settings_key": "s",
            "version": version, "point": "streams_2", "scenario": "streams",
            "config": "2 streams x 1 thread", "events_per_s": 12068.0, "p50_ms": 0.05,
            "p99_ms": p99_ms, "latency_bound_ms": None, "points": 2, "contended": contended,
            "causes": "cpu-wait,gc" if contended else "", "host": "vm", "timestamp": "t",
            "answer": "max 12,068 events/s with 2 streams x 1 thread (p99 3.2 ms per call)",
            "path": "/s/load_streams_2.json", "mtime": 1.0}


def test_report_load_summary_says_not_measurable_now_and_the_csv_keeps_the_numbers() -> None:
    """A contended load point whose calls spread 64x (p50 0.05 ms, p99 3.2 ms): the summary
    says "not measurable now" with the band and the causes instead of the answer; load.csv
    keeps its numbers and says ``not_measurable``. The same spread on a quiet point, and a
    contended point within 10x, keep their answers."""
    from mlprof.measure.trust import NOT_MEASURABLE
    from mlprof.report.load import load_frame, load_summary

    wide = _load_row(3.2, True)
    text = load_summary([wide])
    assert (f"dnn on onnxruntime 1.32.0, streams_2 (v1): {NOT_MEASURABLE}: calls p50 0.05 ms "
            "to p99 3.2 ms (64x) on contended points (cpu-wait, gc); the numbers are in "
            "load.csv") in text
    assert "12,068" not in text
    frame = load_frame([wide])
    assert frame.loc[0, "events_per_s"] == 12068.0 and frame.loc[0, "p50_ms"] == 0.05
    assert bool(frame.loc[0, "not_measurable"]) and frame.loc[0, "causes"] == "cpu-wait,gc"
    for row in (_load_row(3.2, False), _load_row(0.4, True)):
        assert NOT_MEASURABLE not in load_summary([row]) and row["answer"] in load_summary([row])
        assert not load_frame([row]).loc[0, "not_measurable"]
