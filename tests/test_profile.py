"""Per-operator profiles (issue 14, item 1): real ONNX Runtime and torch profiles whose operator
times add up to the profiled calls' wall time, ProfileRuntime/PlotProfile through `law run`,
and runtimes that cannot be profiled refused in one line."""

from __future__ import annotations

import csv
import json
import os

import pytest

from mlprof.errors import MLProfError
from mlprof.measure import MeasureSettings
from mlprof.measure.profile import aggregate, profile_isolated, read_profile
from mlprof.runtimes.base import RUNTIME_OVERHEAD
from tests.helpers import FAST, REPO, files_in, law_run

CNN = str(REPO / "examples" / "cnn" / "model_onnx_cnn.yaml")
CONV_SCRIPT = str(REPO / "models" / "selftest" / "conv.py")


def _check_sums(result) -> None:
    """Shares sum to 1, the operators' times to the provenance's operator sum, all rows
    (with the runtime's overhead) to the coverage's numerator."""
    p = result.provenance
    assert sum(r.share for r in result.ops) == pytest.approx(1.0, abs=1e-9)
    ops = [r for r in result.ops if r.op_type != RUNTIME_OVERHEAD]
    assert sum(r.ms_per_call for r in ops) == pytest.approx(p["op_ms_per_call"])
    whole = sum(r.ms_per_call for r in result.ops)
    assert whole == pytest.approx(p["op_ms_per_call"] + p["overhead_ms_per_call"])
    assert p["coverage"] == pytest.approx(whole / p["wall_ms_per_call"])
    assert p["operator_coverage"] == pytest.approx(p["op_ms_per_call"] / p["wall_ms_per_call"])
    assert p["n_profiled_calls"] == len(p["wall_ms"]) == len(result.wall_ms)
    assert p["wall_ms_per_call"] == pytest.approx(sum(p["wall_ms"]) / len(p["wall_ms"]))


def test_aggregate_sums_per_type_per_call():
    rows = aggregate([("Conv", 2.0), ("Relu", 0.5), ("Conv", 1.0), ("Relu", 0.5)], n_calls=2)
    assert [(r.op_type, r.calls, r.ms_per_call) for r in rows] == [("Conv", 1, 1.5),
                                                                  ("Relu", 1, 0.5)]
    assert [r.share for r in rows] == [0.75, 0.25]


def test_one_stalled_call_does_not_move_the_per_call_median():
    """Injected samples: DynamicQuantizeMatMul at 0.033 ms in each of 20 calls, but 1,770 ms in
    one (a stall). The mean says +88.5 ms per call; the median, what profiles are compared by,
    stays 0.033 ms; a profiler that does not tell the calls apart gives means only."""
    events = [("DynamicQuantizeMatMul", 1770.0 if i == 7 else 0.033, i) for i in range(20)]
    events += [("Relu", 0.01, i) for i in range(0, 20, 2)]  # every other call: median 0.005
    (dq, relu) = aggregate(events, n_calls=20)
    assert dq.ms_per_call == pytest.approx((1770.0 + 19 * 0.033) / 20)
    assert dq.median_ms_per_call == pytest.approx(0.033) and dq.typical_ms == dq.median_ms_per_call
    assert relu.median_ms_per_call == pytest.approx(0.005)
    without = aggregate([(name, ms) for name, ms, _ in events], n_calls=20)
    assert all(r.median_ms_per_call is None for r in without)
    assert without[0].typical_ms == without[0].ms_per_call


def test_the_operator_diff_holds_under_a_stall_and_a_contended_profile_is_marked():
    """ComparePrecisions' line from the medians: the stalled call of the int8 profile does
    not become ``+88.6 ms DynamicQuantizeMatMul``; a contended profile's line is marked like
    the other tables mark a contended measurement; means where a profile has no medians."""
    from mlprof.measure.profile import OpRow
    from mlprof.report.precision import marked_why, why_not_faster

    fp32 = aggregate([("MatMul", 0.05, i) for i in range(20)], n_calls=20)
    low = aggregate([("DynamicQuantizeMatMul", 1770.0 if i == 7 else 0.07, i)
                     for i in range(20)], n_calls=20)
    line = why_not_faster(fp32, low, "int8-dynamic")
    assert line.startswith("+0.07 ms DynamicQuantizeMatMul (new)"), line
    assert "saves 0.05 ms, most in MatMul (gone)" in line
    old = [OpRow(r.op_type, r.calls, r.ms_per_call, r.share) for r in low]  # no medians
    assert why_not_faster(fp32, old, "int8-dynamic").startswith("+88.6 ms DynamicQuantizeMatMul")
    marked = marked_why(line, ["int8-dynamic"])
    assert marked.startswith("! contended profile (int8-dynamic: ") and marked.endswith(line)
    assert marked_why(line, []) == line


def test_profiles_with_and_without_medians_read_back(tmp_path):
    from mlprof.measure.profile import CSV_COLUMNS_V1, ProfileResult

    prov = {"runtime": "onnxruntime", "runtime_version": "1", "profiler": "p", "batch_size": 1,
            "n_profiled_calls": 20, "wall_ms": [1.0], "wall_ms_per_call": 1.0,
            "op_ms_per_call": 1.0, "coverage": 1.0}
    (tmp_path / "p.json").write_text(json.dumps(prov))
    ops = aggregate([("Conv", 1770.0 if i == 7 else 0.5, i) for i in range(20)], n_calls=20)
    (tmp_path / "p.csv").write_text(ProfileResult(1, ops, [1.0]).csv_text())
    rows, _ = read_profile(str(tmp_path / "p.csv"), str(tmp_path / "p.json"))
    assert rows[0].median_ms_per_call == pytest.approx(0.5)
    (tmp_path / "old.csv").write_text(",".join(CSV_COLUMNS_V1) + "\nConv,1,1.5,1\n")
    rows, _ = read_profile(str(tmp_path / "old.csv"), str(tmp_path / "p.json"))
    assert rows[0].median_ms_per_call is None and rows[0].typical_ms == 1.5


def _conv_model(path) -> str:
    """A 3x3 convolution, 128 -> 128 channels on 32x32 (151 M multiply-adds per event), then a
    global average pool: the output stays small, since session.run copies it into numpy
    outside every node (a 2 MB output took 0.38 of 2.71 ms per call at batch size 8)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(
        np.random.default_rng(0).standard_normal((128, 128, 3, 3)).astype(np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("GlobalAveragePool", ["c"], ["y"])], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 128, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 128, 1, 1])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def test_onnxruntime_operators_add_up_to_the_wall_time(tmp_path):
    """A convolution that is nearly all of the call (~1.4 ms at batch size 1; the 20-30 µs
    per call outside the nodes, session.run and the profiler's own events, are ~2 %; with
    64 channels, 0.35 ms per call, coverage was 0.89-0.93 on a loaded machine): its nodes' times
    must be within 10 % of the wall time measured around session.run (a profile that
    dropped, double-counted or mis-scaled events, or kept the warm-up's, fails)."""
    model = _conv_model(tmp_path / "conv.onnx")
    for bs in (1, 8):
        result = _least_disturbed(model, MeasureSettings(batch_size=bs, runtime="onnxruntime",
                                                         n_calls=10, warmup=5, min_duration=0))
        p = result.provenance
        _check_sums(result)
        assert result.ops[0].op_type == "Conv" and result.ops[0].share > 0.8
        assert "GlobalAveragePool" in {r.op_type for r in result.ops}
        assert all(r.calls == 1 for r in result.ops)  # each node once per call
        assert p["profiler"] == "ONNX Runtime session profiling"
        assert 0.9 <= p["coverage"] <= 1.1, (bs, p["op_ms_per_call"], p["wall_ms_per_call"])
        # every event names its call: each type has its median over the calls, and the
        # profile records what else used the CPUs meanwhile
        assert all(r.median_ms_per_call is not None for r in result.ops)
        assert result.ops[0].median_ms_per_call == pytest.approx(
            result.ops[0].ms_per_call, rel=0.5)
        assert "contended" in p["environment"]


def _binding_ms() -> float:
    """What a profiled call costs outside ONNX Runtime's own spans on this machine: the wall
    time of an Identity model's call minus its operator and ``model_run`` time (the Python
    binding and the harness' clock around ``session.run``), the least of three profiles."""
    import tempfile

    from tests.onnx_factory import identity_model

    model = identity_model(os.path.join(tempfile.mkdtemp(), "identity.onnx"),
                           [("x", "float32", ["N", 10])])
    gaps = []
    for _ in range(3):
        p = profile_isolated(model, MeasureSettings(batch_size=1, runtime="onnxruntime",
                                                    n_calls=100, warmup=10,
                                                    min_duration=0.3)).provenance
        gaps.append(p["wall_ms_per_call"] - p["op_ms_per_call"] - p["overhead_ms_per_call"])
    return min(gaps)


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_onnxruntime_profile_of_the_cnn_adds_up_at_every_batch_size():
    """The example CNN (10 nodes): at batch size 1 its kernels are about half of a profiled
    call, the executor around them (scheduling, the profiler's ~3 µs per node) the other
    half. The profile names its convolutions and poolings and the runtime's overhead (from ONNX
    Runtime's own ``model_run`` spans, one per call), and all of them add up to within 10 % of
    the wall time around session.run at batch sizes 1, 8 and 64, profiled as the task does by
    default (0.3 s of calls), once the Python binding is taken out: what no span covers, the
    same for an Identity model (:func:`_binding_ms`). That part is the machine's: ~4 µs on the
    VM of issue 14 (coverage 0.94 at batch size 1 without taking it out), 18 µs on the VM of
    2026-11-25 (coverage 0.86-0.87 at batch size 1, also at aa9a969 and with ONNX Runtime
    1.31.1; 0.96 once the binding's 18 µs are taken out)."""
    binding = _binding_ms()
    for bs in (1, 8, 64):
        # best of 5: with 3, CI of 9ea2d5f had a net coverage of 0.896 at batch size 1
        result = _least_disturbed(CNN, MeasureSettings(batch_size=bs, runtime="onnxruntime",
                                                       n_calls=100, warmup=10,
                                                       min_duration=0.3), tries=5)
        p = result.provenance
        _check_sums(result)
        types = {r.op_type for r in result.ops}
        assert "MaxPool" in types and any("Conv" in t for t in types), types
        (overhead,) = [r for r in result.ops if r.op_type == RUNTIME_OVERHEAD]
        assert overhead.calls == 1 and overhead.ms_per_call > 0
        # the operators alone are inside the call, and fall short of it at batch size 1
        assert p["operator_coverage"] < p["coverage"]
        covered = p["op_ms_per_call"] + p["overhead_ms_per_call"]
        net = covered / (p["wall_ms_per_call"] - binding)
        assert 0.9 <= net <= 1.1, (bs, p["op_ms_per_call"], p["overhead_ms_per_call"],
                                   p["wall_ms_per_call"], binding)
        if binding <= 0.02 * p["wall_ms_per_call"]:  # a call long enough that the binding
            # does not matter: not batch size 8 on this VM (0.32 ms calls, the binding's
            # 18 us are 5.6 % of them: coverage 0.897 with a net coverage of 0.95, CI and a
            # quiet run of 2026-11-26)
            assert 0.9 <= p["coverage"] <= 1.1, (bs, covered, p["wall_ms_per_call"])


def _least_disturbed(model, settings: MeasureSettings, tries: int = 3):
    """The profile with the highest coverage of up to ``tries``: on a shared machine a call
    preempted between two operators (torch eager dispatches them from Python) loses wall time
    no operator accounts for (the fresh-clone CI, beside a corpus run: 0.81 at batch size 1).
    Preemption only lowers coverage, so the best of three is the machine's least disturbed
    run, while a profile that drops, double-counts or mis-scales events stays wrong in all."""
    best = None
    for _ in range(tries):
        result = profile_isolated(model, settings)
        if best is None or result.provenance["coverage"] > best.provenance["coverage"]:
            best = result
        if 0.9 <= best.provenance["coverage"] <= 1.1:
            break
    return best


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_torch_operators_add_up_to_the_wall_time():
    """The convolution script on torch eager: the outermost aten operators' times are within
    10 % of the wall time of the calls."""
    for bs in (1, 8):
        result = _least_disturbed(CONV_SCRIPT, MeasureSettings(
            batch_size=bs, runtime="torch", n_calls=5, warmup=2, min_duration=0))
        p = result.provenance
        _check_sums(result)
        assert "aten::conv2d" in {r.op_type for r in result.ops}
        assert p["profiler"] == "torch.profiler"
        assert 0.9 <= p["coverage"] <= 1.1, (bs, p["op_ms_per_call"], p["wall_ms_per_call"])


def test_a_runtime_without_a_profiler_is_refused_in_one_line(store):
    from mlprof.tasks.profile import PlotProfile, ProfileRuntime

    with pytest.raises(MLProfError) as err:
        ProfileRuntime(version="v", model_file=CONV_SCRIPT, runtime="torch-compile")
    assert "\n" not in str(err.value)
    assert str(err.value).startswith("--runtime: runtime torch-compile cannot be profiled")
    with pytest.raises(MLProfError, match="--runtime-version: profiles the installed"):
        PlotProfile(version="v", model_file=CNN, runtime_version="1.20.1")
    with pytest.raises(MLProfError, match="cannot be profiled"):
        profile_isolated(CONV_SCRIPT, MeasureSettings(batch_size=1, runtime="torch-compile"))
    proc = law_run("ProfileRuntime", "--version", "v", "--model-file", CONV_SCRIPT,
                   "--runtime", "torch-compile", store=store)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if "cannot be profiled" in ln]
    assert len(lines) == 1 and "mlprof error: --runtime: runtime torch-compile" in lines[0], \
        proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert not files_in(store / "ProfileRuntime")


def test_a_damaged_profile_is_named_with_file_and_field(tmp_path):
    csv_path, json_path = tmp_path / "p.csv", tmp_path / "p.json"
    csv_path.write_text("op_type,calls,ms_per_call,share\nConv,1,abc,1\n")
    json_path.write_text(json.dumps({"runtime": "onnxruntime"}))
    with pytest.raises(MLProfError, match=r"p\.json: runtime_version: missing"):
        read_profile(str(csv_path), str(json_path))
    json_path.write_text(json.dumps({k: 1 for k in (
        "runtime", "runtime_version", "profiler", "batch_size", "n_profiled_calls", "wall_ms",
        "wall_ms_per_call", "op_ms_per_call", "coverage")}))
    with pytest.raises(MLProfError, match=r"p\.csv: ms_per_call: line 2: not a number"):
        read_profile(str(csv_path), str(json_path))


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_plot_profile_end_to_end(store):
    proc = law_run("PlotProfile", "--version", "p", "--model-file", CNN, "--batch-sizes", "1,8",
                   "--file-types", "pdf,png", "--top-ops", "4", *FAST, store=store)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = files_in(store)
    branches = sorted(p for p in files if p.parent.parts[-5:-4] == ("ProfileRuntime",)
                      and p.name.startswith("profile_bs_"))
    # the time budget (default 60 s per batch size) is in the names; it did not cut these
    assert [p.name for p in branches] == ["profile_bs_1_budget60s.csv",
                                          "profile_bs_1_budget60s.json",
                                          "profile_bs_8_budget60s.csv",
                                          "profile_bs_8_budget60s.json"]
    for bs in (1, 8):
        prov = json.loads(next(p for p in branches if p.name == f"profile_bs_{bs}_budget60s"
                               ".json").read_text())
        assert prov["batch_size"] == bs and prov["n_profiled_calls"] == 10
        assert prov["budget_s"] == 60 and prov["cut_by_budget"] is False
        assert prov["task"]["family"] == "ProfileRuntime"
        with open(next(p for p in branches if p.name == f"profile_bs_{bs}_budget60s.csv")) \
                as f:
            rows = list(csv.DictReader(f))
        assert sum(float(r["share"]) for r in rows) == pytest.approx(1.0, abs=1e-4)
    plots = {p.suffix: p for p in files if p.parts[-6] == "PlotProfile"
             and p.name.startswith("profile_bs_1_8_top4_budget60s")}
    assert set(plots) == {".pdf", ".png", ".csv", ".txt"}
    assert plots[".pdf"].read_bytes()[:5] == b"%PDF-" and plots[".pdf"].stat().st_size > 5000
    with open(plots[".csv"]) as f:
        table = list(csv.DictReader(f))
    assert {int(r["batch_size"]) for r in table} == {1, 8}
    assert max(int(r["rank"]) for r in table) <= 4
    assert "batch size 8" in plots[".txt"].read_text()
    assert "batch size 1" in proc.stdout + proc.stderr  # the summary prints the table


def test_the_runtime_overhead_is_drawn_apart_from_the_operators():
    """The runtime's overhead is not an operator: never among the top types nor in "other",
    always its own part, on top of the stack (drawn last)."""
    from mlprof.measure.profile import OpRow
    from mlprof.plotting.profile import OTHER, Profile, stacked, top_types

    small = Profile(1, [OpRow(RUNTIME_OVERHEAD, 1, 0.6, 0.6), OpRow("Conv", 1, 0.3, 0.3),
                        OpRow("Relu", 1, 0.1, 0.1)], [1.0])
    big = Profile(64, [OpRow("Conv", 1, 9.0, 0.9), OpRow("Relu", 1, 0.9, 0.09),
                       OpRow(RUNTIME_OVERHEAD, 1, 0.1, 0.01)], [10.0])
    assert top_types([small, big], 1) == ["Conv"]
    parts = stacked([small, big], 1, "ms_per_call")
    assert list(parts) == ["Conv", OTHER, RUNTIME_OVERHEAD]
    assert parts[RUNTIME_OVERHEAD].tolist() == [0.6, 0.1]
    assert parts[OTHER].tolist() == [0.1, 0.9]
    # profiles without it (torch.profiler) have no such part
    assert RUNTIME_OVERHEAD not in stacked([Profile(1, [OpRow("Conv", 1, 1.0, 1.0)], [1.0])], 3,
                                           "share")


def test_a_time_budget_cuts_a_long_profile_and_says_so():
    """A budget stops the warm-up and the profiled calls of a model too slow for the settings
    (here: 100000 calls asked of the CNN, ~6 s, with a budget of 0.05 s): at least 3 calls
    are profiled, and the provenance and the plot's caption say that the budget cut them and
    how to get them all; without a budget, exactly --n-calls are profiled."""
    from mlprof.measure.profile import MIN_PROFILED_CALLS, profile
    from mlprof.plotting.profile import calls_caption

    settings = MeasureSettings(batch_size=1, n_calls=100000, warmup=100000, min_duration=0)
    cut = profile(CNN, settings, budget_s=0.05).provenance
    assert MIN_PROFILED_CALLS <= cut["n_profiled_calls"] < 100000
    assert 1 <= cut["warmup_calls"] < 100000
    assert cut["cut_by_budget"] is True and cut["budget_s"] == 0.05
    assert len(cut["wall_ms"]) == cut["n_profiled_calls"]
    text = calls_caption([cut])
    assert f"profiled calls: {cut['n_profiled_calls']} at batch size 1" in text
    assert "cut short by the time budget of 0.05 s" in text and "100000 calls" in text
    full = profile(CNN, MeasureSettings(batch_size=1, n_calls=7, warmup=2, min_duration=0),
                   budget_s=60).provenance
    assert full["n_profiled_calls"] == 7 and full["warmup_calls"] == 2
    assert full["cut_by_budget"] is False
    assert "cut short" not in calls_caption([full])


@pytest.mark.slow  # an OpenVINO session and 100 profiled calls
def test_openvino_counters_name_the_operators_of_the_cnn():
    """OpenVINO's performance counters: the CNN's two convolutions and its fully connected
    layers per call, their kernels' time most of a call at batch size 64 (0.91 measured).

    Two fully connected layers on an AVX2 host, one on an AVX-512 one: there the second (10
    outputs) takes under a microsecond, which the CPU plugin reports as ``NOT_RUN``
    (:class:`mlprof.runtimes.openvino._OvProfiler`)."""
    result = profile_isolated(CNN, MeasureSettings(batch_size=64, runtime="openvino",
                                                   n_calls=100, warmup=10, min_duration=0))
    ops = {r.op_type: r for r in result.ops}
    assert ops["Convolution"].calls == 2 and ops["FullyConnected"].calls in (1, 2), ops
    assert ops["MaxPool"].calls == 2, ops
    assert ops["Convolution"].ms_per_call > ops["Softmax"].ms_per_call
    prov = result.provenance
    assert prov["profiler"] == "OpenVINO performance counters"
    # the counters are each infer request's *last* call (mlprof.runtimes.openvino._OvProfiler),
    # the coverage divides them by the mean of all calls: a stall in that one call or in the
    # others moves it (1.16 in one CI run on this shared host). Against the calls they can be
    # compared with, the kernels are within a call (up to the counters' whole microseconds) and
    # most of an undisturbed one
    walls = prov["wall_ms"]
    assert 0.5 * min(walls) < prov["op_ms_per_call"] <= 1.05 * max(walls), \
        (prov["op_ms_per_call"], min(walls), max(walls))
    assert prov["operator_coverage"] == pytest.approx(
        prov["op_ms_per_call"] / prov["wall_ms_per_call"])
    assert prov["runtime_settings"]["requested"]["PERF_COUNT"] == "True"
