"""Experiment files: every field checked, errors name the file and the field."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from mlprof.errors import MLProfError
from mlprof.experiments import load_experiment, load_experiments

REPO = Path(__file__).resolve().parent.parent
DNN = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"
OTHER = REPO / "examples" / "dnn" / "model_onnx_l20u128.yaml"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_full_experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLP_BASE", str(REPO))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "a.onnx").write_bytes(b"x")
    (tmp_path / "models" / "b.onnx").write_bytes(b"x")
    path = write(tmp_path, "exp.yaml", """
title: "  Two   DNNs "
description: |
  several lines
active: false
priority: 5
model_files: [$MLP_BASE/examples/dnn/model_onnx_l10u128.yaml, models/*.onnx]
runtimes: [ort]
reference_runtime: onnxruntime
batch_sizes: [64, 1, 8, 8]
settings: {n_calls: 20, min_duration: 1, threads: 2}
""")
    e = load_experiment(path)
    assert e.title == "Two DNNs"
    assert e.description == "several lines"
    assert (e.active, e.priority) == (False, 5)
    assert e.model_files == (str(DNN), str(tmp_path / "models" / "a.onnx"),
                             str(tmp_path / "models" / "b.onnx"))
    assert e.runtimes == ("onnxruntime",)
    assert e.reference_runtime == "onnxruntime"
    assert e.batch_sizes == (1, 8, 64)
    assert e.settings == {"n_calls": 20, "min_duration": 1.0, "threads": 2}
    assert isinstance(e.settings["min_duration"], float)


def test_defaults(tmp_path: Path) -> None:
    e = load_experiment(write(tmp_path, "minimal.yaml", f"model_files: {DNN}\n"))
    assert e.title == "minimal"
    assert e.active is True and e.priority == 0
    assert e.runtimes == ("onnxruntime",)
    assert e.batch_sizes[0] == 1 and e.batch_sizes[-1] == 1024


@pytest.mark.parametrize("text, field, message", [
    ("title: [\n", "", "malformed YAML: line 2, column 1"),
    ("- a\n- b\n", "", "must be a mapping"),
    (f"model_files: {DNN}\ntitel: x\n", "titel", "unknown field"),
    ("title: x\n", "model_files", "missing"),
    ("model_files: /nonexistent/model.yaml\n", "model_files[0]", "no such file"),
    ("model_files: /nonexistent/*.onnx\n", "model_files[0]", "no file matches"),
    ("model_files: $MLP_UNDEFINED_VAR/m.yaml\n", "model_files[0]", "undefined variable"),
    ("model_files: []\n", "model_files", "non-empty list"),
    (f"model_files: {DNN}\nactive: yes please\n", "active", "true or false"),
    (f"model_files: {DNN}\npriority: high\n", "priority", "integer"),
    (f"model_files: {DNN}\nruntimes: [tensorflow2]\n", "runtimes", "tensorflow2"),
    (f"model_files: {DNN}\ndevice: gpu\n", "device", "gpu"),
    (f"model_files: {DNN}\nreference_runtime: torch\n", "reference_runtime",
     "not one of the runtimes"),
    (f"model_files: {DNN}\nbatch_sizes: [1, 0]\n", "batch_sizes",
     "batch sizes must be >= 1, got 0"),
    (f"model_files: {DNN}\nbatch_sizes: [1, two]\n", "batch_sizes", "must be an integer"),
    (f"model_files: {DNN}\nbatch_sizes: []\n", "batch_sizes", "at least one batch size"),
    (f"model_files: {DNN}\nbatch_sizes: 1-8\n", "batch_sizes", "list of integers >= 1"),
    (f"model_files: {DNN}\nsettings: [1]\n", "settings", "mapping"),
    (f"model_files: {DNN}\nsettings: {{n_cals: 3}}\n", "settings.n_cals", "unknown setting"),
    (f"model_files: {DNN}\nsettings: {{n_calls: 0}}\n", "settings.n_calls", ">= 1"),
    (f"model_files: {DNN}\nsettings: {{n_calls: 1.5}}\n", "settings.n_calls",
     "must be an integer"),
    (f"model_files: {DNN}\nsettings: {{min_duration: -1}}\n", "settings.min_duration",
     ">= 0"),
    (f"model_files: {DNN}\ntitle: [a]\n", "title", "string"),
    # exclude_files
    (f"model_files: {DNN}\nexclude_files: /nonexistent/*.py\n", "exclude_files[0]",
     "no file matches"),
    (f"model_files: {DNN}\nexclude_files: [{DNN}]\n", "exclude_files", "excludes every"),
    (f"model_files: {DNN}\nexclude_files: 3\n", "exclude_files", "non-empty list"),
    # rotate: the hostile values of the slice count
    (f"model_files: {DNN}\nrotate: {{}}\n", "rotate.slices", "missing"),
    (f"model_files: {DNN}\nrotate: {{slices: 0}}\n", "rotate.slices", ">= 1, got 0"),
    (f"model_files: {DNN}\nrotate: {{slices: -3}}\n", "rotate.slices", ">= 1, got -3"),
    (f"model_files: {DNN}\nrotate: {{slices: 1000000000000}}\n", "rotate.slices",
     "1000000000000 slices for 1 model file(s)"),
    (f"model_files: [{DNN}, {OTHER}]\nrotate: {{slices: 3}}\n", "rotate.slices",
     "3 slices for 2 model file(s)"),
    (f"model_files: {DNN}\nrotate: {{slices: .nan}}\n", "rotate.slices", "integer >= 1, got nan"),
    (f"model_files: {DNN}\nrotate: {{slices: .inf}}\n", "rotate.slices", "integer >= 1, got inf"),
    (f"model_files: {DNN}\nrotate: {{slices: 1.5}}\n", "rotate.slices", "integer >= 1, got 1.5"),
    (f"model_files: {DNN}\nrotate: {{slices: '1'}}\n", "rotate.slices", "got '1'"),
    (f"model_files: {DNN}\nrotate: {{slices: true}}\n", "rotate.slices", "got True"),
    (f"model_files: {DNN}\nrotate: {{slices: [1]}}\n", "rotate.slices", "got [1]"),
    (f"model_files: {DNN}\nrotate: {{slices: null}}\n", "rotate.slices", "got None"),
    (f"model_files: {DNN}\nrotate: 1\n", "rotate", "mapping like {slices: 16}"),
    (f"model_files: {DNN}\nrotate: [1]\n", "rotate", "mapping like {slices: 16}"),
    (f"model_files: {DNN}\nrotate:\n", "rotate", "mapping like {slices: 16}"),
    (f"model_files: {DNN}\nrotate: {{slice_size: 25}}\n", "rotate.slice_size", "unknown"),
    (f"model_files: {DNN}\nrotate: {{slices: 1, every: 2}}\n", "rotate.every", "unknown"),
])
def test_bad_fields(tmp_path: Path, text: str, field: str, message: str) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(MLProfError) as info:
        load_experiment(path)
    err = info.value
    assert err.file == str(path)
    assert (err.field or "").startswith(field)
    assert message in str(err)
    assert "\n" not in str(err)


def test_load_experiments_order_and_broken(tmp_path: Path) -> None:
    write(tmp_path, "b_low.yaml", f"model_files: {DNN}\npriority: -1\n")
    write(tmp_path, "a_broken.yaml", "model_files: /nope.yaml\n")
    write(tmp_path, "c_high.yml", f"model_files: {DNN}\npriority: 3\n")
    write(tmp_path, "notes.txt", "ignored")
    found = load_experiments(tmp_path)
    assert [Path(p).name for p, _, _ in found] == ["c_high.yml", "a_broken.yaml", "b_low.yaml"]
    assert found[1][1] is None and "no such file" in str(found[1][2])
    assert found[0][1].priority == 3 and found[0][2] is None


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(MLProfError, match="--experiments: no such directory"):
        load_experiments(tmp_path / "nope")


def test_shipped_examples_are_valid() -> None:
    found = load_experiments(REPO / "experiments")
    assert found, "the repository ships example experiments"
    assert all(err is None for _, _, err in found), [str(e) for _, _, e in found if e]


# rotating slices (rotate: {slices: N}) -------------------------------------------------------

def make_corpus(root: Path, n: int, dirs: tuple[str, ...] = ("vision", "nlp", "audio")
                ) -> list[Path]:
    """``n`` model scripts spread over ``dirs`` below ``root``."""
    files = []
    for i in range(n):
        path = root / dirs[i % len(dirs)] / f"model_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# a model script\n")
        files.append(path)
    return files


def rotating(tmp_path: Path, slices: int, n: int = 60) -> Path:
    """A corpus of ``n`` scripts and an experiment measuring it in ``slices`` slices."""
    make_corpus(tmp_path / "corpus", n)
    return write(tmp_path, "rotating.yaml",
                 f"model_files: [corpus/*/*.py]\nrotate: {{slices: {slices}}}\n")


def nights(start: str, n: int) -> list[str]:
    first = datetime.date.fromisoformat(start)
    return [f"nightly-{first + datetime.timedelta(days=i)}" for i in range(n)]


def test_rotation_covers_every_file_once_in_n_nights(tmp_path: Path) -> None:
    exp = load_experiment(rotating(tmp_path, 7))
    assert exp.slices == 7 and len(exp.model_files) == 60
    assert exp.model_keys[0] == "audio/model_002.py"  # relative to the glob's directory
    seen: list[str] = []
    numbers = []
    for version in nights("2026-11-22", 7):
        tonight, part = exp.for_night(version)
        assert part is not None and tonight.model_files == part.model_files
        assert part.total == 60 and part.slices == 7
        seen += tonight.model_files
        numbers.append(part.index)
    # 7 consecutive nights: 7 different slices, together every file exactly once
    assert sorted(numbers) == list(range(7))
    assert sorted(seen) == sorted(exp.model_files)
    assert len(seen) == len(set(seen))
    # the 8th night starts the next round: the first night's slice again
    first, eighth = exp.for_night("nightly-2026-11-22"), exp.for_night("nightly-2026-11-29")
    assert (eighth[1].index, eighth[0]) == (first[1].index, first[0])


def test_rotation_is_reproducible(tmp_path: Path) -> None:
    path = rotating(tmp_path, 5)
    a = load_experiment(path).for_night("2026-11-22")
    b = load_experiment(path).for_night("2026-11-22")  # loaded again: the same slice
    assert a == b
    # only the date in the version counts (a rerun or a prefix picks the same slice)
    for version in ("nightly-2026-11-22", "2026-11-22-rerun", "2026-11-22.2"):
        assert load_experiment(path).for_night(version)[1] == a[1]
    assert load_experiment(path).for_night("2026-11-23")[1].index == (a[1].index + 1) % 5
    assert a[1].as_dict() == {"night": "2026-11-22", "number": a[1].index + 1, "slices": 5,
                              "model_files": len(a[0].model_files), "total": 60,
                              "label": a[1].label}
    assert a[1].label == (f"slice {a[1].index + 1} of 5: {len(a[0].model_files)} of 60 "
                          "model files")


def test_adding_or_removing_a_script_moves_no_other(tmp_path: Path) -> None:
    path = rotating(tmp_path, 8)
    before = load_experiment(path).slice_assignment()
    new = tmp_path / "corpus" / "vision" / "added.py"
    new.write_text("# new\n")
    after = load_experiment(path).slice_assignment()
    assert set(after) == set(before) | {str(new)}
    assert {f: after[f] for f in before} == before
    gone = sorted(before)[10]
    Path(gone).unlink()
    again = load_experiment(path).slice_assignment()
    assert {f: s for f, s in after.items() if f != gone} == again


def test_slices_do_not_depend_on_the_checkout(tmp_path: Path) -> None:
    """The keys are relative to the glob's directory: a copy elsewhere has the same slices."""
    one = load_experiment(rotating(tmp_path / "one", 6))
    two = load_experiment(rotating(tmp_path / "elsewhere" / "two", 6))
    assert one.model_keys == two.model_keys
    assert list(one.slice_assignment().values()) == list(two.slice_assignment().values())


def test_slice_hash_is_pinned() -> None:
    """A stable hash (not Python's salted hash()): changing it would reshuffle every slice and
    break the rotation in the dashboard's history, so it is pinned."""
    from mlprof.experiments import slice_of

    assert [slice_of("timm/resnet18.py", 16), slice_of("transformers/bert.py", 16)] == [7, 10]


def test_slices_are_balanced_at_corpus_size(tmp_path: Path) -> None:
    exp = load_experiment(rotating(tmp_path, 16, n=430))
    sizes = [0] * 16
    for s in exp.slice_assignment().values():
        sizes[s] += 1
    assert sum(sizes) == 430
    assert min(sizes) >= 13 and max(sizes) <= 45, sizes  # mean 27


def test_rotation_needs_a_dated_version(tmp_path: Path) -> None:
    path = rotating(tmp_path, 4)
    exp = load_experiment(path)
    for version in ("n1", "2026-13-45", "20261122"):
        with pytest.raises(MLProfError) as info:
            exp.for_night(version)
        assert info.value.file == str(path) and info.value.field == "rotate"
        assert repr(version) in str(info.value) and "\n" not in str(info.value)
    # without rotate, any version: every model file
    plain = load_experiment(write(tmp_path, "plain.yaml", "model_files: [corpus/*/*.py]\n"))
    assert plain.for_night("n1") == (plain, None)


def test_exclude_files(tmp_path: Path) -> None:
    make_corpus(tmp_path / "corpus", 9)
    exp = load_experiment(write(tmp_path, "x.yaml", "model_files: [corpus/*/*.py]\n"
                                "exclude_files: [corpus/nlp/*.py, corpus/audio/model_002.py]\n"
                                "rotate: {slices: 2}\n"))
    assert [Path(f).relative_to(tmp_path / "corpus").as_posix() for f in exp.model_files] == [
        "audio/model_005.py", "audio/model_008.py", "vision/model_000.py",
        "vision/model_003.py", "vision/model_006.py"]
    assert exp.model_keys == ("audio/model_005.py", "audio/model_008.py",
                              "vision/model_000.py", "vision/model_003.py",
                              "vision/model_006.py")


def test_shipped_corpus_slice() -> None:
    """experiments/corpus_slice.yaml: models/*/*.py without selftest, 16 nights a round."""
    exp = load_experiment(REPO / "experiments" / "corpus_slice.yaml")
    corpus = sorted(str(p) for p in (REPO / "models").glob("*/*.py")
                    if p.parent.name != "selftest")
    assert sorted(exp.model_files) == corpus
    assert exp.runtimes == ("onnxruntime", "torch") and exp.slices == 16
    covered = [f for v in nights("2026-01-01", 16) for f in exp.for_night(v)[0].model_files]
    assert sorted(covered) == corpus


@pytest.mark.slow
def test_run_experiment_records_the_slice(tmp_path: Path) -> None:
    """A night measures only its slice and says which; a version without a date fails the
    experiment (one line naming the file and rotate), not the night."""
    import json

    from tests.helpers import law_run

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("linear", "mlp", "conv"):
        (corpus / f"{name}.py").write_text((REPO / "models" / "selftest" / f"{name}.py")
                                           .read_text())
    path = write(tmp_path, "rot.yaml", "model_files: [corpus/*.py]\nrotate: {slices: 2}\n"
                 "batch_sizes: [1]\nsettings: {n_calls: 2, warmup: 0, min_duration: 0}\n")
    exp = load_experiment(path)
    version = next(v for v in nights("2026-11-22", 2) if exp.for_night(v)[0].model_files)
    tonight, part = exp.for_night(version)
    store = tmp_path / "store"
    for v in (version, "n1"):
        r = law_run("RunExperiment", "--version", v, "--experiment-file", str(path),
                    store=store, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (ok,) = store.glob(f"RunExperiment/*/{version}/status.json")
    status = json.loads(ok.read_text())
    assert status["status"] == "ok", status
    assert status["model_files"] == list(tonight.model_files)
    assert status["slice"] == part.as_dict()
    assert status["results"].endswith(part.label)
    (bad,) = store.glob("RunExperiment/*/n1/status.json")
    status = json.loads(bad.read_text())
    assert status["status"] == "failed"
    assert status["errors"] == [f"{path}: rotate: picks the night's slice from the date in "
                                "--version (YYYY-MM-DD, e.g. nightly-2026-11-22), but 'n1' has "
                                "none"]


def test_every_problem_of_a_file_in_one_error(tmp_path: Path) -> None:
    """Three wrong fields: one error naming all three, so that one edit fixes the file."""
    path = write(tmp_path, "three.yaml", f"""
model_files: [{DNN}]
rotate: {{slices: 16}}
runtimes: [onnxruntime, torchy]
settings: {{n_calls: -1}}
""")
    with pytest.raises(MLProfError) as err:
        load_experiment(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: 3 problems: rotate.slices: 16 slices for 1 model file(s)")
    assert "; runtimes: unknown runtime 'torchy'" in text
    assert text.endswith("; settings.n_calls: must be >= 1, got -1")


def test_one_problem_keeps_its_field(tmp_path: Path) -> None:
    path = write(tmp_path, "one.yaml", f"model_files: [{DNN}]\nbatch_sizes: [0]\n")
    with pytest.raises(MLProfError) as err:
        load_experiment(path)
    assert (err.value.file, err.value.field) == (str(path), "batch_sizes")


def test_an_empty_exclude_list_excludes_nothing(tmp_path: Path) -> None:
    e = load_experiment(write(tmp_path, "ex.yaml", f"model_files: [{DNN}, {OTHER}]\n"
                              "exclude_files: []\n"))
    assert e.model_files == (str(DNN), str(OTHER))


def test_a_runtime_that_cannot_measure_a_file_skips_that_pair_only(tmp_path: Path) -> None:
    """torch measures scripts, not an ONNX YAML model: that pair is skipped, with one line; the
    YAML model keeps onnxruntime and the script gets both."""
    from mlprof.experiments import plan

    script = REPO / "models" / "selftest" / "linear.py"
    e = load_experiment(write(tmp_path, "mixed.yaml", f"model_files: [{DNN}, {script}]\n"
                              "runtimes: [onnxruntime, torch]\n"))
    p = plan(e)
    assert p.pairs == ((str(DNN), ("onnxruntime",)), (str(script), ("onnxruntime", "torch")))
    assert p.errors == ()
    (line,) = p.skipped
    assert line.startswith("skipped torch on model_onnx_l10u128.yaml: runtime torch measures "
                           "Python model scripts (.py)"), line
    only_torch = load_experiment(write(tmp_path, "torch.yaml", f"model_files: [{DNN}]\n"
                                       "runtimes: [torch]\n"))
    assert plan(only_torch).errors == (
        "model_onnx_l10u128.yaml: none of the runtimes (torch) measures it",)
