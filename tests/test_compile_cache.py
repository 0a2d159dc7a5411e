"""Compiled artifacts kept in the store (issue 38, item 3): torch.compile's inductor caches live
in ``<store>/cache/compiled/<model>/<runtime-version>/<settings>`` and a second run, under
another ``--version``, loads the compiled code instead of compiling; the compile time is
recorded apart from the measurement (``compile_s``, ``compile_cache``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlprof.results import layout, records
from tests.helpers import FAST, REPO, files_in, law_run

SCRIPT = str(REPO / "models" / "selftest" / "linear.py")


def _torch_compile_branch(store: Path, version: str) -> dict:
    """The torch-compile branch record of ``version`` (read through its typed class)."""
    found = [p for p in files_in(store / "MeasureRuntime")
             if p.name == "runtime_bs_1.json" and p.parent.name == version
             and "torch-compile-" in str(p)]
    assert len(found) == 1, found
    obj = json.loads(found[0].read_text())
    rec = records.BranchRecord.from_json(obj, str(found[0]))
    assert rec.compile_s is not None and rec.compile_s > 0
    return obj


def test_the_cache_directory_is_keyed_like_exports(tmp_path):
    path = layout.compile_cache_dir("linear", "ff1a27c7" * 8, "torch-compile", "2.14.1",
                                    "fp32_threads1", store=str(tmp_path))
    assert path == str(tmp_path / "cache" / "compiled" / "linear__ff1a27c7"
                       / "torch-compile-2.14.1" / "fp32_threads1")


@pytest.mark.slow
def test_a_second_version_compiles_nothing(tmp_path):
    """The acceptance run: two PlotSpeedup runs of linear.py under two versions in one store;
    the first exports and compiles the model ahead of time (an AOTInductor package in the
    store's cache: a miss), the second loads that package (a hit: no tracing, no code
    generated or built) and its compile time is the package's load."""
    pytest.importorskip("torch")
    store = tmp_path / "store"
    for version in ("v1", "v2"):
        r = law_run("PlotSpeedup", "--version", version, "--model-files", SCRIPT,
                    "--batch-sizes", "1", "--file-types", "svg", *FAST, store=store,
                    timeout=1200)
        assert r.returncode == 0, r.stderr[-3000:]
        # the compile is reported apart, in the run's own output
        assert "compiled in " in r.stdout + r.stderr
    first, second = _torch_compile_branch(store, "v1"), _torch_compile_branch(store, "v2")
    assert first["compile_cache"] == "miss"
    assert first["runtime_settings"]["compile"]["counters"] == {"aoti_package_hit": 0,
                                                                 "aoti_package_miss": 1}
    assert second["compile_cache"] == "hit"
    assert second["runtime_settings"]["compile"]["counters"] == {"aoti_package_hit": 1,
                                                                  "aoti_package_miss": 0}
    assert second["runtime_settings"]["compile"]["mode"].startswith("aot ")
    # both runs used the one package in the store, keyed by model, torch version, settings
    package = Path(first["runtime_settings"]["compile"]["package"])
    assert package == Path(second["runtime_settings"]["compile"]["package"])
    assert package.is_relative_to(store / "cache" / "compiled") and package.is_file()
    assert package.parent.name == "fp32_threads1" and package.suffix == ".pt2"
    # no half-written package left beside it
    assert not [p for p in package.parent.iterdir() if p.name.startswith(".partial-")]


@pytest.mark.slow
def test_a_model_that_does_not_export_whole_uses_torch_compile(tmp_path, monkeypatch):
    """A model with a graph break (``torch.export`` refuses it) is compiled by torch.compile
    with inductor's caches in the same directory; the record says so and why."""
    torch = pytest.importorskip("torch")
    from mlprof.runtimes.torch import TorchCompileRuntime, resolve_script

    script = tmp_path / "breaks.py"
    script.write_text(
        "import torch\n"
        "class Breaks(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 2)\n"
        "    def forward(self, x):\n"
        "        y = self.lin(x)\n"
        "        if float(y.detach().sum()) > 1e9:  # data-dependent: a graph break\n"
        "            return y * 2\n"
        "        return y\n"
        "model = Breaks().eval()\n"
        "model(torch.rand(1, 4))\n")
    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    rt = TorchCompileRuntime(resolve_script(str(script)))
    rt.load(1)
    fn, args = rt.bind({"x": torch.rand(1, 4).numpy()})
    phases: list[str] = []
    compiled = rt.compile(fn, args, phase=phases.append)
    # the progress line says what happens: the export was tried, torch.compile compiles
    assert phases == ["compiling with torch.export + AOTInductor (once per store)",
                      "compiling with torch.compile (torch.export failed)"]
    info = rt.info()["compile"]
    assert info["mode"] == "jit (torch.compile)"
    assert info["jit_because"].startswith("torch.export failed: ")
    assert compiled.cache == "miss" and "package" not in info
    out = fn(*args)
    assert tuple(out.shape) == (1, 2)


@pytest.mark.slow
def test_the_package_call_is_bare_for_one_output_and_rebuilds_a_tuple(tmp_path, monkeypatch):
    """Tensors in by position and one tensor out (linear.py): the handed-out call is the
    package's call and nothing around it (:class:`_AOTIPlainCall`); a model with two outputs
    keeps the general call, which rebuilds the tuple. Both answer what the module answers."""
    torch = pytest.importorskip("torch")
    from mlprof.runtimes.torch import TorchCompileRuntime, _AOTICall, _AOTIPlainCall, resolve_script

    two = tmp_path / "two.py"
    two.write_text(
        "import torch\n"
        "class Two(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 3)\n"
        "    def forward(self, x):\n"
        "        y = self.lin(x)\n"
        "        return y, y.relu() * 2\n"
        "torch.manual_seed(0)\n"
        "model = Two().eval()\n"
        "model(torch.rand(2, 4))\n")
    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    for script, width, plain in ((SCRIPT, 10, True), (str(two), 4, False)):
        rt = TorchCompileRuntime(resolve_script(script))
        rt.load(2)
        x = torch.rand(2, width)
        fn, args = rt.bind({rt.model.names[0]: x.numpy()})
        compiled = rt.compile(fn, args)
        assert compiled.cache == "miss" and rt.info()["compile"]["mode"].startswith("aot ")
        # once per session: a shared session's next call finds it compiled
        assert rt.compile(fn, args) is compiled
        assert type(fn) is (_AOTIPlainCall if plain else _AOTICall)
        # named in the compile mode: a history that crosses the change has an event there
        assert rt.info()["compile"]["mode"].endswith(", bare call)") is plain
        with torch.no_grad():
            want = rt.model.module(x)
        got = fn(*args)
        if plain:
            torch.testing.assert_close(got, want)
        else:
            assert isinstance(got, tuple) and len(got) == 2
            torch.testing.assert_close(got[0], want[0])
            torch.testing.assert_close(got[1], want[1])


@pytest.mark.slow
def test_an_interleaved_comparison_compiles_torch_compile_sessions(tmp_path, monkeypatch):
    """Interleaved, each round's new torch-compile session is compiled before its first call
    (before, the comparison failed at it: the package was never loaded), and the record keeps
    the first round's compile apart."""
    pytest.importorskip("torch")
    from mlprof.measure import MeasureSettings
    from mlprof.measure.interleave import Config, measure_interleaved

    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    configs = [Config("torch", SCRIPT, "torch"), Config("torch-compile", SCRIPT, "torch-compile")]
    r = measure_interleaved(configs, MeasureSettings(batch_size=1, n_calls=20, warmup=2), 6)
    assert r.round_medians_ms.shape == (6, 2) and (r.round_medians_ms > 0).all()
    eager, compiled = r.provenance["configs"]
    assert "compile_s" not in eager
    assert compiled["compile_s"] > 0 and compiled["compile_cache"] == "miss"
    assert compiled["runtime_settings"]["compile"]["mode"].startswith("aot ")


TFAOT_DNN = str(REPO / "examples" / "dnn" / "model_tfaot_l10u128.yaml")


def _tfaot_branch(store: Path, version: str) -> dict:
    """The tfaot branch record of ``version`` at batch size 1 (read through its typed class)."""
    found = [p for p in files_in(store / "MeasureRuntime")
             if p.name == "runtime_bs_1.json" and p.parent.name == version]
    assert len(found) == 1, found
    obj = json.loads(found[0].read_text())
    records.BranchRecord.from_json(obj, str(found[0]))
    return obj


def _entries(directory: Path) -> dict[str, int]:
    """XLA's cache entries in ``directory``: name -> modification time (ns)."""
    return {p.name: p.stat().st_mtime_ns for p in directory.iterdir()
            if p.name.endswith("__XLA_CPU_JIT.pb")}


@pytest.mark.slow
def test_tfaot_keeps_xla_executables_in_the_store(tmp_path):
    """Two measurements of the AOT DNN under two versions in one store: the first compiles
    with XLA and XLA writes the executable into the store's cache (a miss), the second loads
    it (a hit): no entry written or rewritten. The compile is recorded apart (``compile_s``,
    tracing and XLA's part per size in ``runtime_settings.compile``)."""
    pytest.importorskip("tensorflow")
    store = tmp_path / "store"
    seen = []
    for version in ("v1", "v2"):
        r = law_run("MeasureRuntime", "--version", version, "--model-file", TFAOT_DNN,
                    "--batch-sizes", "1", *FAST, store=store)
        assert r.returncode == 0, r.stderr[-3000:]
        out = r.stdout + r.stderr
        assert "compiled in " in out
        # TensorFlow's and XLA's noise about a loaded entry is not shown (mlprof.measure.quiet)
        assert "XlaSerializedCacheEntry" not in out and "prefer-no-scatter" not in out
        compile_info = _tfaot_branch(store, version)["runtime_settings"]["compile"]
        seen.append(_entries(Path(compile_info["cache_dir"])))
    first, second = _tfaot_branch(store, "v1"), _tfaot_branch(store, "v2")
    assert first["compile_cache"] == "miss" and second["compile_cache"] == "hit"
    c1, c2 = first["runtime_settings"]["compile"], second["runtime_settings"]["compile"]
    assert c1["counters"] == {"xla_entries_loaded": 0, "xla_entries_written": 1}
    assert c2["counters"] == {"xla_entries_loaded": 1, "xla_entries_written": 0}
    assert c1["cache_by_size"] == {"1": "miss"} and c2["cache_by_size"] == {"1": "hit"}
    # one directory, keyed like exports: model, TensorFlow's version, threads and CPU
    cache = Path(c1["cache_dir"])
    assert c2["cache_dir"] == c1["cache_dir"] and c1["cache_refused"] is None
    assert cache.is_relative_to(store / "cache" / "compiled")
    assert cache.parent.name == f"tfaot-{first['runtime_version']}"
    assert cache.name.startswith("threads1_cpu") and "_flags" not in cache.name
    # the second run compiled nothing: the one entry is the first run's, untouched
    assert len(seen[0]) == 1 and seen[1] == seen[0]
    for rec in (first, second):
        assert rec["compile_s"] > 0
        assert set(rec["runtime_settings"]["compile"]["xla_ms"]) == {"1"}
        assert rec["runtime_settings"]["xla_flags"]["TF_XLA_FLAGS"] == (
            f"--tf_xla_persistent_cache_directory={cache}")


@pytest.mark.slow
def test_tfaot_does_not_use_a_linked_cache_directory(tmp_path):
    """A link planted at ``<store>/cache/compiled`` is not followed: XLA compiles without a
    cache (``compile_cache`` none, the reason recorded) and writes nothing through it."""
    pytest.importorskip("tensorflow")
    store, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    (store / "cache").mkdir(parents=True)
    elsewhere.mkdir()
    (store / "cache" / "compiled").symlink_to(elsewhere)
    r = law_run("MeasureRuntime", "--version", "v1", "--model-file", TFAOT_DNN,
                "--batch-sizes", "1", *FAST, store=store)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = _tfaot_branch(store, "v1")
    assert rec["compile_cache"] == "none"
    compile_info = rec["runtime_settings"]["compile"]
    assert compile_info["cache_dir"] is None and compile_info["counters"] == {}
    assert compile_info["cache_refused"].endswith("compiled is a symbolic link")
    assert "persistent_cache" not in rec["runtime_settings"]["xla_flags"]["TF_XLA_FLAGS"]
    assert files_in(elsewhere) == []


def test_tfaot_cache_settings_name_threads_cpu_and_flags():
    """The directory's last segment changes with the threads, the CPU and the XLA flags (XLA's
    own key, the function's HLO, holds none of them), never with the batch sizes."""
    pytest.importorskip("tensorflow")
    from mlprof.runtimes.tensorflow import TfAotRuntime

    model = TfAotRuntime.resolve(TFAOT_DNN)
    one, two = TfAotRuntime(model, threads=1), TfAotRuntime(model, threads=2)
    none = {"TF_XLA_FLAGS": "", "XLA_FLAGS": ""}
    flagged = {"TF_XLA_FLAGS": "", "XLA_FLAGS": "--xla_cpu_enable_fast_math=true"}
    assert one.cache_settings(none).startswith("threads1_cpu")
    assert two.cache_settings(none).startswith("threads2_cpu")
    assert one.cache_settings(none) == one.cache_settings(dict(none))
    assert one.cache_settings(flagged) != one.cache_settings(none)
    assert "_flags" in one.cache_settings(flagged)


def _linked_store(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose ``cache/compiled`` is a link to a directory outside it."""
    store, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    (store / "cache").mkdir(parents=True)
    elsewhere.mkdir()
    (store / "cache" / "compiled").symlink_to(elsewhere)
    return store, elsewhere


def test_a_compile_cache_is_used_only_as_a_writable_directory_of_the_store(tmp_path):
    """One check for every compiling runtime: made when missing; refused through a link on the
    way from the store, as something else than a directory, and outside the store."""
    store = tmp_path / "store"
    directory = layout.compile_cache_dir("m", "ab" * 32, "openvino", "1", "f32_threads1",
                                         store=str(store))
    assert layout.compile_cache_problem(directory, str(store)) is None
    assert Path(directory).is_dir()
    linked, _ = _linked_store(tmp_path / "l")
    inside = layout.compile_cache_dir("m", "ab" * 32, "openvino", "1", "f32_threads1",
                                      store=str(linked))
    assert layout.compile_cache_problem(inside, str(linked)) == (
        f"{linked / 'cache' / 'compiled'} is a symbolic link")
    file_store = tmp_path / "f"
    taken = Path(layout.compile_cache_dir("m", "ab" * 32, "torch-compile", "2", "fp32_threads1",
                                          store=str(file_store)))
    taken.parent.mkdir(parents=True)
    taken.write_text("not a directory")
    assert layout.compile_cache_problem(str(taken), str(file_store)).startswith(str(taken))
    assert "not below the store" in layout.compile_cache_problem(str(tmp_path / "x"),
                                                                 str(store))


def test_openvino_does_not_use_a_linked_cache_directory(tmp_path, monkeypatch):
    """OpenVINO compiles without a cache reached through a link (its blobs would be loaded as
    this model's): ``cache`` none, the reason recorded, nothing written through the link."""
    pytest.importorskip("openvino")
    from mlprof.runtimes import get_runtime
    from tests.helpers import DNN

    store, elsewhere = _linked_store(tmp_path)
    monkeypatch.setenv("MLP_STORE", str(store))
    cls = get_runtime("openvino")
    rt = cls(cls.resolve(str(DNN)), threads=1)
    rt.load(1)
    compile_info = rt.info()["compile"]
    assert rt.cache_dir is None and compile_info["cache_dir"] is None
    assert compile_info["cache_refused"].endswith("compiled is a symbolic link")
    assert compile_info["cache"] == "none"
    assert list(elsewhere.iterdir()) == []


def test_torch_compile_does_not_use_a_linked_cache_directory(tmp_path, monkeypatch):
    """torch-compile keeps its package and inductor's caches in a new temporary directory when
    the store's cache is reached through a link, and says why."""
    pytest.importorskip("torch")
    from mlprof.runtimes import get_runtime

    store, elsewhere = _linked_store(tmp_path)
    monkeypatch.setenv("MLP_STORE", str(store))
    cls = get_runtime("torch-compile")
    rt = cls(cls.resolve(SCRIPT), threads=1)
    rt.load(1)
    compile_info = rt.info()["compile"]
    assert rt.cache_dir is None and compile_info["cache_dir"] is None
    assert compile_info["cache_refused"].endswith("compiled is a symbolic link")
    assert rt.work_dir is not None and Path(rt.work_dir).name.startswith("mlprof-inductor-")
    assert not Path(rt.work_dir).is_relative_to(store)
    assert list(elsewhere.iterdir()) == []


def test_a_script_and_its_model_hash_share_one_compile_cache(tmp_path, monkeypatch):
    """``script.py`` (its only model) and ``script.py::HASH`` are one model: the resolved spec
    carries the same name and content hash, so both find one compile cache directory (before,
    the content hash of ``script.py`` left out the model's hash: a second package, compiled
    again)."""
    pytest.importorskip("torch")
    from mlprof.runtimes.torch import TorchCompileRuntime, resolve_script

    monkeypatch.setenv("MLP_STORE", str(tmp_path / "store"))
    whole = resolve_script(SCRIPT)
    model_hash = whole.spec.name.rsplit("-", 1)[1]
    one = resolve_script(f"{SCRIPT}::{model_hash}")
    assert whole.spec.model_hashes == one.spec.model_hashes == (model_hash,)
    assert (whole.spec.name, whole.spec.content_hash) == (one.spec.name, one.spec.content_hash)
    dirs = []
    for resolved in (whole, one):
        rt = TorchCompileRuntime(resolved)
        rt.load(1)
        dirs.append(rt.cache_dir)
    assert dirs[0] is not None and dirs[0] == dirs[1]
    assert Path(dirs[0]).is_relative_to(tmp_path / "store")
