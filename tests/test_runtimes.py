"""The runtime registry: lookups, capabilities, model kinds, and that nothing else names runtimes.

Also: importing mlprof's plotting modules changes nothing process-wide (the matplotlib backend is
chosen in one place, right before pyplot is needed).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import os
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

import mlprof.runtimes as registry
from mlprof.errors import MLProfError
from mlprof.runtimes import (
    DEFAULT_RUNTIME,
    RuntimeInfo,
    canonical_runtime,
    check_device,
    check_model_kind,
    get_runtime,
    register,
    runtime_info,
    runtime_names,
    runtime_packages,
    runtime_version,
)

REPO = Path(__file__).resolve().parent.parent
MLPROF = REPO / "mlprof"


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch):
    """Registrations made in the test are gone afterwards."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOOKUP", dict(registry._LOOKUP))
    return registry


def _python(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter (MPLBACKEND unset unless given); its stdout."""
    full = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    full.update(env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=full,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


# --- lookups ----------------------------------------------------------------------------------


def test_names_and_aliases() -> None:
    assert runtime_names() == ("onnxruntime", "torch", "torch-compile", "openvino",
                               "tensorflow", "tfaot")
    assert DEFAULT_RUNTIME in runtime_names()
    expected = {"ort": "onnxruntime", " ORT ": "onnxruntime", "onnxruntime": "onnxruntime",
                "pytorch": "torch", "eager": "torch", "torch-eager": "torch", "Torch": "torch",
                "inductor": "torch-compile", "compile": "torch-compile",
                "torch-compiled": "torch-compile", "ov": "openvino", "tf": "tensorflow",
                "TF": "tensorflow", "tf-aot": "tfaot"}
    for name, canon in expected.items():
        assert canonical_runtime(name) == canon, name
        assert runtime_info(name) is runtime_info(canon)
    # every alias of every registration resolves to it, and no two registrations share a name
    seen: dict[str, str] = {}
    for canon in runtime_names():
        for n in runtime_info(canon).names:
            assert canonical_runtime(n) == canon
            assert seen.setdefault(n, canon) == canon


def test_unknown_runtime_is_one_clear_line() -> None:
    with pytest.raises(MLProfError) as info:
        runtime_info("tensorrt")
    err = info.value
    assert err.field == "--runtime"
    assert str(err) == ("--runtime: unknown runtime 'tensorrt'; available: onnxruntime (alias "
                        "ort), torch (alias torch-eager, pytorch, eager), torch-compile (alias "
                        "torch-compiled, inductor, compile), openvino (alias ov), tensorflow "
                        "(alias tf), tfaot (alias tf-aot)")
    for fn in (canonical_runtime, runtime_version, get_runtime):
        with pytest.raises(MLProfError, match="unknown runtime 'nope'"):
            fn("nope")


def test_capabilities() -> None:
    ort, eager, compiled, ov, tf, aot = (runtime_info(n) for n in runtime_names())
    assert ort.model_kinds == ("onnx",) and ort.needs_export and not ort.runs_script
    assert not ort.needs_torch and ort.venv_package == "onnxruntime"
    assert ort.package == "onnxruntime" and ort.label == "ONNX Runtime"
    for info in (eager, compiled):
        assert info.model_kinds == ("script",) and info.runs_script and info.needs_torch
        assert not info.needs_export and info.venv_package is None and info.package == "torch"
    assert eager.label != compiled.label
    assert ov.model_kinds == ("onnx",) and ov.needs_export and ov.venv_package == "openvino"
    assert ov.extra == "openvino" and not ort.extra
    assert tf.model_kinds == ("tf",) and aot.model_kinds == ("tfaot",)
    assert tf.package == aot.package == "tensorflow-cpu" and tf.extra == aot.extra == "tf"
    assert not (tf.needs_export or aot.needs_export or tf.venv_package or aot.venv_package)
    assert runtime_packages() == ("onnxruntime", "torch", "openvino", "tensorflow-cpu")
    for name in runtime_names():
        assert runtime_info(name).devices == ("cpu",)
        assert runtime_info(name).target.startswith("mlprof.runtimes.")


def test_check_device() -> None:
    assert check_device("ort", " CPU ") == "cpu"
    with pytest.raises(MLProfError) as info:
        check_device("torch-compile", "cuda")
    assert info.value.field == "--device"
    assert info.value.message == "device 'cuda' is not supported by torch-compile; supported: cpu"


def test_runtime_version_reads_the_registered_package() -> None:
    from mlprof.util import dist_version

    assert runtime_version("ort") == dist_version("onnxruntime")
    assert runtime_version("inductor") == (dist_version("torch") or "unknown")


# --- model kinds ------------------------------------------------------------------------------


def test_check_model_kind() -> None:
    for name in ("onnxruntime", "torch", "torch-compile", "openvino"):  # ONNX ones via export
        check_model_kind(name, True, "net.py")
    check_model_kind("ort", False, "model.yaml")
    check_model_kind("ov", "onnx", "model.yaml")
    check_model_kind("tf", "tf", "model_tf.yaml")
    check_model_kind("tfaot", "tfaot", "model_tfaot.yaml")
    with pytest.raises(MLProfError) as info:
        check_model_kind("ort", "tf", "model_tf.yaml")
    assert info.value.message == ("runtime onnxruntime measures ONNX/YAML models; model_tf.yaml "
                                  "is a TensorFlow model (inference_engine: tf): use tensorflow")
    with pytest.raises(MLProfError, match="is a Python model script: use onnxruntime or torch"):
        check_model_kind("tensorflow", True, "net.py")
    for name in ("torch", "compile"):
        with pytest.raises(MLProfError) as info:
            check_model_kind(name, False, "model.yaml")
        assert info.value.field == "--runtime"
        assert info.value.message == (
            f"runtime {canonical_runtime(name)} measures Python model scripts (.py); model.yaml "
            "is an ONNX/YAML model: use onnxruntime or openvino")


def test_check_model_kind_of_a_runtime_without_export(scratch_registry) -> None:
    register(RuntimeInfo(name="onnx-only", target="nowhere:Nothing", package="numpy",
                         model_kinds=("onnx",)))
    check_model_kind("onnx-only", False, "m.onnx")
    with pytest.raises(MLProfError) as info:
        check_model_kind("onnx-only", True, "net.py::abc")
    assert info.value.message == ("runtime onnx-only measures ONNX/YAML models; net.py::abc is a "
                                  "Python model script: use onnxruntime or torch or torch-compile "
                                  "or openvino")


def test_torch_runtime_rejects_an_onnx_model_with_the_registry_message() -> None:
    pytest.importorskip("torch")
    dnn = REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml"
    with pytest.raises(MLProfError, match=r"runtime torch measures Python model scripts \(\.py\)"
                       r"; .*model_onnx_l10u128.yaml is an ONNX/YAML model: use onnxruntime"):
        get_runtime("torch").resolve(str(dnn))


# --- registering ------------------------------------------------------------------------------


def test_registration_is_checked(scratch_registry) -> None:
    with pytest.raises(ValueError, match="already taken: ort"):
        register(RuntimeInfo(name="ort2", target="m:C", package="x", aliases=("ort",)))
    with pytest.raises(ValueError, match="needs_export is for runtimes that measure ONNX"):
        RuntimeInfo(name="x", target="m:C", package="x", model_kinds=("script",),
                    needs_export=True)
    with pytest.raises(ValueError, match="runs_script needs 'script'"):
        RuntimeInfo(name="x", target="m:C", package="x", runs_script=True)
    with pytest.raises(ValueError, match="model_kinds must be some of"):
        RuntimeInfo(name="x", target="m:C", package="x", model_kinds=("tflite",))
    with pytest.raises(ValueError, match="not 'module:Class'"):
        RuntimeInfo(name="x", target="m.C", package="x")
    with pytest.raises(ValueError, match="lower case"):
        RuntimeInfo(name="X", target="m:C", package="x")
    # the same registration twice is harmless
    info = runtime_info("torch")
    assert register(info) is info and registry._REGISTRY["torch"] is info
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.name = "other"  # type: ignore[misc]


def test_a_new_runtime_is_one_module_plus_one_registration(
        scratch_registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mlp_fake_runtime.py").write_text(textwrap.dedent("""
        from mlprof.runtimes.base import Runtime

        class FakeRuntime(Runtime):
            @classmethod
            def resolve(cls, model_file, script_args=()):
                return model_file

            def load(self, batch_size):
                pass

            def bind(self, feed):
                return (lambda: None), ()
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mlp_fake_runtime", raising=False)
    info = register(RuntimeInfo(name="fake", target="mlp_fake_runtime:FakeRuntime",
                                package="numpy", aliases=("fk",), devices=("cpu", "npu"),
                                label="Fake"))
    assert "fake" in runtime_names() and canonical_runtime("FK") == "fake"
    assert check_device("fk", "NPU") == "npu"
    cls = get_runtime("fk")
    assert cls.__name__ == "FakeRuntime" and cls.runtime_info is info
    assert (cls.name, cls.aliases, cls.package, cls.devices) == ("fake", ("fk",), "numpy",
                                                                ("cpu", "npu"))
    import numpy

    assert cls.version() == runtime_version("fake") == numpy.__version__
    assert runtime_packages() == ("onnxruntime", "torch", "openvino", "tensorflow-cpu", "numpy")


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_classes_read_their_registration() -> None:
    pytest.importorskip("torch")
    for name in runtime_names():
        info, cls = runtime_info(name), get_runtime(name)
        assert f"{cls.__module__}:{cls.__qualname__}" == info.target
        assert cls.runtime_info is info
        assert (cls.name, cls.aliases, cls.package, cls.devices) == (
            info.name, info.aliases, info.package, info.devices)


def test_a_class_may_not_restate_its_registration(scratch_registry) -> None:
    from mlprof.runtimes.base import Runtime

    register(RuntimeInfo(name="restated", target=f"{__name__}:Restated", package="numpy"))
    with pytest.raises(TypeError, match="Restated.name is set by its registration"):
        type("Restated", (Runtime,), {"name": "restated", "__module__": __name__})


def test_looking_up_runtimes_imports_no_runtime_library() -> None:
    out = _python("""
        import json, sys
        from mlprof.runtimes import (canonical_runtime, check_device, check_model_kind,
                                     runtime_info, runtime_names, runtime_packages,
                                     runtime_version)
        from mlprof.measure.venvs import parse_runtime_version
        for n in runtime_names():
            runtime_info(n); check_device(n, "cpu"); runtime_version(n)
            check_model_kind(n, runtime_info(n).model_kinds[0], "x")
        canonical_runtime("ort"); runtime_packages(); parse_runtime_version("ort", "1.20.1")
        heavy = ("onnxruntime", "torch", "onnx", "openvino", "tensorflow")
        before = [m for m in heavy if m in sys.modules]
        from mlprof.runtimes import get_runtime
        get_runtime("ort")  # the control: importing the class does import the library
        print(json.dumps([before, "onnxruntime" in sys.modules]))
    """)
    before, imported = json.loads(out.strip().splitlines()[-1])
    assert before == [] and imported is True


# --- the rest of mlprof asks the registry -----------------------------------------------------


def test_harness_and_venvs_ask_the_registry(scratch_registry) -> None:
    from mlprof.measure.harness import _library_versions, _needs_torch
    from mlprof.measure.venvs import parse_runtime_version, venv_package, venv_runtimes

    assert not _needs_torch("model.onnx", "ort")
    assert _needs_torch("model.onnx", "pytorch") and _needs_torch("model.yaml", "inductor")
    assert _needs_torch("net.py::abc", "onnxruntime")
    assert venv_runtimes() == ("onnxruntime", "openvino") and venv_package("ort") == "onnxruntime"
    assert venv_package("torch") is None
    register(RuntimeInfo(name="fake", target="m:C", package="numpy", needs_torch=True,
                         venv_package="fake-dist"))
    assert _needs_torch("model.onnx", "fake")
    assert venv_runtimes() == ("onnxruntime", "openvino", "fake")
    assert parse_runtime_version("fake", "fake==2.0") == "2.0"
    versions = _library_versions()
    assert list(versions) == ["numpy", "onnx", "onnxruntime", "torch", "openvino",
                              "tensorflow-cpu"]
    assert versions["numpy"] and versions["onnxruntime"]


def test_defaults_are_the_default_runtime() -> None:
    import inspect

    from mlprof.experiments import Experiment
    from mlprof.report.site import build_dashboard

    assert Experiment.runtimes == (DEFAULT_RUNTIME,)
    sig = inspect.signature(build_dashboard)
    assert sig.parameters["reference_runtime"].default == DEFAULT_RUNTIME


#: modules that still compare runtime names or name "onnxruntime" themselves.
#: TODO(registry): switch these to mlprof.runtimes and empty this set (they were being edited by
#: others when the registry came in); test_todo_list_is_not_stale tells when an entry is done.
TODO_RUNTIME_NAMES: set[str] = set()


def _runtime_name_uses(path: Path) -> list[str]:
    """Where ``path`` compares something to a runtime name or alias (``== "torch"``,
    ``in ("onnxruntime", ...)``, ``case "ort"``) or spells a runtime-only name
    (``"onnxruntime"``, ``"torch-compile"``) as a string literal."""
    names = {n for canon in runtime_names() for n in runtime_info(canon).names}
    only_runtimes = {"onnxruntime", "torch-compile"}
    found = []
    toks = [t for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                              tokenize.DEDENT)]
    stack: list[bool] = []  # per open bracket: whether it follows "in" (a membership test)
    for i, t in enumerate(toks):
        prev = toks[i - 1].string if i else ""
        if t.type == tokenize.OP and t.string in "([{":
            stack.append(prev == "in")
        elif t.type == tokenize.OP and t.string in ")]}":
            if stack:
                stack.pop()
        if t.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(t.string)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(value, str) or value.lower() not in names:
            continue
        nxt = toks[i + 1].string if i + 1 < len(toks) else ""
        compared = (prev in ("==", "!=", "in", "case") or nxt in ("==", "!=")
                    or (prev in ("(", "[", "{", ",") and bool(stack) and stack[-1]))
        if compared or value in only_runtimes:
            found.append(f"{os.path.relpath(path, REPO)}:{t.start[0]}: {t.line.strip()}")
    return found


def _modules_outside_the_registry() -> list[Path]:
    return sorted(p for p in MLPROF.rglob("*.py") if "runtimes" not in p.relative_to(MLPROF).parts)


def test_the_scan_finds_comparisons(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        a = runtime == "torch"
        b = "ort" != runtime
        c = runtime in ("torch", "inductor")
        d = runtime not in ["pytorch"]
        e = "onnxruntime"
        f = import_module("torch")      # a package name, not a comparison: fine
        g = kind == "onnx"              # not a runtime name: fine
        match runtime:
            case "eager":
                pass
    """))
    lines = [hit.split(":")[1] for hit in _runtime_name_uses(probe)]
    assert lines == ["2", "3", "4", "4", "5", "6", "10"]


def test_no_module_outside_the_registry_names_runtimes() -> None:
    hits = [h for p in _modules_outside_the_registry()
            if str(p.relative_to(REPO)) not in TODO_RUNTIME_NAMES for h in _runtime_name_uses(p)]
    assert hits == [], "ask mlprof.runtimes instead:\n" + "\n".join(hits)


def test_todo_list_is_not_stale() -> None:
    done = [f for f in sorted(TODO_RUNTIME_NAMES) if not (REPO / f).exists()
            or not _runtime_name_uses(REPO / f)]
    assert done == [], f"no runtime names left in {done}: remove them from TODO_RUNTIME_NAMES"


# --- process-wide side effects ----------------------------------------------------------------


#: calls and assignment targets that change the whole process (module names unaliased)
_PROCESS_WIDE_CALLS = ("matplotlib.use", "atexit.register", "warnings.filterwarnings",
                       "warnings.simplefilter", "logging.basicConfig", "os.environ.setdefault",
                       "os.environ.update", "os.putenv", "signal.signal", "sys.setrecursionlimit")
_PROCESS_WIDE_TARGETS = ("sys.excepthook", "os.environ[")


def _module_level_side_effects(path: Path) -> list[str]:
    """Calls and assignments at import time that change the whole process."""
    tree = ast.parse(path.read_text())
    aliases = {a.asname: a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
               for a in n.names if a.asname}
    found = []

    def unaliased(expr: ast.AST) -> str:
        first, dot, rest = ast.unparse(expr).partition(".")
        return aliases.get(first, first) + dot + rest

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return  # runs when called, not at import
        hit = (isinstance(node, ast.Call) and unaliased(node.func) in _PROCESS_WIDE_CALLS) or (
            isinstance(node, ast.Assign | ast.AugAssign)
            and any(unaliased(t).startswith(_PROCESS_WIDE_TARGETS)
                    for t in getattr(node, "targets", [getattr(node, "target", None)])))
        if hit:
            found.append(f"{os.path.relpath(path, REPO)}:{node.lineno}: {ast.unparse(node)}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_the_side_effect_scan_finds_them(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import matplotlib, os, sys
        import matplotlib as mpl, os as _os
        matplotlib.use("Agg")
        sys.excepthook = print
        if True:
            os.environ["X"] = "1"

        class C:
            _os.environ.setdefault("Y", "2")

            def method(self):
                mpl.use("Agg")             # runs when called: fine
        mpl.use("pdf")
        matplotlib.rcParams.update({})     # not on the list: fine

        def hook():
            sys.excepthook = print         # fine
    """))
    lines = [int(h.split(":")[1]) for h in _module_level_side_effects(probe)]
    assert lines == [4, 5, 7, 10, 14]


def test_library_modules_change_nothing_process_wide_at_import() -> None:
    from mlprof.measure.forkserver import PRELOAD, PRELOAD_TORCH

    # the measurement server's preload modules exist to prepare that process when imported
    server = {REPO / (m.replace(".", "/") + ".py") for m in (*PRELOAD, *PRELOAD_TORCH)}
    assert server and all(p.exists() for p in server)
    library = [p for p in MLPROF.rglob("*.py")
               if "tasks" not in p.relative_to(MLPROF).parts and p not in server]
    hits = [h for p in sorted(library) for h in _module_level_side_effects(p)]
    assert hits == []


def test_one_place_selects_the_matplotlib_backend() -> None:
    users = sorted(str(p.relative_to(REPO)) for p in MLPROF.rglob("*.py")
                   if "matplotlib.use(" in p.read_text())
    assert users == ["mlprof/plotting/backend.py"]


def test_importing_plotting_leaves_the_backend_alone() -> None:
    out = _python("""
        import json, sys
        import matplotlib
        matplotlib.use("svg")
        import mlprof.plotting, mlprof.plotting.dashboard, mlprof.plotting.history
        import mlprof.report.site
        print(json.dumps([matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules]))
    """)
    backend, pyplot_imported = json.loads(out.strip().splitlines()[-1])
    assert backend == "svg" and pyplot_imported is False


def test_plotting_selects_agg_right_before_pyplot_is_needed(tmp_path: Path) -> None:
    png = str(tmp_path / "p.png")
    out = _python(f"""
        import json, sys
        import matplotlib
        from mlprof.plotting import Curve, plot_runtimes, save_figure
        stats = {{"batch_size": [1, 2], "median_ms": [1.0, 1.5], "p16_ms": [0.9, 1.4],
                 "p84_ms": [1.1, 1.6]}}
        save_figure(plot_runtimes([Curve("a", stats)]), [{png!r}])
        print(json.dumps(matplotlib.get_backend().lower()))
    """)
    assert json.loads(out.strip().splitlines()[-1]) == "agg"
    assert (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    # a process that chose its backend (pyplot imported first) keeps it
    out = _python("""
        import json
        import matplotlib
        matplotlib.use("svg")
        import matplotlib.pyplot
        from mlprof.plotting import use_backend
        use_backend()
        print(json.dumps(matplotlib.get_backend()))
    """)
    assert json.loads(out.strip().splitlines()[-1]) == "svg"
