"""Precision as a sweep axis (issue 24): converted models (QuantizeModel), the error a lower
precision costs against fp32, the CPU's instruction sets, and the refusals up front."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from mlprof.errors import MLProfError
from mlprof.results import layout
from tests.helpers import DNN, FAST, REPO, law_run

# --- the vocabulary and the refusals ------------------------------------------------------------


@pytest.mark.parametrize("given, hint", [("int8", "int8-dynamic or int8-static"),
                                         ("float16", "fp16"), ("bfloat16", "bf16"),
                                         ("int4", None), ("", None)])
def test_an_unknown_precision_is_one_line_naming_the_valid_ones(given, hint):
    from mlprof.runtimes import check_precision

    with pytest.raises(MLProfError) as e:
        check_precision(given)
    text = str(e.value)
    assert "\n" not in text and text.startswith("--precision: unknown precision")
    assert "fp32, fp16, bf16, int8-dynamic, int8-static" in text
    assert (f"did you mean {hint}?" in text) == (hint is not None)


def test_names_are_normalized_not_guessed():
    from mlprof.runtimes import check_precision

    assert check_precision(" INT8_Dynamic ") == "int8-dynamic"
    assert check_precision("FP16") == "fp16"


def test_a_runtime_that_cannot_is_refused_naming_those_that_can():
    from mlprof.model.precision import check_runtime_precision

    with pytest.raises(MLProfError, match=r"^--precision: tensorflow does not measure at "
                       r"int8-dynamic \(it measures at fp32\); onnxruntime, torch, openvino do$"):
        check_runtime_precision("tensorflow", "int8-dynamic")
    with pytest.raises(MLProfError, match="onnxruntime does not measure at bf16"):
        check_runtime_precision("onnxruntime", "bf16")
    assert check_runtime_precision("ort", "int8-static") == "int8-static"


def test_bf16_on_openvino_needs_the_cpu_s_bf16_instructions():
    """OpenVINO's bf16 hint on a CPU without them reads back as f32: refused, not measured as
    a bf16 result that is an fp32 one."""
    from mlprof.model.precision import check_runtime_precision

    avx2 = frozenset({"avx2", "fma", "f16c"})
    with pytest.raises(MLProfError, match="openvino runs bf16 only on CPUs with AVX-512 BF16 or "
                       "AMX-BF16, and this one has none"):
        check_runtime_precision("openvino", "bf16", avx2)
    assert check_runtime_precision("openvino", "bf16", avx2 | {"avx512_bf16"}) == "bf16"


@pytest.mark.parametrize("value", [0, -1, 1001, 10**9, True, 2.5, "8"])
def test_calibration_counts_out_of_bounds_are_refused(value):
    from mlprof.model.precision import check_calibration_batches

    with pytest.raises(MLProfError, match="^--calibration-batches: must be"):
        check_calibration_batches(value)


@pytest.mark.parametrize("args, message", [
    (["--precision", "int9"], "--precision: unknown precision 'int9'"),
    (["--precision", "bf16"], "--precision: onnxruntime does not measure at bf16"),
    (["--precision", "int8-static", "--calibration-batches", "1000000000"],
     "--calibration-batches: must be from 1 to 1000, got 1000000000"),
    (["--precision", "int8-static", "--calibration-batches", "0"],
     "--calibration-batches: must be from 1 to 1000, got 0"),
    (["--precision", "int8-dynamic", "--calibration-batches", "4"],
     "--calibration-batches: applies to --precision int8-static only"),
    (["--model-file", str(REPO / "examples" / "dnn" / "model_tfaot_l10u128.yaml"),
      "--runtime", "tfaot", "--precision", "fp16"], "--precision: tfaot does not measure at fp16"),
])
def test_hostile_values_fail_up_front_in_one_line(args, message, store):
    r = law_run("PlotRuntimes", "--version", "v", "--batch-sizes", "1", *args, store=store)
    assert r.returncode == 40, r.stdout + r.stderr
    errors = [line for line in r.stderr.splitlines() if "mlprof error" in line or
              line.startswith("--")]
    assert any(message in line for line in (r.stdout + r.stderr).splitlines()), r.stderr
    assert len(errors) <= 2, errors
    assert not store.exists() or not any(p.is_file() for p in store.rglob("*"))


def test_the_plot_refuses_a_precision_one_of_its_runtimes_cannot(store):
    r = law_run("PlotMultiRuntimes", "--version", "v", "--model-files", str(DNN), "--runtimes",
                "onnxruntime,openvino", "--precisions", "fp32,bf16", store=store)
    assert r.returncode == 40
    assert "--precision: onnxruntime does not measure at bf16" in r.stderr


# --- the layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [layout.PrecisionKey("fp16"), layout.PrecisionKey("int8-dynamic"),
                                 layout.PrecisionKey("int8-static", 16),
                                 layout.PrecisionKey("fp32+int8-static", 4)])
def test_precision_segments_round_trip(key):
    measure = layout.MeasureKey(100, 1, 10, 0.5, 1, "random")
    segment = layout.measure_settings_segment(measure, None, key)
    if "+" not in key.precision:
        assert layout.parse_settings_segment(segment)["precision"] == key
    assert layout.parse_precision_segment(layout.precision_segment(key)) == key


def test_fp32_leaves_the_old_paths_alone_and_a_script_s_fp16_export_says_it_once():
    measure = layout.MeasureKey(100, 1, 10, 0.5, 1, "random")
    assert layout.measure_settings_segment(measure, None, layout.PrecisionKey()) == \
        layout.measure_segment(measure)
    fp16 = layout.ExportKey(18, "fp16")
    assert layout.measure_settings_segment(measure, fp16, layout.PrecisionKey("fp16")).endswith(
        "__onnx-op18-fp16")


# --- the error ----------------------------------------------------------------------------------


def test_the_error_is_what_a_hand_computation_gives():
    from mlprof.model.precision import output_error

    ref = np.array([[0.1, 0.7, 0.2, 0.0, 0.0, 0.0],
                    [0.5, 0.1, 0.1, 0.1, 0.1, 0.1]], dtype=np.float32)
    got = np.array([[0.1, 0.3, 0.6, 0.0, 0.0, 0.0],   # arg-max moved: 1 -> 2, still in top 5
                    [0.45, 0.1, 0.1, 0.1, 0.1, 0.15]], dtype=np.float32)
    other_ref = np.array([2.0, -4.0], dtype=np.float32)
    other = np.array([2.5, -4.0], dtype=np.float32)
    e = output_error([ref, other_ref], [got, other])
    assert e["max_abs_error"] == pytest.approx(0.5)               # |2.5 - 2.0|
    assert e["max_rel_error"] == pytest.approx(0.4 / 0.7)          # 0.4 of a largest 0.7
    assert e["top1_agreement"] == 0.5 and e["top5_agreement"] == 1.0
    with pytest.raises(MLProfError, match="1 outputs, the fp32 model has 2"):
        output_error([ref, other_ref], [got])


def test_scores_that_are_not_classes_have_no_agreement():
    from mlprof.model.precision import output_error

    e = output_error([np.ones((4, 1), np.float32)], [np.ones((4, 1), np.float32)])
    assert e == {"max_abs_error": 0.0, "max_rel_error": 0.0, "top1_agreement": None,
                 "top5_agreement": None, "nonfinite": None, "same_nonfinite": 0}


def test_nan_at_the_same_positions_is_no_error_and_nan_elsewhere_is_an_answer():
    """Identical NaNs (and infinities) at both precisions are no error; a NaN where fp32 has a
    number, or an overflow to inf, is an infinite error with its reason, written as JSON
    (which has no infinity) and read back as inf; NaNs are never subtracted."""
    from mlprof.model.precision import error_note, error_number, output_error

    nan, inf = np.nan, np.inf
    ref = np.array([[1.0, nan, 3.0, -inf]], np.float32)
    same = output_error([ref], [np.array([[1.5, nan, 3.0, -inf]], np.float32)])
    assert same["max_abs_error"] == pytest.approx(0.5) and same["nonfinite"] is None
    assert same["max_rel_error"] == pytest.approx(0.5 / 3.0) and same["same_nonfinite"] == 2
    moved = output_error([ref], [np.array([[nan, 2.0, 3.0, -inf]], np.float32)])
    overflow = output_error([np.array([1.0, 2.0], np.float32)],
                            [np.array([1.0, inf], np.float32)])
    other_inf = output_error([ref], [np.array([[1.0, nan, 3.0, inf]], np.float32)])
    assert moved["nonfinite"] == "nan-mismatch" and error_note(moved) == "nan-mismatch"
    assert overflow["nonfinite"] == other_inf["nonfinite"] == "inf"
    for e in (moved, overflow, other_inf):
        assert e["max_abs_error"] is None and e["max_rel_error"] is None
        json.dumps(e, allow_nan=False)  # a record, no Infinity in it
        assert error_number(e, "max_abs_error") == error_number(e, "max_rel_error") == inf
    # records of older mlprof versions held Infinity itself
    old = {"max_abs_error": inf, "max_rel_error": inf, "top1_agreement": 1.0}
    assert error_number(old, "max_abs_error") == inf and error_note(old) == "inf"
    assert error_note(same) == "" and error_number({}, "max_abs_error") is None


def test_the_machine_s_instruction_sets_are_recorded():
    from mlprof.sysinfo import ISA_FLAGS, cpu_flags, isa, system_info

    assert system_info()["isa"] == isa()
    assert set(isa()) == {ISA_FLAGS[f] for f in cpu_flags() if f in ISA_FLAGS}


# --- end to end ---------------------------------------------------------------------------------


def _branch(store: Path, runtime: str, precision: str, bs: int) -> dict:
    tag = "" if precision == "fp32" else f"__prec-{precision}"
    (path,) = [p for p in store.glob(f"MeasureRuntime/*/{runtime}-*/*/v/runtime_bs_{bs}.json")
               if p.parent.parent.name.endswith(f"input-random{tag}")]
    return json.loads(path.read_text())


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_int8_curves_record_their_error_and_reuse_the_converted_model(store):
    """Four curves (2 runtimes x 2 precisions); the int8 branches hold their error against
    fp32, equal to one computed by hand from the two models on the measurement's inputs; a
    second sweep reuses the converted model."""
    args = ["--version", "v", "--model-files", str(DNN), "--runtimes", "onnxruntime,openvino",
            "--precisions", "fp32,int8-dynamic", *FAST]
    r = law_run("PlotMultiRuntimes", *args, "--batch-sizes", "1,8", store=store)
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.startswith("batch size"))
    assert header.count("[ms]") == 4 and header.count("int8-dynamic") == 2, header
    (record,) = store.glob("QuantizeModel/*/prec-int8-dynamic/v/quantize.json")
    made = os.stat(record).st_mtime_ns

    import onnxruntime as ort

    from mlprof.measure.inputs import make_feeds
    from mlprof.model import read_model_file
    from mlprof.model.onnx_graph import resolve
    from mlprof.model.precision import output_error
    from mlprof.sysinfo import isa

    feed = make_feeds(resolve(read_model_file(DNN)).inputs, 8)[0]
    for runtime in ("onnxruntime", "openvino"):
        prov = _branch(store, runtime, "int8-dynamic", 8)
        err = prov["precision"]["error"]
        assert prov["precision"]["precision"] == "int8-dynamic"
        assert prov["precision"]["conversion"]["tool"].endswith("quantize_dynamic")
        assert prov["isa"] == isa()
        if runtime == "onnxruntime":  # by hand: both graphs run on the same inputs
            outs = []
            for f in (read_model_file(DNN).file, record.parent / "model.onnx"):
                s = ort.InferenceSession(str(f), providers=["CPUExecutionProvider"])
                outs.append(s.run(None, feed)[0].astype(np.float64))
            d = np.abs(outs[1] - outs[0])
            assert err["max_abs_error"] == pytest.approx(d.max(), rel=1e-6)
            assert err["max_rel_error"] == pytest.approx(d.max() / np.abs(outs[0]).max(),
                                                         rel=1e-6)
            assert err["top1_agreement"] == pytest.approx(
                np.mean(outs[0].argmax(1) == outs[1].argmax(1)))
            assert err["top5_agreement"] == output_error([outs[0]],
                                                         [outs[1]])["top5_agreement"]
        assert 0 < err["max_abs_error"] < 0.5, err  # int8 is not exact, and not garbage
        assert "error" not in _branch(store, runtime, "fp32", 8)["precision"]
        # the statistics table carries the same error, empty at fp32
        from mlprof.measure.stats import ERROR_COLUMNS, read_stats_csv

        for precision in ("int8-dynamic", "fp32"):
            (stats,) = [p for p in store.glob(f"MergeRuntimes/*/{runtime}*/*/v/stats_bs_1_8.csv")
                        if ("__prec-" in p.parent.parent.name) == (precision != "fp32")]
            table = read_stats_csv(stats)
            row8 = list(table["batch_size"]).index(8)
            for key in ERROR_COLUMNS:
                value = table[key][row8]
                if precision == "fp32":
                    assert np.isnan(value), (key, stats)
                else:
                    assert value == pytest.approx(err[key], rel=1e-5, nan_ok=True), key  # 6 digits

    r = law_run("PlotMultiRuntimes", *args, "--batch-sizes", "1,2", store=store)
    assert r.returncode == 0, r.stderr
    assert os.stat(record).st_mtime_ns == made
    assert "converted" not in r.stderr + r.stdout


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_int8_static_calibrates_on_the_number_of_batches_asked(store):
    r = law_run("MeasureRuntime", "--version", "v", "--batch-sizes", "4", "--precision",
                "int8-static", "--calibration-batches", "3", "--runtime", "onnxruntime", *FAST,
                store=store)
    assert r.returncode == 0, r.stderr
    (record,) = store.glob("QuantizeModel/*/prec-int8-static-cal3/v/quantize.json")
    recipe = json.loads(record.read_text())
    assert recipe["calibration_batches"] == 3 and recipe["format"] == "QDQ"
    assert recipe["op_types"].get("QuantizeLinear", 0) > 0
    (branch,) = store.glob("MeasureRuntime/*/*/*__prec-int8-static-cal3/v/runtime_bs_4.json")
    assert json.loads(branch.read_text())["precision"]["error"]["max_abs_error"] > 0


# --- why not faster -----------------------------------------------------------------------------


def test_the_operators_that_cost_the_speed_up_are_named():
    from mlprof.report.precision import op_diff, why_not_faster

    fp32 = [{"op_type": "FusedGemm", "ms_per_call": 0.10}, {"op_type": "Softmax",
                                                            "ms_per_call": 0.01}]
    int8 = [{"op_type": "DynamicQuantizeLinear", "ms_per_call": 0.05},
            {"op_type": "MatMulInteger", "ms_per_call": 0.07},
            {"op_type": "Relu", "ms_per_call": 0.02}, {"op_type": "Softmax",
                                                       "ms_per_call": 0.01}]
    diff = op_diff(fp32, int8)
    assert [r["op_type"] for r in diff] == ["MatMulInteger", "DynamicQuantizeLinear", "Relu",
                                            "Softmax", "FusedGemm"]
    assert diff[-1]["delta_ms"] == pytest.approx(-0.10) and diff[-1]["kind"] == "gone"
    text = why_not_faster(fp32, int8, "int8-dynamic")
    # 0.14 ms added (each of the three at least a tenth of it) against 0.10 saved
    assert text == ("+0.07 ms MatMulInteger (new), +0.05 ms DynamicQuantizeLinear (new, "
                    "conversion), +0.02 ms Relu (new); saves 0.1 ms, most in FusedGemm (gone)")
    assert why_not_faster(fp32, int8, "int8-dynamic", top=1).startswith(
        "+0.07 ms MatMulInteger (new); saves")
    assert why_not_faster(int8, int8, "int8-dynamic").startswith("no operator is slower")


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_compare_precisions_tables_speed_up_error_and_why(store):
    """The table of batch size x precision: a speed-up with its interval and the error per
    lower precision, and a reason (named operators) where it gains less than 1.2x."""
    r = law_run("ComparePrecisions", "--version", "v", "--precisions", "fp32,int8-dynamic",
                "--batch-sizes", "1", "--interleave", "6", "--n-calls", "20", "--warmup", "2",
                "--time-budget", "5", store=store)
    assert r.returncode == 0, r.stderr
    (table,) = store.glob("ComparePrecisions/*/*/*__prec-fp32+int8-dynamic/v/precisions_*.csv")
    import csv

    rows = list(csv.DictReader(table.read_text().splitlines()))
    assert [(x["batch_size"], x["precision"]) for x in rows] == [("1", "fp32"),
                                                                 ("1", "int8-dynamic")]
    low = rows[1]
    assert float(low["ci_low"]) <= float(low["speedup"]) <= float(low["ci_high"])
    assert float(low["max_abs_error"]) > 0 and rows[0]["max_abs_error"] == ""
    if float(low["speedup"]) < 1.2:  # on this AVX2 VM: 0.77x at batch size 1
        assert low["why"] and " ms " in low["why"], low
        assert "why not faster" in r.stdout
    else:
        assert low["why"] == ""
    assert "int8-dynamic" in r.stdout and "95% CI" in r.stdout


# --- experiment files and the --compare path ----------------------------------------------------


def test_an_experiment_file_can_ask_for_a_precision_and_a_bad_one_is_its_own_line(tmp_path):
    from mlprof.experiments import load_experiment

    text = (REPO / "experiments" / "dnn_onnxruntime.yaml").read_text().replace(
        "settings:\n", "settings:\n  precision: int8-dynamic\n").replace(
        "../examples/", f"{REPO}/examples/")
    good = tmp_path / "good.yaml"
    good.write_text(text)
    assert load_experiment(good).settings["precision"] == "int8-dynamic"
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("int8-dynamic", "int8"))
    with pytest.raises(MLProfError) as e:
        load_experiment(bad)
    assert str(bad) in str(e.value) and "settings.precision" in str(e.value)
    assert "did you mean int8-dynamic or int8-static?" in str(e.value)


def test_precisions_are_not_a_compared_setting():
    from mlprof.measure.settings import parse_compare

    with pytest.raises(MLProfError, match="--compare: precisions are compared with "
                       "--precisions"):
        parse_compare("precision=fp32,int8-dynamic")


def test_plot_corners_name_the_instruction_sets_that_matter():
    from mlprof.plotting.labels import CurveInfo, corner_label, curve_info, isa_text

    assert isa_text(["AVX2", "FMA", "F16C"]) == "AVX2"
    assert isa_text("AVX2, FMA, AVX-512, AVX-512 VNNI") == "AVX-512 VNNI"
    assert isa_text(["AVX2", "FMA", "F16C", "AVX-512", "AVX-512 VNNI", "AVX-VNNI",
                     "AVX-512 BF16", "AVX-512 FP16", "AMX", "AMX-INT8", "AMX-BF16"]
                    ) == "AVX-512 VNNI/BF16/FP16+AMX INT8/BF16"  # a Sapphire Rapids Xeon
    assert isa_text(["AVX2", "AVX-VNNI"]) == "AVX2+AVX-VNNI"
    assert isa_text(None) == "" and isa_text(float("nan")) == ""
    info = curve_info("DNN", "onnxruntime", "1.32.0", {"cpu_model": "AMD EPYC 7763",
                                                         "host": "n1", "isa": ["AVX2", "FMA"]})
    assert corner_label([info], "cpu", 1) == "onnxruntime 1.32.0 | AMD EPYC 7763 (AVX2), " \
        "1 thread | host n1"
    assert corner_label([CurveInfo("DNN", "onnxruntime", ("1.32.0",))], "cpu", 1) == \
        "onnxruntime 1.32.0 | CPU, 1 thread"


def test_statistics_rows_carry_the_error_and_read_back(tmp_path):
    from mlprof.measure.stats import ERROR_COLUMNS, read_stats_csv, summarize, write_stats_csv

    error = {"max_abs_error": 0.25, "max_rel_error": 0.05, "top1_agreement": 0.875,
             "top5_agreement": True}  # not a number: written as empty, never as 1
    rows = [summarize(np.array([1.0, 2.0, 3.0]), 8, error=error),
            summarize(np.array([1.0, 2.0]), 1)]  # fp32: no error
    path = tmp_path / "stats_bs_1_8.csv"
    write_stats_csv(path, rows)
    table = read_stats_csv(path)
    assert [table[k][0] for k in ERROR_COLUMNS[:3]] == [0.25, 0.05, 0.875]
    assert np.isnan(table["top5_agreement"][0])
    assert all(np.isnan(table[k][1]) for k in ERROR_COLUMNS)


def _precision_table(path, why: str, speedup: str = "0.5") -> None:
    """A table as mlprof wrote it before ``error_note`` (it still reads)."""
    from mlprof.report.precision import COLUMNS_V1

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(",".join(COLUMNS_V1) + "\n"
                    "8,fp32,2,1,1,1,reference,,,,\n"
                    f'8,int8-dynamic,4,{speedup},0.45,0.55,slower,0.01,0.002,0.875,"{why}"\n')


def test_the_dashboard_shows_why_a_precision_is_not_faster_and_skips_a_damaged_table(
        tmp_path, caplog):
    """ComparePrecisions' tables reach the dashboard's front page: the lower precision's row
    with the fp32 median beside it and its reasons escaped; a damaged table is left out with a
    warning naming it, never read as numbers."""
    from mlprof.report import collect, to_frame
    from mlprof.report.collect import collect_precisions
    from mlprof.report.site import build_dashboard

    store = tmp_path / "store"
    base = store / "ComparePrecisions" / "dnn__0123abcd" / "onnxruntime-1.32.0__cpu"
    settings = "calls10_events1_warmup1_mindur0_threads1_input-random__prec-fp32+int8-dynamic"
    _precision_table(base / settings / "v1" / "precisions_bs_8_il6_budget60s.csv",
                     "+1.5 ms ConvInteger (new); <script>alert(1)</script>")
    damaged = base / (settings + "-x") / "v1" / "precisions_bs_8_il6_budget60s.csv"
    _precision_table(damaged, "x", speedup="1e400")  # inf: not a speed-up
    with caplog.at_level("WARNING", logger="mlprof"):
        rows = collect_precisions([store])
    assert [r["precision"] for r in rows] == ["fp32", "int8-dynamic"]
    assert rows[1]["model"] == "dnn" and rows[1]["top1_agreement"] == 0.875
    assert str(damaged) in caplog.text and "speedup in line 3" in caplog.text
    build_dashboard(to_frame(collect([store])), tmp_path / "site", precisions=rows)
    html = (tmp_path / "site" / "index.html").read_text()
    section = html.split('id="precisions"', 1)[1].split("</section>", 1)[0]
    assert "1 gain less than 1.2x" in section and "ConvInteger" in section
    assert "<script>" not in section and "&lt;script&gt;" in section
    cells = section.split("<tbody>", 1)[1]
    assert cells.count("<tr") == 1 and ">0.50x<" in cells and ">2<" in cells  # fp32 2 ms


def test_the_end_of_run_table_shows_the_error_of_a_lower_precision(tmp_path):
    from mlprof.measure.stats import medians_table, summarize, write_stats_csv

    fp32, int8 = tmp_path / "fp32.csv", tmp_path / "int8.csv"
    write_stats_csv(fp32, [summarize(np.array([2.0]), 1), summarize(np.array([8.0]), 8)])
    write_stats_csv(int8, [summarize(np.array([1.0]), 1, error={"max_rel_error": 0.046,
                                                                "top1_agreement": 0.969}),
                           summarize(np.array([4.0]), 8, error={"max_rel_error": 0.0012})])
    text = medians_table([("onnxruntime", fp32), ("onnxruntime int8-dynamic", int8)])
    errors = text.split("error against fp32", 1)[1].splitlines()
    assert errors[1].split() == ["batch", "size", "onnxruntime", "int8-dynamic"]
    assert errors[3].split() == ["1", "4.6%,", "top-1", "0.969"]
    assert errors[4].split() == ["8", "0.12%"]
    assert "error against" not in medians_table([("onnxruntime", fp32)])


def test_the_text_table_writes_no_e_notation():
    """ELECTRA-small's bf16 at batch size 64 on torch took 21.7 s per call: the table said
    ``2.167e+04``."""
    from mlprof.tasks.precision import format_precisions

    row = {"batch_size": 64, "precision": "bf16", "median_ms": 21670.3, "speedup": 0.169,
           "ci_low": 0.155, "ci_high": 0.182, "max_abs_error": 0.0000447,
           "top1_agreement": None, "why": ""}
    text = format_precisions([row], "electra_small", "torch")
    assert "21,670" in text and "0.0000447" in text and "e+" not in text and "e-" not in text


def test_an_infinite_error_is_an_answer_the_report_and_dashboard_show(tmp_path, caplog):
    """A lower precision whose outputs overflow or turn NaN where fp32's do not: the table
    says ``inf`` with the reason, reads back (never called damaged) and the dashboard shows
    "inf" and "NaN outputs differ"; a reason beside finite errors is a damaged table."""
    from mlprof.errors import CorruptResult
    from mlprof.report import collect, to_frame
    from mlprof.report.collect import collect_precisions
    from mlprof.report.precision import COLUMNS_V2 as COLUMNS  # before the rounds' columns
    from mlprof.report.precision import read_precision_table
    from mlprof.report.site import build_dashboard

    store = tmp_path / "store"
    base = store / "ComparePrecisions" / "dnn__0123abcd" / "onnxruntime-1.32.0__cpu"
    settings = "calls10_events1_warmup1_mindur0_threads1_input-random__prec-fp32+fp16+int8-dynamic"
    table = base / settings / "v1" / "precisions_bs_8_il6_budget60s.csv"
    table.parent.mkdir(parents=True)
    table.write_text(",".join(COLUMNS) + "\n"
                     "8,fp32,2,1,1,1,reference,,,,,\n"
                     "8,fp16,4,0.5,0.45,0.55,slower,inf,inf,1,inf,\n"
                     "8,int8-dynamic,3,0.7,0.6,0.8,slower,inf,inf,0.5,nan-mismatch,\n")
    with caplog.at_level("WARNING", logger="mlprof"):
        rows = collect_precisions([store])
    assert not caplog.text
    assert [(r["precision"], r["error_note"]) for r in rows] == [
        ("fp32", ""), ("fp16", "inf"), ("int8-dynamic", "nan-mismatch")]
    assert rows[1]["max_abs_error"] == float("inf")
    build_dashboard(to_frame(collect([store])), tmp_path / "site", precisions=rows)
    html = (tmp_path / "site" / "index.html").read_text()
    section = html.split('id="precisions"', 1)[1].split("</section>", 1)[0]
    cells = section.split("<tbody>", 1)[1]
    assert cells.count("<tr") == 2 and ">inf<" in cells and ">NaN outputs differ<" in cells
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(COLUMNS) + "\n8,fp16,4,0.5,0.45,0.55,slower,0.1,0.1,1,inf,\n")
    with pytest.raises(CorruptResult, match="error_note in line 2"):
        read_precision_table(bad)


@pytest.mark.slow  # a law run of three tasks
def test_compare_precisions_of_a_model_with_inf_outputs(store, tmp_path):
    """A model whose fp32 output is inf through ComparePrecisions: fp16 (a number there) has an
    infinite error with its reason, int8-dynamic (inf at the same position) a finite one; the
    table is read back by the dashboard's reader without being called damaged, and the
    end-of-run table says inf."""
    from mlprof.report.precision import read_precision_table
    from tests.onnx_factory import inf_output_model, write_yaml

    inf_output_model(tmp_path / "big.onnx")
    model = write_yaml(tmp_path / "big.yaml", "big.onnx", [{"name": "x", "shape": [16]}],
                       name="inf_matmul")
    r = law_run("ComparePrecisions", "--version", "v", "--model-file", model,
                "--precisions", "fp32,fp16,int8-dynamic", "--batch-sizes", "2",
                "--interleave", "6", "--n-calls", "5", "--warmup", "1", "--input-data", "ones",
                "--time-budget", "2", store=store)
    assert r.returncode == 0, r.stderr
    (table,) = store.glob("ComparePrecisions/inf_matmul*/*/*/v/precisions_*.csv")
    rows = read_precision_table(table)
    assert [x["precision"] for x in rows] == ["fp32", "fp16", "int8-dynamic"]
    assert rows[0]["max_abs_error"] is None and rows[0]["error_note"] == ""
    assert rows[1]["max_abs_error"] == float("inf") and rows[1]["error_note"] == "inf"
    assert rows[2]["max_abs_error"] == pytest.approx(16) and rows[2]["error_note"] == ""
    fp16_line = next(line for line in r.stdout.splitlines() if " fp16 " in line)
    assert " inf " in fp16_line + " "


def test_an_infinite_error_in_the_statistics_reads_back_as_inf(tmp_path):
    """MeasureRuntime's statistics of a lower precision whose outputs turned NaN: the error
    is inf in the CSV, reads back and the end-of-run table says so."""
    from mlprof.measure.stats import medians_table, read_stats_csv, summarize, write_stats_csv

    fp32, low = tmp_path / "fp32.csv", tmp_path / "fp16.csv"
    write_stats_csv(fp32, [summarize(np.array([2.0]), 1)])
    write_stats_csv(low, [summarize(np.array([1.0]), 1, error={
        "max_abs_error": None, "max_rel_error": None, "nonfinite": "nan-mismatch"})])
    assert read_stats_csv(low)["max_rel_error"][0] == float("inf")
    text = medians_table([("onnxruntime", fp32), ("onnxruntime fp16", low)])
    assert text.split("error against fp32", 1)[1].splitlines()[3].split() == ["1", "inf"]
