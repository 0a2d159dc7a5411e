"""Measurements run in a child process: crashes, hangs, memory exhaustion and errors cost only
that measurement."""

from __future__ import annotations

import os
import time

import pytest

from mlprof.errors import MeasurementFailed, MLProfError, is_out_of_memory
from mlprof.measure import MeasureSettings, isolate, measure_isolated
from mlprof.measure.isolate import run_isolated
from tests import faulty
from tests.faulty_models import hogs
from tests.faulty_models.faulty_onnx import expand_bomb
from tests.helpers import DNN, REPO

FAULTY_MODELS = REPO / "tests" / "faulty_models"


def test_result_and_progress_come_back_from_another_process():
    seen = []
    value, pid = run_isolated(faulty.ok, {"value": 21}, timeout=60,
                              progress=lambda f, m: seen.append((f, m)))
    assert value == 42
    assert pid != os.getpid()
    # the parent's own report while a server starts (the first child here) comes first
    assert [s for s in seen if "starting the measurement server" not in s[1]] == \
        [(0.5, "half way")]


@pytest.mark.parametrize("func, signame", [(faulty.segfault, "SIGSEGV"),
                                           (faulty.abort, "SIGABRT")])
def test_crash_fails_with_the_signal(func, signame):
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(func, {}, timeout=60, label="crashy")
    assert err.value.status == "failed"
    assert f"crashed with {signame}" in str(err.value)
    assert str(err.value).startswith("crashy")


def test_hang_is_killed_after_the_timeout():
    t0 = time.monotonic()
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(faulty.hang, {}, timeout=1.5, label="hangs")
    assert err.value.status == "timeout"
    assert "timed out after 1.5 s" in str(err.value)
    assert time.monotonic() - t0 < 15


def test_the_clock_restarts_at_each_step_a_hung_step_is_killed_naming_it():
    """restart_timeout (a load search: once per point): 10 steps of 0.5 s live past a 4 s
    time-out, each well inside it; a step that hangs is killed after one time-out, named."""
    assert run_isolated(faulty.steps, {"n": 10, "seconds": 0.5}, timeout=4, label="steps") == 10
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(faulty.steps, {"n": 10, "seconds": 0.1, "hang_at": 3}, timeout=2,
                     label="steps")
    assert err.value.status == "timeout"
    assert str(err.value).startswith("steps: step 3 timed out after 2 s (MLP_TIMEOUT, per step: "
                                     "2 step(s) before it ended in time)"), str(err.value)


def test_timeout_from_environment(monkeypatch):
    monkeypatch.setenv("MLP_TIMEOUT", "1")
    with pytest.raises(MeasurementFailed, match="timed out after 1 s"):
        run_isolated(faulty.hang, {})
    monkeypatch.setenv("MLP_TIMEOUT", "soon")
    with pytest.raises(MLProfError, match="MLP_TIMEOUT: must be a number of seconds"):
        run_isolated(faulty.ok, {"value": 1})


def test_mlprof_error_comes_back_unchanged():
    with pytest.raises(MLProfError) as err:
        run_isolated(faulty.bad_input, {}, timeout=60)
    assert str(err.value) == "/some/file.yaml: model.inputs[0].shape: broken on purpose"


def test_unexpected_error_is_reported_with_its_type():
    with pytest.raises(MeasurementFailed, match="KeyError: 'missing'"):
        run_isolated(faulty.bug, {}, timeout=60)


def test_exit_without_result():
    with pytest.raises(MeasurementFailed, match="exited with code 3 without a result"):
        run_isolated(faulty.exit_silently, {}, timeout=60)


def test_measure_isolated_runs_the_real_harness_in_a_child():
    r = measure_isolated(str(DNN), MeasureSettings(batch_size=2, n_calls=5, warmup=1,
                                                   min_duration=0),
                         timeout=120)
    assert r.samples_ns.size == 5
    assert r.provenance["pid"] != os.getpid()


# --- the memory limit ($MLP_MEMORY_LIMIT) -------------------------------------------------------
#: above what a child starts with (a child of a server that preloaded PyTorch: ~0.4 GB resident)
LIMIT = 800

def _gone(pid: int) -> bool:
    """Whether process ``pid`` no longer exists (or is a zombie, i.e. dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_memory_hog_is_killed_at_the_limit(tmp_path):
    pid_file = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(hogs.hog, {"step_mb": 32, "total_mb": 4096, "pid_file": str(pid_file)},
                     timeout=60, memory_limit=LIMIT, label="hog.onnx at batch size 64")
    assert err.value.status == "oom"
    msg = str(err.value)
    assert msg.startswith(f"hog.onnx at batch size 64: exceeded the memory limit of {LIMIT} MB "
                          "(MLP_MEMORY_LIMIT): "), msg
    used = int(msg.split("MLP_MEMORY_LIMIT): ")[1].split()[0])
    assert LIMIT < used < 4096  # stopped long before it held everything it asked for
    assert _gone(int(pid_file.read_text()))
    assert time.monotonic() - t0 < 30


def test_memory_of_subprocesses_counts_and_they_are_killed_too(tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(hogs.hog_in_subprocess, {"pid_file": str(pid_file)}, timeout=60,
                     memory_limit=LIMIT, label="spawner")
    assert err.value.status == "oom"
    assert f"exceeded the memory limit of {LIMIT} MB" in str(err.value)
    pid = int(pid_file.read_text())
    for _ in range(50):  # the kill is immediate; reaping by init may take a moment
        if _gone(pid):
            break
        time.sleep(0.1)
    assert _gone(pid)


def test_under_the_limit_the_result_comes_back():
    assert run_isolated(hogs.hog, {"step_mb": 32, "total_mb": 96}, timeout=60,
                        memory_limit=1000) == 96


@pytest.mark.parametrize("interval", [isolate.WATCH_INTERVAL, 60.0])
def test_a_peak_between_two_looks_still_counts(monkeypatch, interval):
    # 1.2 GB allocated and freed at once; with a 60 s watch interval the parent never looks
    # while the child runs: the child's peak (VmHWM) decides all the same
    monkeypatch.setattr(isolate, "WATCH_INTERVAL", interval)
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(hogs.spike, {"mb": 1200, "then_sleep": 0.2}, timeout=60,
                     memory_limit=LIMIT)
    assert err.value.status == "oom"
    assert f"exceeded the memory limit of {LIMIT} MB" in str(err.value)


def test_memory_limit_from_environment(monkeypatch):
    monkeypatch.setenv("MLP_MEMORY_LIMIT", str(LIMIT))
    with pytest.raises(MeasurementFailed, match=f"memory limit of {LIMIT} MB") as err:
        run_isolated(hogs.hog, {"total_mb": 4096}, timeout=60)
    assert err.value.status == "oom"
    for bad, why in (("lots", "must be a number of MB"), ("0", "must be > 0"),
                     ("-5", "must be > 0")):
        monkeypatch.setenv("MLP_MEMORY_LIMIT", bad)
        with pytest.raises(MLProfError, match=f"^MLP_MEMORY_LIMIT: {why}"):
            run_isolated(faulty.ok, {"value": 1}, timeout=60)


def test_default_memory_limit_is_80_percent_of_the_machine(monkeypatch):
    monkeypatch.delenv("MLP_MEMORY_LIMIT", raising=False)
    with open("/proc/meminfo") as f:
        mem_total_mb = int(next(ln for ln in f if ln.startswith("MemTotal:")).split()[1]) / 1024
    assert 0 < isolate.total_memory_mb() <= mem_total_mb
    assert isolate.default_memory_limit() == round(0.8 * isolate.total_memory_mb())


def test_sigkill_by_someone_else_reads_as_the_oom_killer():
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(hogs.sigkill_self, {}, timeout=60, label="big model at batch size 8")
    assert err.value.status == "oom"
    assert str(err.value).startswith("big model at batch size 8: the measurement process was "
                                     "killed with SIGKILL, most likely by the kernel's "
                                     "out-of-memory killer")


def test_memory_error_in_the_child_is_oom():
    with pytest.raises(MeasurementFailed) as err:
        run_isolated(hogs.memory_error, {}, timeout=60, label="greedy at batch size 2")
    assert err.value.status == "oom"
    assert str(err.value) == "greedy at batch size 2: out of memory (MemoryError)"


def test_allocation_refused_by_onnxruntime_is_oom(tmp_path):
    # a 1 TB intermediate: no machine grants it, ONNX Runtime's arena says so
    bomb = expand_bomb(tmp_path / "bomb.onnx", mb_per_row=1024)
    with pytest.raises(MeasurementFailed) as err:
        measure_isolated(bomb, MeasureSettings(batch_size=1024, n_calls=2, warmup=0,
                                                min_duration=0),
                         timeout=120, memory_limit=1024)
    assert err.value.status == "oom"
    msg = str(err.value)
    assert msg.startswith(f"{bomb}: out of memory at batch size 1024: ")
    assert "Failed to allocate memory for requested buffer of size 1099511627776" in msg, msg


@pytest.mark.parametrize("exc, oom", [
    (MemoryError(), True),
    (RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Failed to allocate memory for "
                  "requested buffer of size 4294967296"), True),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate "
                  "memory: you tried to allocate 1099511627776 bytes."), True),
    (RuntimeError("std::bad_alloc"), True),
    (RuntimeError("shape mismatch"), False),
    (KeyError("memory"), False),
])
def test_allocation_failures_are_recognized(exc, oom):
    assert is_out_of_memory(exc) is oom


@pytest.mark.slow
def test_leaking_model_script_fails_its_batch_size_only():
    pytest.importorskip("torch")
    leak = str(FAULTY_MODELS / "leak.py")
    ok = measure_isolated(leak, MeasureSettings(batch_size=1, runtime="torch", n_calls=5,
                                                warmup=1, min_duration=0),
                          timeout=300, memory_limit=1500)
    assert ok.samples_ns.size == 5
    with pytest.raises(MeasurementFailed) as err:
        measure_isolated(leak, MeasureSettings(batch_size=4, runtime="torch", n_calls=5,
                                               warmup=1, min_duration=0),
                         timeout=300, memory_limit=1500)
    assert err.value.status == "oom"
    assert str(err.value).startswith("leak.py at batch size 4: exceeded the memory limit of "
                                     "1500 MB (MLP_MEMORY_LIMIT)")


def _alive_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (zombies do not count)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            found.append(int(pid))
    return found


@pytest.mark.parametrize("func, kwargs", [
    ("spawn_and_return", {}), ("spawn_daemon_and_return", {}),
    ("spawn_and_crash", {}),
    # waits out its 3-s timeout: out of the 5-minute fast tier
    pytest.param("spawn_and_hang", {"timeout": 3}, marks=pytest.mark.slow),
])
def test_nothing_outlives_a_measurement(func, kwargs):
    """Subprocesses, double-forked daemons included, end with the measurement process,
    whether it returns, crashes or times out."""
    import uuid

    marker = f"mlprof-test-{uuid.uuid4().hex[:12]}"
    try:
        run_isolated(getattr(faulty, func), {"marker": marker}, label=func, **kwargs)
    except MLProfError:
        assert func in ("spawn_and_crash", "spawn_and_hang")
    deadline = time.monotonic() + 3
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _alive_with(marker)
    for pid in left:  # do not leave them behind even when the test fails
        os.kill(pid, 9)
    assert left == []


def test_an_unguarded_script_gets_an_mlprof_error_naming_the_guard(tmp_path):
    """Called at a script's top level, the measurement process would import the script and
    measure again (before: a multiprocessing traceback, or a wait for its own lock)."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "from mlprof.measure import MeasureSettings, measure_isolated\n"
        f"measure_isolated({str(DNN)!r}, MeasureSettings(batch_size=1, n_calls=5, "
        "min_duration=0))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("mlprof.errors.MLProfError: ") and str(script) in last
    assert "line 2 calls mlprof at the script's top level" in last
    assert 'if __name__ == "__main__":' in last


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_measurement_ends_with_the_process_that_started_it(tmp_path, sig):
    """``law run`` stopped by SIGTERM or SIGKILL (``timeout``, ``scancel``, ``condor_rm``)
    runs no clean-up: its measurement child must still end, not burn a core for minutes (a
    ResNet-18 profile was seen doing so before the child died with its server)."""
    import signal
    import subprocess
    import sys

    pid_file = tmp_path / "child.pid"
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(REPO / 'tests')!r})\n"
        "import faulty\n"
        "from mlprof.measure.isolate import run_isolated\n"
        "if __name__ == '__main__':\n"
        f"    run_isolated(faulty.spin, {{'pid_file': {str(pid_file)!r}}}, label='spin',\n"
        "                 timeout=120)\n")
    parent = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert _running(child)
        parent.send_signal(getattr(signal, sig))
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = _running(child)
        if alive:  # do not leave it behind even when the test fails
            os.kill(child, signal.SIGKILL)
        assert not alive, f"the measurement child {child} outlived its parent ({sig})"
    finally:
        if parent.poll() is None:
            parent.kill()


_COUNTED_SCRIPT = """
import os, sys
with open(sys.argv[1] if __name__ == "__main__" else os.environ["COUNT_FILE"], "a") as f:
    f.write(f"{os.getpid()} {__name__}\\n")

def pid(progress=None):
    return os.getpid()

if __name__ == "__main__":
    os.environ["COUNT_FILE"] = sys.argv[1]
    from mlprof.measure.isolate import run_isolated
    print(" ".join(str(run_isolated(pid, {}, timeout=120)) for _ in range(3)))
"""


def test_the_main_script_runs_once_in_the_server_not_in_every_child(tmp_path):
    """The measurement server runs the main script (as ``__mp_main__``) once; its children find
    it loaded. Python 3.11/3.12's forkserver never did (CPython gh-126631): each child ran the
    script's top level again, here the line it writes to the count file."""
    import subprocess
    import sys

    script, count = tmp_path / "counted.py", tmp_path / "count.txt"
    script.write_text(_COUNTED_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(count)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    workers = proc.stdout.split()
    runs = count.read_text().splitlines()
    assert len(workers) == 3 and len(set(workers)) == 3
    assert [name for _, name in (r.split() for r in runs)] == ["__main__", "__mp_main__"], runs
    assert not {pid for pid, _ in (r.split() for r in runs)} & set(workers)


def test_the_server_runs_no_main_script_named_from_outside(tmp_path):
    """Without a main script (``python -c``), an inherited ``MLP_SERVER_MAIN`` naming a script
    does not make the measurement server run it."""
    import subprocess
    import sys

    planted, mark = tmp_path / "planted.py", tmp_path / "ran.txt"
    planted.write_text(f"open({str(mark)!r}, 'w').write('ran')\n")
    code = ("from mlprof.measure.isolate import run_isolated\n"
            "print(run_isolated('ok'.format, {}, timeout=120))\n")
    env = dict(os.environ, MLP_SERVER_MAIN=str(planted))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok" and not mark.exists()


def test_a_script_read_from_standard_input_measures(tmp_path):
    """``python -`` (a script piped in, ``__main__.__file__`` is ``<stdin>``): the child starts
    as for ``python -c`` instead of dying on multiprocessing's attempt to run ``<stdin>``
    again, and the script's ``__file__`` is as it was."""
    import subprocess
    import sys

    code = ("import __main__\n"
            "from mlprof.measure.isolate import run_isolated\n"
            "print(run_isolated('ok'.format, {}, timeout=120), __main__.__file__)\n")
    proc = subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["ok", "<stdin>"], proc.stdout + proc.stderr[-2000:]


_GATED_SCRIPT = """
import sys
import time


def loaded(progress=None):
    return ",".join(m for m in ("onnxruntime", "torch") if m in sys.modules)


if __name__ == "__main__":
    import multiprocessing.forkserver

    from mlprof.measure import forkserver
    from mlprof.measure.isolate import run_isolated

    forkserver.start_early()
    pid = forkserver._gated
    if sys.argv[1] == "wait":
        time.sleep(3)  # past its light imports on an idle machine; what it checks holds anyway
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read()
        print("waiting", "libtorch" in maps or "onnxruntime" in maps)
    # "now": the go comes at once, before the server can have reached its gate
    print("child", run_isolated(loaded, {}, timeout=300))
    print("same", multiprocessing.forkserver._forkserver._forkserver_pid == pid)
"""


@pytest.mark.parametrize("when", ["now", "wait"])
def test_a_server_started_early_waits_at_its_gate_and_goes_on_when_asked(tmp_path, when):
    """:func:`~mlprof.measure.forkserver.start_early`: the server loads no runtime until the
    first use asks for it; then the child comes from that same server, with torch preloaded.
    A go sent before the server reached its gate (``now``) waits for it instead of killing the
    server (SIGUSR1's default action): it is blocked from the server's start."""
    import subprocess
    import sys

    script = tmp_path / "gated.py"
    script.write_text(_GATED_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), when], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    if when == "wait":
        assert "waiting False" in lines, proc.stdout
    assert "child onnxruntime,torch" in lines, proc.stdout
    assert "same True" in lines, proc.stdout
