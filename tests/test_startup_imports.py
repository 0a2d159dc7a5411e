"""Start-up stays light (issue 38, item 2): a ``law run`` that only looks (``--print-status``,
``--print-output``, ``--remove-output``, ``--help``), a bad parameter, an unknown task and a
no-op rerun import no runtime, no matplotlib and no pandas, and start no measurement server
(with a model script, a bad parameter finds the server that ``law`` started early still at its
gate, with no runtime loaded, and it leaves after ``law``).

Each command runs as ``law`` runs it, in a fresh interpreter (not the tests' zygote, which has
those modules loaded already): ``bin/law``'s own entry, :func:`mlprof.lawcli.main`, with
``sys.argv`` as ``law`` sets it. An exit hook registered before anything else (so it runs
last) writes the heavy modules found in ``sys.modules`` and whether the measurement server
(multiprocessing's forkserver) was started. Nothing here is timed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import FAST, REPO, law_run

#: what a command that measures nothing must not import (each costs 0.2-2.5 s)
HEAVY = ("torch", "tensorflow", "openvino", "onnxruntime", "matplotlib", "pandas")

_PROBE = """
import atexit, json, sys
def _report(out=sys.argv.pop(1)):
    import multiprocessing.forkserver as fs
    heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})
    also = sorted(m for m in {also!r} if m in sys.modules)
    pid = fs._forkserver._forkserver_pid
    mod = sys.modules.get('mlprof.measure.forkserver')
    maps = ''
    if pid is not None:
        try:
            with open(f'/proc/{{pid}}/maps') as f:
                maps = f.read()
        except OSError:
            pass
    with open(out, 'w') as f:
        json.dump({{'heavy': heavy, 'also': also, 'server': pid is not None, 'pid': pid,
                   'gated': mod is not None and mod._gated is not None,
                   'server_runtimes': [lib for lib in ('libtorch', 'onnxruntime')
                                       if lib in maps]}}, f)
atexit.register(_report)
sys.argv[0] = {law!r}
from mlprof.lawcli import main
sys.exit(main())
"""


def run_probed(args: list[str], store: Path, tmp_path: Path, also: tuple[str, ...] = ()
               ) -> tuple[int, dict, str]:
    """``law ARGS`` in a fresh interpreter: (exit code, {heavy, also, server}, output), where
    ``also`` lists which of the modules ``also`` were imported."""
    out = tmp_path / "probe.json"
    code = _PROBE.format(heavy=HEAVY, also=also, law=str(REPO / "bin" / "law"))
    env = dict(os.environ, MLP_STORE=str(store), MLP_BASE=str(REPO),
               LAW_HOME=os.environ.get("LAW_HOME", str(REPO / ".law")),
               LAW_CONFIG_FILE=os.environ.get("LAW_CONFIG_FILE", str(REPO / "law.cfg")))
    proc = subprocess.run([sys.executable, "-c", code, str(out), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(out.read_text()), proc.stdout + proc.stderr


LOOKS = [
    (["run", "PlotRuntimes", "--version", "v1", "--batch-sizes", "1,2", "--print-status", "0"], 0),
    (["run", "MeasureRuntime", "--version", "v1", "--batch-sizes", "1,2", "--print-status", "0"],
     0),
    (["run", "PlotRuntimes", "--version", "v1", "--print-output", "0"], 0),
    (["run", "PlotRuntimes", "--version", "v1", "--remove-output", "0,a"], 0),
    (["run", "PlotRuntimes", "--help"], 0),
    (["run", "PlotSpeedup", "--help"], 0),
    (["run", "PlotRuntimes", "--version", "v1", "--batch-sizes", "1,two"], 40),
    (["run", "PlotRuntimes", "--version", "v1", "--runtime", "tourch"], 40),
    (["run", "PlotRuntime", "--version", "v1"], 40),
    # a bad parameter with a model script: one line, and no server importing torch for it
    (["run", "PlotRuntimes", "--version", "v1", "--model-file", "models/selftest/linear.py",
      "--batch-sizes", "1,two"], 40),
    (["run", "PlotRuntimes", "--version", "v1", "--model-file", "models/selftest/linear.py",
      "--runtime", "tourch"], 40),
    (["run", "MeasureRuntime", "--version", "v1", "--model-file", "models/selftest/linear.py",
      "--precision", "fp3"], 40),
]


def _gone(pid: int, seconds: float = 5.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("args, rc", LOOKS, ids=[" ".join(a[1:]) for a, _ in LOOKS])
def test_looking_imports_nothing_heavy(store, tmp_path, args, rc):
    code, probe, out = run_probed(args, store, tmp_path)
    assert code == rc, out[-2000:]
    assert probe["heavy"] == [], (probe["heavy"], out[-1000:])
    if not any(a.endswith(".py") for a in args) or "--print-status" in args:
        assert not probe["server"], \
            "a measurement server was started for a command that only looks"
        return
    # a bad parameter with a model script: the server started early (mlprof.lawcli) is still
    # at its gate, has loaded no runtime, and leaves by itself
    assert probe["server"] and probe["gated"], probe
    assert probe["server_runtimes"] == [], probe
    assert _gone(probe["pid"]), f"the gated server {probe['pid']} outlived law"


#: what a no-op rerun needs no more (0.03-0.2 s each): urllib3 comes with ``requests``, which
#: luigi's central-scheduler client imports and ``bin/law`` defers (mlprof.lawcli.DEFERRED);
#: numpy came with the precision checks,
#: the statistics and provenance readers of the summary, onnx (numpy with it) with the model
#: file's hash and its up-front check, the interleaving (numpy, the harness) with
#: ``--interleave``'s default in the parser; the isolation module (multiprocessing's
#: forkserver with it, 10-25 ms) with the summary's contention causes
#: (mlprof.measure.contention); PyYAML (15-25 ms) with the model YAML, parsed once and then
#: read from its parse cache (mlprof.ingest.yaml_cache_path)
NOOP_LIGHT = ("numpy", "onnx", "urllib3", "mlprof.measure.interleave",
              "mlprof.measure.harness", "mlprof.model.onnx_graph", "mlprof.measure.isolate",
              "yaml")


def test_a_noop_rerun_imports_nothing_heavy(store, tmp_path):
    args = ["--version", "t1", "--batch-sizes", "1", *FAST]
    first = law_run("PlotRuntimes", *args, store=store)
    assert first.returncode == 0, first.stderr[-2000:]
    code, probe, out = run_probed(["run", "PlotRuntimes", *args], store, tmp_path,
                                  also=NOOP_LIGHT)
    assert code == 0, out[-2000:]
    assert "1 complete already" in out or "complete" in out, out[-2000:]
    assert probe["heavy"] == [], (probe["heavy"], out[-1000:])
    assert probe["also"] == [], (probe["also"], out[-1000:])
    assert "median latency per batch" in out, out[-2000:]  # the summary, read without numpy
    assert not probe["server"]


def test_a_deferred_module_loads_when_used():
    """``requests`` (mlprof.lawcli.DEFERRED) is not run by luigi's import under ``bin/law``, and
    works when something uses it (luigi's client of a central scheduler would)."""
    code = ("import sys\n"
            "from mlprof.lawcli import _DeferredFinder\n"
            "sys.meta_path.insert(0, _DeferredFinder())\n"
            "import luigi.rpc\n"
            "print('urllib3' in sys.modules)\n"
            "print(luigi.rpc.requests.Session.__name__, 'urllib3' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["False", "Session True"], proc.stdout


def test_a_script_point_leaves_onnx_to_the_server(store, tmp_path):
    """A measured point of a model script: the ``law`` process imports no runtime and not onnx
    (the up-front check that needs it is for ONNX model files; importing it anyway cost 0.1 s
    on the script's way to its discovery); the server, released from its gate, has them."""
    args = ["run", "MeasureRuntime", "--version", "s1", "--model-file",
            "models/selftest/linear.py", "--batch-sizes", "1", *FAST]
    code, probe, out = run_probed(args, store, tmp_path, also=("onnx", "urllib3"))
    assert code == 0, out[-2000:]
    assert probe["heavy"] == [] and probe["also"] == [], probe
    assert probe["server"] and not probe["gated"], probe
    assert probe["server_runtimes"] == ["libtorch", "onnxruntime"], probe


def test_a_noop_rerun_of_a_scripts_sweep_leaves_the_server_at_its_gate(store, tmp_path):
    """A rerun with nothing to do of a model script's plot: the server ``bin/law`` started
    early stays at its gate, loads no runtime and leaves after ``law`` (released at schedule
    start, it imported torch for nothing and held a piped output open until it was done, 2.8-3
    s); and ``law`` itself imports no onnx and none of the export's and the runtime versions'
    modules (numpy with them) for the output paths."""
    args = ["--version", "t1", "--model-files", "models/selftest/linear.py", "--runtimes",
            "onnxruntime", "--batch-sizes", "1", *FAST]
    first = law_run("PlotMultiRuntimes", *args, store=store)
    assert first.returncode == 0, first.stderr[-2000:]
    also = ("onnx", "mlprof.model.onnx_graph", "mlprof.model.export", "mlprof.measure.venvs")
    code, probe, out = run_probed(["run", "PlotMultiRuntimes", *args], store, tmp_path,
                                  also=also)
    assert code == 0, out[-2000:]
    assert "complete already" in out, out[-2000:]
    assert probe["heavy"] == [] and probe["also"] == [], (probe, out[-1000:])
    assert probe["server"] and probe["gated"], probe
    assert probe["server_runtimes"] == [], probe
    assert _gone(probe["pid"]), f"the gated server {probe['pid']} outlived law"


def test_law_skips_the_final_collection_at_exit(store):
    """``bin/law`` freezes the collector before it exits (``lawcli.skip_final_collection``):
    the interpreter's last collections then skip what law, luigi and the tasks made (50-60 ms
    of every run's exit). An exit hook registered first runs last and sees it."""
    law = str(REPO / "bin" / "law")
    code = ("import atexit, gc, runpy, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count(), flush=True))\n"
            f"sys.argv = [{law!r}, 'run', 'PlotRuntime', '--version', 'v1']\n"
            f"runpy.run_path({law!r}, run_name='__main__')\n")
    env = dict(os.environ, MLP_STORE=str(store), MLP_BASE=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 40, proc.stderr[-2000:]
    assert "PlotRuntimes" in proc.stderr + proc.stdout  # the unknown task's one line
    frozen = int(proc.stdout.split("frozen")[-1].split()[0])
    assert frozen > 10_000, proc.stdout  # law, luigi and the task modules' objects


@pytest.mark.skipif(importlib.util.find_spec("cuda") is None
                    or importlib.util.find_spec("cuda.bindings") is None,
                    reason="PyTorch's CPU wheel: no cuda-python bindings to leave out")
def test_the_server_imports_torch_without_cuda_bindings_on_a_machine_without_a_driver():
    """The measurement server's PyTorch import (``mlprof.measure.child_torch``) leaves out
    cuda-python's bindings on a machine without an NVIDIA driver, as PyTorch's CPU wheel has
    none (50-73 ms of its start here), and only for that import: a later ``import
    cuda.bindings`` (a model script's own) imports them. With a driver, torch imports them."""
    code = ("import os, sys\n"
            "import mlprof.measure.child_torch as c\n"
            "import torch.cuda._utils as u\n"
            "driver = any(map(os.path.exists, c.NVIDIA_DRIVER))\n"
            "print('driver', driver, 'bindings', u._HAS_CUDA_BINDINGS,"
            " 'loaded', 'cuda.bindings' in sys.modules)\n"
            "import cuda.bindings.driver\n"
            "print('later', cuda.bindings.driver.__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    words = proc.stdout.split()
    driver = words[1] == "True"
    assert words[3] == str(driver), proc.stdout  # torch has the bindings iff there is a driver
    assert words[5] == str(driver), proc.stdout
    assert "later cuda.bindings.driver" in proc.stdout
