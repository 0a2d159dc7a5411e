"""MeasureGeneration and PlotGeneration (issue 37): the options' checks (hostile values are one
line, exit 40, nothing written), the generation record written and read back checked, the table
and the plot from records, and (slow) a real law run on the bundled decoder."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from mlprof.errors import CorruptResult, MLProfError
from mlprof.measure.generation.settings import (
    MAX_NEW_TOKENS,
    GenerationSettings,
)
from mlprof.results import families, layout, records
from tests.helpers import REPO, law_run

DECODER = str(REPO / "models" / "generation" / "tiny_llama.py")


# --- the options ------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, flag", [
    ({"new_tokens": 0}, "--new-tokens"), ({"new_tokens": 10 ** 9}, "--new-tokens"),
    ({"new_tokens": 1}, "--new-tokens"), ({"new_tokens": True}, "--new-tokens"),
    ({"prompt_lengths": (0,)}, "--prompt-lengths"),
    ({"prompt_lengths": (10 ** 9,)}, "--prompt-lengths"), ({"prompt_lengths": ()},
                                                           "--prompt-lengths"),
    ({"batch_sizes": (0,)}, "--batch-sizes"), ({"batch_sizes": (10 ** 6,)}, "--batch-sizes"),
    ({"runtimes": ("tensorflow",)}, "--runtimes"), ({"runtimes": ()}, "--runtimes"),
    ({"warmup": -1}, "--warmup"), ({"n_calls": 0}, "--n-calls"),
    ({"n_calls": 10 ** 9}, "--n-calls"), ({"interleave": 1}, "--interleave"),
    ({"min_duration": float("nan")}, "--min-duration"), ({"min_duration": 1e308},
                                                         "--min-duration"),
    ({"precision": "int8"}, "--precision"), ({"threads": -1}, "--threads"),
])
def test_a_hostile_option_is_one_line_naming_it(kw, flag):
    with pytest.raises(MLProfError) as e:
        GenerationSettings(**kw)
    assert str(e.value).startswith(f"{flag}:") and "\n" not in str(e.value)


def test_points_split_the_settings_and_the_reference_is_torch():
    s = GenerationSettings(prompt_lengths=(128, 16, 16), batch_sizes=(4, 1),
                           runtimes=("onnxruntime", "torch", "onnxruntime"))
    assert s.prompt_lengths == (16, 128) and s.runtimes == ("onnxruntime", "torch")
    assert [(p.prompt_length, p.batch_size) for p in s.points()] == [
        (16, 1), (16, 4), (128, 1), (128, 4)]
    assert s.reference == "torch"
    assert GenerationSettings(runtimes=("openvino", "onnxruntime")).reference == "openvino"


def test_a_prompt_longer_than_the_context_is_refused_naming_the_model():
    s = GenerationSettings(prompt_lengths=(16, 2040), new_tokens=16)
    s.check_context(4096, DECODER)
    with pytest.raises(MLProfError, match="2040 prompt tokens \\+ 16 new tokens = 2056, more "
                       "than the model's context of 2048") as e:
        s.check_context(2048, DECODER)
    assert str(e.value).startswith(f"{DECODER}: --prompt-lengths:")


@pytest.mark.parametrize("args, message", [
    (("--new-tokens", "0"), "--new-tokens: must be a whole number from 2 to"),
    (("--new-tokens", str(10 ** 9)), f"--new-tokens: must be a whole number from 2 to "
                                     f"{MAX_NEW_TOKENS}"),
    (("--model-file", str(REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml")),
     "--model-file: not a decoder"),
    (("--prompt-lengths", "0"), "--prompt-lengths: must be a whole number from 1 to"),
    # these two need the decoder: checked in a child when the task is made, before any branch
    pytest.param(("--prompt-lengths", "16,4096"),
                 f"{DECODER}: --prompt-lengths: 4096 prompt tokens + 32 new tokens = 4128, "
                 "more than the model's context of 2048 tokens", marks=pytest.mark.slow),
    pytest.param(("--model-file", str(REPO / "models" / "transformers" / "bert.py")),
                 "bert.py: is not a decoder (BertModel: model type 'bert' is an encoder",
                 marks=pytest.mark.slow),
])
def test_law_run_refuses_hostile_values_in_one_line_writing_nothing(args, message, store):
    r = law_run("PlotGeneration", "--version", "g1", *args, store=store)
    assert r.returncode == 40, r.stdout + r.stderr
    errors = [line for line in (r.stdout + r.stderr).splitlines() if "mlprof error" in line]
    assert len(errors) == 1 and message in errors[0], r.stdout + r.stderr
    assert not [p for p in store.rglob("*") if p.is_file()]


@pytest.mark.slow
def test_a_known_decoder_is_checked_from_the_store_cache_and_a_refusal_writes_nothing(store):
    """The first run loads the decoder in a child (and caches it, as its branches would); a
    later run with a prompt beyond the context is refused from the cache's decoder.json: no
    child, one line, exit 40, the store as it was."""
    first = law_run("PlotGeneration", "--version", "g1", "--prompt-lengths", "16",
                    "--print-status", "0", store=store)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "checking the decoder tiny_llama.py" in first.stdout + first.stderr
    before = sorted(p for p in store.rglob("*") if p.is_file())
    assert any(p.parent.name == "sources" for p in before)  # the source index
    r = law_run("PlotGeneration", "--version", "g1", "--prompt-lengths", "4096", store=store)
    assert r.returncode == 40, r.stdout + r.stderr
    assert "checking the decoder" not in r.stdout + r.stderr  # read from the cache
    errors = [line for line in (r.stdout + r.stderr).splitlines() if "mlprof error" in line]
    assert len(errors) == 1 and "more than the model's context of 2048 tokens" in errors[0]
    assert sorted(p for p in store.rglob("*") if p.is_file()) == before


# --- the record -------------------------------------------------------------------------------


def _metric(p50: float, lo: float, hi: float) -> dict:
    """A distribution as mlprof.measure.generation.metrics writes it."""
    def est(v: float) -> dict:
        return {"value": v, "low": min(lo, v), "high": max(hi, v)}

    return {"n": 6, "p50": est(p50), "p90": est(hi), "p99": est(hi)}


def a_record(prompt: int = 16, batch: int = 1, *, slow: float = 1.0) -> dict:
    """A generation record as MeasureGeneration writes it (the numbers made up)."""
    def runtime(name: str, ttft: float, tpot: float, agreement: dict | None) -> dict:
        return {"runtime": name, "version": "1.0", "info": {"library": name, "threads": 1},
                "metrics": {"ttft": _metric(ttft, ttft * 0.9, ttft * 1.1),
                            "tpot": _metric(tpot, tpot * 0.95, tpot * 1.05),
                            "decode_tokens_per_s": _metric(batch * 1000 / tpot,
                                                           batch * 950 / tpot,
                                                           batch * 1050 / tpot),
                            "prefill_tokens_per_s": _metric(batch * prompt * 1000 / ttft,
                                                            1.0, 1e6),
                            "e2e": _metric(ttft + 7 * tpot, 1.0, 1e4)},
                "agreement": agreement, "peak_rss_mb": 500.0, "calls": 6}

    base = 2.0 + prompt / 64
    return records.stamp({
        "mlprof_version": "0.0", "host": "vm", "cpu_model": "AMD EPYC 7B13", "threads": 1,
        "settings": {"new_tokens": 8, "threads": 1, "warmup": 1, "n_calls": 1},
        "environment": {"contended": False, "causes": []},
        "point": {"prompt_length": prompt, "batch_size": batch, "new_tokens": 8},
        "reference": "torch", "rounds": 6,
        "runtimes": [runtime("torch", base * batch * slow, 3.0 * slow, None),
                     runtime("onnxruntime", base * batch * 0.6, 1.5,
                             {"share": 1.0, "errors": 0, "first_divergence": None,
                              "steps": 8 * batch})],
        "speedups": [{"runtime": "onnxruntime", "reference": "torch", "metric": "tpot_ms",
                      "rounds": 6, "speedup": {"value": 2.0, "low": 1.8, "high": 2.2},
                      "significant": True}],
        "formulas": {"TPOT": "(E2E - TTFT) / (N - 1)"},
    }, "generation")


def test_a_record_reads_back_as_written(tmp_path):
    from mlprof.measure.generation.run import read_generation

    rec = a_record()
    path = tmp_path / "generation_p16_bs1.json"
    path.write_text(json.dumps(rec))
    back = read_generation(str(path))
    assert back == rec
    typed = records.GenerationRecord.from_json(rec)
    assert (typed.prompt_length, typed.batch_size, typed.new_tokens) == (16, 1, 8)
    assert [r.runtime for r in typed.runtimes] == ["torch", "onnxruntime"]
    assert typed.runtimes[1].agreement == {"share": 1.0, "errors": 0,
                                           "first_divergence": None, "steps": 8}
    assert typed.to_json() == rec


@pytest.mark.parametrize("damage, field", [
    (lambda r: r.pop("point"), "point"),
    (lambda r: r["point"].update(new_tokens=0), "point.new_tokens"),
    (lambda r: r["point"].update(prompt_length=True), "point.prompt_length"),
    (lambda r: r.update(record="load"), "record"),
    (lambda r: r.update(format_version=99), None),
    (lambda r: r.update(reference="openvino"), "reference"),
    (lambda r: r["runtimes"].append(copy.deepcopy(r["runtimes"][0])), "runtimes"),
    (lambda r: r["runtimes"][0]["metrics"].pop("tpot"), "runtimes[0].metrics.tpot"),
    (lambda r: r["runtimes"][1]["metrics"]["ttft"]["p50"].update(value=float("inf")),
     "runtimes[1].metrics.ttft.p50.value"),
    (lambda r: r["runtimes"][1].update(agreement=[1]), "runtimes[1].agreement"),
    (lambda r: r["runtimes"][0].update(calls=0), "runtimes[0].calls"),
    (lambda r: r["speedups"][0].update(runtime="tfaot"), "speedups[0].runtime"),
    (lambda r: r.update(runtimes=[]), "runtimes"),
])
def test_a_damaged_record_is_refused_naming_the_field(damage, field, tmp_path):
    from mlprof.measure.generation.run import read_generation

    rec = a_record()
    damage(rec)
    path = tmp_path / "generation_p16_bs1.json"
    # allow_nan: a record written by another tool may hold Infinity
    path.write_text(json.dumps(rec, allow_nan=True))
    with pytest.raises(CorruptResult) as e:
        read_generation(str(path))
    assert e.value.field == field and str(path) in str(e.value)
    # the store judges it by the same check
    assert families.check_file(str(path), check=families.check_generation_json)


def test_the_layout_names_points_and_parses_the_settings_back():
    seg = layout.generation_settings_segment(32, 1, 1, 0.5, 6, 2, "fp16")
    assert seg == "gen-new32_warmup1_calls1_mindur0p5_il6_threads2__prec-fp16"
    assert layout.parse_generation_settings_segment(seg) == {
        "new_tokens": 32, "warmup": 1, "n_calls": 1, "min_duration": 0.5, "interleave": 6,
        "threads": 2, "precision": "fp16"}
    parsed = layout.parse_settings_segment(seg)  # as the store reads it: part by part
    assert parsed["generation"]["new_tokens"] == 32 and not parsed["other"]
    assert parsed["precision"] == layout.PrecisionKey("fp16")
    assert layout.generation_files(layout.generation_point_tag(128, 4)) == {
        "csv": "generation_p128_bs4.csv", "json": "generation_p128_bs4.json"}
    assert layout.parse_generation_failure(layout.generation_failure_file("p16_bs1")) == \
        "p16_bs1"
    long = layout.generation_set_tag(list(range(1, 40)), [1, 2])
    assert len(long) < 60 and families.FAMILIES["PlotGeneration"].units([f"{long}.csv"])


# --- the table and the plot -------------------------------------------------------------------


def test_the_table_has_every_runtime_and_point_with_intervals():
    from mlprof.report.generation import COLUMNS, format_table, formulas_of, points_table

    recs = [a_record(p, b) for p in (16, 128) for b in (1, 4)]
    df = points_table(recs)
    assert list(df.columns[:len(COLUMNS)]) == list(COLUMNS) and len(df) == 8
    row = df[(df.runtime == "onnxruntime") & (df.prompt_length == 128) & (df.batch_size == 4)]
    assert float(row.tpot_ms.iloc[0]) == 1.5 and float(row.speedup_tpot.iloc[0]) == 2.0
    text = format_table(df, formulas_of(recs))
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["prompt", "batch", "runtime"]
    assert "1.500 [1.425, 1.575]" in text and "100.0 % (0 errors)" in text
    assert "reference" in text and "TPOT: (E2E - TTFT) / (N - 1)" in text
    assert "compiled" not in text  # no runtime compiled anything


def test_compile_time_is_a_column_and_a_note_apart_from_the_timings():
    from mlprof.report.generation import format_table, points_table

    rec = a_record()
    rec["runtimes"][1] = {**rec["runtimes"][1], "runtime": "torch-compile",
                          "info": {"library": "transformers", "compile_s": 21.445}}
    rec["speedups"][0]["runtime"] = "torch-compile"
    df = points_table([rec])
    assert list(df.compile_s.isna()) == [True, False] and df.compile_s.iloc[1] == 21.445
    assert "compiled before the timed rounds (not in TTFT or TPOT): torch-compile 21.4 s " \
           "(prompt 16, batch 1)" in format_table(df)
    assert "torch-compile" not in GenerationSettings().runtimes  # asked for, never a default


def test_the_plot_draws_every_runtime_and_batch(tmp_path):
    from mlprof.plotting import save_figure
    from mlprof.plotting.generation import corner_text, plot_generation
    from mlprof.report.generation import points_table

    recs = [a_record(p, b) for p in (16, 128, 512) for b in (1, 4)]
    fig = plot_generation(points_table(recs), title="tiny_llama, 8 new tokens",
                          top_right_label=corner_text(recs))
    labels = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    assert "torch, batch 4" in labels and "onnxruntime, prompt 512" in labels
    assert corner_text(recs).startswith("torch 1.0, onnxruntime 1.0 | ")
    out = tmp_path / "generation.png"
    save_figure(fig, [str(out)])
    assert out.read_bytes().startswith(b"\x89PNG")


# --- a real run ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_plot_generation_measures_once_and_again_for_other_new_tokens(store):
    args = ("--version", "g1", "--runtimes", "torch,onnxruntime", "--prompt-lengths", "16",
            "--batch-sizes", "1", "--new-tokens", "8")
    r = law_run("PlotGeneration", *args, store=store, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "TTFT ms [95% CI]" in r.stdout and "onnxruntime" in r.stdout
    jsons = sorted(store.glob("MeasureGeneration/*/*/*/g1/generation_p16_bs1.json"))
    assert len(jsons) == 1
    stamp = os.stat(jsons[0]).st_mtime_ns
    again = law_run("PlotGeneration", *args, store=store, timeout=300)
    assert again.returncode == 0 and "0 ran" in again.stdout, again.stdout + again.stderr
    assert os.stat(jsons[0]).st_mtime_ns == stamp  # nothing measured
    other = law_run("PlotGeneration", *args[:-1], "9", store=store, timeout=900)
    assert other.returncode == 0, other.stdout[-3000:] + other.stderr[-3000:]
    assert len(sorted(store.glob("MeasureGeneration/*/*/*/g1/generation_p16_bs1.json"))) == 2
    rec = json.loads(Path(sorted(store.glob("MeasureGeneration/*/*/gen-new9*/g1/"
                                            "generation_p16_bs1.json"))[0]).read_text())
    assert rec["point"]["new_tokens"] == 9 and rec["record"] == "generation"


@pytest.mark.slow
def test_a_runtime_that_cannot_run_the_model_costs_only_its_row(tmp_path):
    """onnxruntime-genai's builder has no GPT-2: its row says why, torch's is measured."""
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_layer=2, n_embd=64, n_head=2, vocab_size=512, n_positions=256))
    model.save_pretrained(tmp_path / "tiny_gpt2")
    r = law_run("PlotGeneration", "--version", "f1", "--model-file", str(tmp_path / "tiny_gpt2"),
                "--runtimes", "torch,onnxruntime", "--prompt-lengths", "8", "--batch-sizes", "1",
                "--new-tokens", "4", store=tmp_path / "store", timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "onnxruntime  not run: " in r.stdout
    assert "cannot export GPT2LMHeadModel" in r.stdout
    (path,) = (tmp_path / "store").glob("MeasureGeneration/**/generation_p8_bs1.json")
    rec = records.GenerationRecord.from_json(json.loads(path.read_text()), str(path))
    assert [x.runtime for x in rec.runtimes] == ["torch"] and rec.reference == "torch"
    assert [f["runtime"] for f in rec.to_json()["failed"]] == ["onnxruntime"]
    bad = copy.deepcopy(rec.to_json())
    bad["failed"] = [{"runtime": "torch", "error": "x"}]
    with pytest.raises(CorruptResult, match="both ran and failed"):
        records.GenerationRecord.from_json(bad, "g.json")
