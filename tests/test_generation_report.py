"""Generation records in Report, the dashboard and Nightly experiments (issue 37, item 6): the
rows come from the checked GenerationRecord; a damaged record costs only its own rows (one line
naming the file and the field); a generation: section of an experiment file is checked as the
command line is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import REPO, damaged_copies, files_in, law_run, one_warning_each

#: (version directory name, damage, field the warning names)
DAMAGES = (
    ("no_tpot", lambda r: r["runtimes"][0]["metrics"].pop("tpot"), "runtimes[0].metrics.tpot"),
    ("nan_ttft", lambda r: r["runtimes"][1]["metrics"].update(ttft=float("nan")),
     "runtimes[1].metrics.ttft"),
    ("bad_ref", lambda r: r.update(reference="tensorflow"), "reference"),
    ("twice", lambda r: r["runtimes"].append(r["runtimes"][0]), "runtimes"),
    ("huge_batch", lambda r: r["point"].update(batch_size=10**9), "point.batch_size"),
    ("kind", lambda r: r.update(record="load"), "record"),
)


@pytest.fixture(scope="module")
def generation_store(tmp_path_factory) -> tuple[Path, Path, dict[str, Path]]:
    """One real MeasureGeneration point (tiny_llama, prompt 16, batch 1, 4 tokens, torch and
    ONNX Runtime), copied as versions ``good`` and ``good2`` (a history) and once per damage."""
    src = tmp_path_factory.mktemp("gen") / "store"
    r = law_run("MeasureGeneration", "--version", "v1", "--runtimes", "torch,onnxruntime",
                "--prompt-lengths", "16", "--batch-sizes", "1", "--new-tokens", "4",
                "--interleave", "2", store=src, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    (record,) = [p for p in files_in(src) if p.name == "generation_p16_bs1.json"]
    store = tmp_path_factory.mktemp("hostile-gen") / "store"
    good, bad = damaged_copies(record, record.parent.relative_to(src).parent, store,
                               "generation_", DAMAGES)
    return store, good, bad


@pytest.mark.slow  # a real MeasureGeneration point (module fixture), then one law run each
@pytest.mark.parametrize("task", ["Report", "Dashboard"])
def test_hostile_generation_records_cost_only_their_rows(generation_store, tmp_path, task):
    """``law run Report`` and ``Dashboard`` over two good records and every damaged one:
    exit 0, one warning per damaged record naming its file and field, the good rows there."""
    import pandas as pd

    store, good, bad = generation_store
    good2 = good.parent.parent / "good2" / good.name
    out = tmp_path / "out"
    r = law_run(task, "--version", "x1", "--stores", str(store), store=out)
    assert r.returncode == 0, r.stdout + r.stderr
    one_warning_each(r.stdout + r.stderr, bad)
    if task == "Report":
        (csv,) = [p for p in files_in(out) if p.name == "generation.csv"]
        df = pd.read_csv(csv)
        assert sorted(set(df["path"])) == [str(good), str(good2)]
        assert sorted(df["runtime"]) == ["onnxruntime", "onnxruntime", "torch", "torch"]
        assert df["tpot_ms"].gt(0).all() and df["tpot_ms_low"].le(df["tpot_ms"]).all()
        (summary,) = [p for p in files_in(out) if p.name == "summary.txt"]
        text = summary.read_text()
        assert "generation (2 runtime points" in text and "TPOT " in text, text
    else:
        (index,) = [p for p in files_in(out) if p.name == "index.html"]
        html = index.read_text()
        assert 'id="generation-table"' in html and "TPOT ms [95% CI]" in html
        # two versions of one series: its TPOT history is drawn
        assert html.count("<svg") >= 2, html[-2000:]
        pages = [p for p in files_in(out) if p.parent.name == "models"
                 and p.name.startswith("tiny_llama")]
        assert len(pages) == 1 and 'id="model-generation-table"' in pages[0].read_text()


def _experiment(tmp_path: Path, generation: str, extra: str = "") -> Path:
    path = tmp_path / "gen.yaml"
    path.write_text("title: g\nmodel_files: [$MLP_BASE/models/generation/tiny_llama.py]\n"
                    f"generation: {generation}\n{extra}")
    return path


@pytest.mark.parametrize(("generation", "extra", "field"), [
    ("{new_tokens: 0}", "", "generation.new_tokens"),
    ("{new_tokens: 1000000000}", "", "generation.new_tokens"),
    ("{prompt_lengths: [100000]}", "", "generation.prompt_lengths"),
    ("{batch_sizes: [0]}", "", "generation.batch_sizes"),
    ("{runtimes: [tensorflow]}", "", "generation.runtimes"),
    ("{new_tokens: .nan}", "", "generation.new_tokens"),
    ("{tokens: 8}", "", "generation.tokens"),
    ("[16, 128]", "", "generation"),
    ("{new_tokens: 8}", "batch_sizes: [1]\n", "batch_sizes"),
    ("{new_tokens: 8}", "runtimes: [torch]\n", "runtimes"),
])
def test_hostile_generation_sections_are_one_line(tmp_path, monkeypatch, generation, extra,
                                                  field):
    """A hostile value of a generation: section is one line naming the file and the field."""
    from mlprof.errors import MLProfError
    from mlprof.experiments import load_experiment

    monkeypatch.setenv("MLP_BASE", str(REPO))
    path = _experiment(tmp_path, generation, extra)
    with pytest.raises(MLProfError) as e:
        load_experiment(path)
    text = str(e.value)
    assert "\n" not in text and str(path) in text and f"{field}:" in text, text


def test_shipped_generation_experiment_reads(monkeypatch):
    """experiments/generation_tiny_llama.yaml: the options of a short PlotGeneration."""
    from mlprof.experiments import load_experiment

    monkeypatch.setenv("MLP_BASE", str(REPO))
    exp = load_experiment(REPO / "experiments" / "generation_tiny_llama.yaml")
    assert exp.generation == {"prompt_lengths": (16,), "batch_sizes": (1,), "new_tokens": 8,
                              "runtimes": ("torch", "onnxruntime")}
    assert exp.model_files[0].endswith("models/generation/tiny_llama.py")


@pytest.mark.slow  # a real generation experiment: tiny_llama, prompt 16, batch 1, 4 tokens
def test_run_experiment_measures_a_generation_experiment(tmp_path, monkeypatch):
    """RunExperiment on a generation experiment: status ok, a PlotGeneration PNG and table."""
    monkeypatch.setenv("MLP_BASE", str(REPO))
    path = _experiment(tmp_path, "{prompt_lengths: [16], batch_sizes: [1], new_tokens: 4, "
                       "runtimes: [torch, onnxruntime], interleave: 2}")
    store = tmp_path / "store"
    r = law_run("RunExperiment", "--version", "e1", "--experiment-file", str(path),
                store=store, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    (status,) = [p for p in files_in(store) if p.name == "status.json"]
    st = json.loads(status.read_text())
    assert st["status"] == "ok", st
    assert any(p.endswith(".png") and "PlotGeneration" in p for p in st.get("plots", [])), st
