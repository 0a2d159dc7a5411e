"""Issue 22, part E: numbers and processes from outside are hostile until checked.

Settings multiplied into memory or time are bounded and refused up front (one line, exit 40,
before any branch runs); numbers are ASCII digits only; interleaved intervals need enough
rounds; implausible samples and malformed rows are ``corrupt``; nothing a measurement starts
outlives it, also when it exits at once after forking a daemon; the ``needs-network`` sandbox
blocks name resolution, raw sockets, UDP and subprocesses."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

from mlprof.errors import CorruptResult, MeasurementFailed, MLProfError
from mlprof.measure.isolate import run_isolated
from mlprof.measure.stats import STAT_COLUMNS
from tests.helpers import REPO, law_run

DNN = str(REPO / "examples" / "dnn" / "model_onnx_l10u128.yaml")


# --- numbers: bounds checked up front, ASCII digits only ----------------------------------------

#: (options, the one line each now gets); before: MemoryError per branch, every branch failing,
#: the scheduler expanding a rule until memory ran out, or a number Python reads but a user not
HOSTILE_OPTIONS = [
    (["--n-calls", "99999999999"], "--n-calls: must be <= 1000000, got 99999999999"),
    (["--n-events", "100000"], "--n-events: must be <= 1000, got 100000"),
    (["--warmup", "10000000"], "--warmup: must be <= 1000000, got 10000000"),
    (["--min-duration", "1e308"], "--min-duration: must be <= 60, got 1e+308"),
    (["--n-calls", "100000", "--n-events", "100"],
     "--n-calls: n-calls x n-events must be <= 1000000 calls per round, got 100000 x 100"),
    (["--tfaot-batch-rules", "1000000000:ones"],
     "--tfaot-batch-rules: bad rule '1000000000:ones': the target batch size must be <= 65536, "
     "the largest batch size mlprof measures"),
    (["--batch-sizes", "100000"], "--batch-sizes: batch sizes must be <= 65536, got 100000"),
    (["--batch-sizes", "\u0661\u0660"],
     "--batch-sizes: '\u0661\u0660' is not an integer (ASCII digits)"),
    (["--batch-sizes", "1_0"], "--batch-sizes: '1_0' is not an integer (ASCII digits)"),
    (["--n-calls", "1_0"], "--n-calls: '1_0' is not an integer (ASCII digits)"),
    (["--min-duration", "\u0660.5"], "--min-duration: '\u0660.5' is not a number (ASCII digits)"),
]


@pytest.mark.parametrize("args, message", HOSTILE_OPTIONS,
                         ids=[" ".join(a) for a, _ in HOSTILE_OPTIONS])
def test_law_run_refuses_hostile_numbers_up_front(tmp_path, args, message):
    proc = law_run("MergeRuntimes", "--version", "hn", "--model-file", DNN, *args,
                   store=tmp_path / "store", timeout=300)
    assert proc.returncode == 40, proc.stderr[-2000:]
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "mlprof error" in ln]
    assert len(lines) == 1 and lines[0].endswith(f"mlprof error: {message}"), lines
    assert not (tmp_path / "store" / "MeasureRuntime").exists()  # no branch ran


@pytest.mark.parametrize("args, message", [
    (["--n-calls", "99999999999"], "mlprof error: --n-calls: must be <= 1000000, got 99999999999"),
    (["--batch-sizes", "\u0661\u0660"], "mlprof error: --batch-sizes: batch sizes must be an "
     "integer in ASCII digits, got '\u0661\u0660'"),
    (["--min-duration", "nan"], "mlprof error: --min-duration: must be a finite number, got nan"),
    (["--workers", "99999999"], "mlprof error: --workers: must be <= 64, got 99999999"),
    (["--workers", "1_0"], "mlprof error: --workers: expected an integer, got '1_0'"),
])
def test_the_mlprof_command_refuses_them_too(tmp_path, args, message):
    env = {**os.environ, "MLP_STORE": str(tmp_path / "store")}
    proc = subprocess.run([sys.executable, "-m", "mlprof.cli", "benchmark", DNN, *args],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 40, proc.stderr[-2000:]
    assert proc.stderr.strip() == message, proc.stderr


def test_the_rule_bound_is_checked_before_the_rule_expands():
    from mlprof.runtimes.batching import parse_batch_rules

    # the bound itself expands (65536 pieces), one above does not and is refused
    assert len(parse_batch_rules("65536:ones")[65536].sizes) == 65536
    for text in ("65537:ones", "10000000000000000000:twos", "5:70000", "\u0661:ones"):
        with pytest.raises(MLProfError) as e:
            parse_batch_rules(text)
        assert e.value.field == "--tfaot-batch-rules", e.value


def test_interleaved_comparisons_need_six_rounds(tmp_path):
    from mlprof.measure.interleave import check_rounds

    for rounds in (2, 3, 5):
        with pytest.raises(MLProfError) as e:
            check_rounds(rounds)
        assert str(e.value) == (f"--interleave: give at least 6 rounds, got {rounds} (a 95 % "
                                "interval from fewer rounds is too narrow: too few rounds to "
                                "tell)")
    assert check_rounds(6) == 6 and check_rounds(1000) == 1000
    with pytest.raises(MLProfError, match="at most 1000 rounds"):
        check_rounds(1001)
    proc = law_run("PlotMultiRuntimes", "--version", "il", "--model-files", f"{DNN},{DNN}",
                   "--interleave", "3", store=tmp_path / "store", timeout=300)
    assert proc.returncode == 40 and "--interleave: give at least 6 rounds, got 3" in \
        proc.stderr, proc.stderr[-2000:]


def test_a_table_of_fewer_rounds_reads_as_too_few_to_tell(tmp_path):
    from mlprof.measure.interleave import read_table

    table = tmp_path / "speedup.csv"
    table.write_text(
        "batch_size,config,model,runtime,reference,rounds,median_ms,speedup,ci_low,ci_high,"
        "significant,verdict\n"
        "1,a,a,onnxruntime,a,3,0.1,1,1,1,False,reference\n"
        "1,b,b,onnxruntime,a,3,0.11,0.91,0.9,0.92,True,slower\n")
    ref, other = read_table(str(table))
    assert ref["verdict"] == "reference"
    assert other["verdict"] == "too few rounds to tell" and other["significant"] is False
    table.write_text(table.read_text().replace("True,slower", "True,slower,extra"))
    with pytest.raises(MLProfError, match="row 3: bad or missing field"):
        read_table(str(table))


# --- damaged records: implausible samples and malformed rows are corrupt -----------------------

def _branch(tmp_path, rows: list[str], header: str = "batch_size,event,call,runtime_ms"):
    import json

    csv_path = tmp_path / "runtime_bs_1.csv"
    json_path = tmp_path / "runtime_bs_1.json"
    csv_path.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    json_path.write_text(json.dumps({"settings": {"batch_size": 1}, "n_samples": len(rows)}))
    return str(csv_path), str(json_path)


@pytest.mark.parametrize("rows, message", [
    (["1,0,0,0.5", "1,0,1,1e300"], "1 of 2 samples are longer than an hour per call (line 3: "
     "1e+300 ms), not plausible"),
    (["1,0,0,0.5", "1,0,1,3600001"], "1 of 2 samples are longer than an hour per call"),
    (["1,0,0,0.5", "1,0,1,-1"], "1 of 2 samples are not finite and positive"),
    (["1,0,0,0.5", "1,0,1,nan"], "1 of 2 samples are not finite and positive"),
    (["1,0,0,0.5,7", "1,0,1,0.6,7"], "rows have 5 fields, expected 4"),
    (["1,0,0,0.5", "1,0,1,0.6,7"], "line 3 has 5 fields, expected 4"),
    (["1,0,0,0.5", "1,0,1"], "line 3 has 3 fields, expected 4 (cut off?)"),
])
def test_implausible_samples_and_malformed_rows_are_corrupt(tmp_path, rows, message):
    from mlprof.measure.results import branch_problem, read_branch

    csv_path, json_path = _branch(tmp_path, rows)
    with pytest.raises(CorruptResult) as e:
        read_branch(csv_path, json_path)
    assert message in e.value.message and e.value.file == csv_path, e.value
    assert branch_problem(csv_path, json_path) is not None  # MeasureRuntime measures again
    ok_csv, ok_json = _branch(tmp_path, ["1,0,0,0.5", "1,0,1,3600000"])
    samples, _ = read_branch(ok_csv, ok_json)  # an hour exactly is the last plausible call
    assert samples.tolist() == [0.5, 3600000.0]


def test_a_sample_of_1e300_ms_is_a_corrupt_row_of_the_report(tmp_path):
    from mlprof.report.collect import collect

    store = tmp_path / "store"
    proc = law_run("MeasureRuntime", "--version", "r", "--model-file", DNN, "--batch-sizes", "1",
                   "--n-calls", "5", "--warmup", "1", "--min-duration", "0", store=store,
                   timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (csv_path,) = store.rglob("runtime_bs_1.csv")
    lines = csv_path.read_text().splitlines()
    lines[2] = ",".join(lines[2].split(",")[:3] + ["1e300"])
    csv_path.write_text("\n".join(lines) + "\n")
    statuses = {str(r.get("status")) for r in collect([store])}
    assert statuses == {"corrupt"}, statuses


N_STATS = len(STAT_COLUMNS)


@pytest.mark.parametrize("edit, message", [
    (lambda h, r: (h + ",extra", [x + ",1" for x in r]), "header has unknown columns ['extra']"),
    # as many fields as the statistics have columns (19 before the error columns, 23 since)
    (lambda h, r: (h, [r[0] + ",1"]), f"line 2 has {N_STATS + 1} fields, expected {N_STATS}"),
    (lambda h, r: (h, [",".join(r[0].split(",")[:-1])]),
     f"line 2 has {N_STATS - 1} fields, expected {N_STATS}"),
    (lambda h, r: (h.replace("median_ms", "mediane"), r), "header has unknown columns"),
    (lambda h, r: (h, [r[0].replace("0.25", "1e300", 1)]), "not a plausible value (at most "
     "3600000 ms, an hour)"),
    (lambda h, r: (h, [r[0].replace("0.25", "-0.25", 1)]), "not a plausible value"),
    (lambda h, r: (h, [r[0].replace("0.25", "\u0660.25", 1)]), "not a number"),
])
def test_a_damaged_statistics_table_is_corrupt(tmp_path, edit, message):
    from mlprof.measure.stats import read_stats_csv, summarize, write_stats_csv

    path = tmp_path / "stats.csv"
    rows = [summarize(np.array([0.25, 0.25, 0.25]), 1)]
    write_stats_csv(path, rows)
    assert read_stats_csv(path)["median_ms"].tolist() == [0.25]
    header, *body = path.read_text().splitlines()
    h, r = edit(header, body)
    path.write_text("\n".join([h, *r]) + "\n")
    with pytest.raises(CorruptResult) as e:
        read_stats_csv(path)
    assert message in e.value.message and e.value.file == str(path), e.value


# --- processes ----------------------------------------------------------------------------------

def _daemon(pid_file: str) -> None:
    """Double-fork a daemon in a session of its own that writes its pid to ``pid_file`` and
    sleeps (no exec: a pure fork, as a library's worker would be)."""
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pid_file + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.replace(pid_file + ".tmp", pid_file)
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    os.waitpid(first, 0)
    deadline = time.monotonic() + 10
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.01)


def daemon_then_exit_at_once(pid_file: str, progress=None):
    """Fork a daemon, then leave at once without any clean-up (os._exit)."""
    _daemon(pid_file)
    os._exit(0)


def daemon_then_crash_at_once(pid_file: str, progress=None):
    """Fork a daemon, then crash at once (SIGSEGV)."""
    _daemon(pid_file)
    ctypes.string_at(0)


def daemon_then_return(pid_file: str, progress=None):
    """Fork a daemon and return a result at once."""
    _daemon(pid_file)
    return "done"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.parametrize("func, message", [
    (daemon_then_exit_at_once, "exited with code 0 without a result"),
    (daemon_then_crash_at_once, "crashed with SIGSEGV"),
    (daemon_then_return, None),
])
def test_a_daemon_of_a_measurement_that_ends_at_once_ends_with_it(tmp_path, func, message):
    pid_file = str(tmp_path / f"daemon-{uuid.uuid4().hex[:8]}.pid")
    try:
        result = run_isolated(func, {"pid_file": pid_file}, label="daemon", timeout=60)
        assert message is None and result == "done"
    except MeasurementFailed as e:
        assert message is not None and message in e.message, e.message
    assert os.path.exists(pid_file), "the daemon never started: the test shows nothing"
    daemon = int(open(pid_file).read())
    deadline = time.monotonic() + 5  # the kill is immediate; allow a loaded machine to reap it
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _alive(daemon)
    if survived:
        os.kill(daemon, signal.SIGKILL)  # never leave it behind, even when the test fails
    assert not survived, "the daemon outlived the measurement"


# --- the sandbox of model scripts --------------------------------------------------------------

def _outside_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (stands for another machine: it is
    reachable from the test process, and must not be from a sandboxed script)."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.255", 9))  # no packet is sent: only the route is looked up
        addr = probe.getsockname()[0]
    except OSError:
        addr = None
    finally:
        probe.close()
    if addr and not addr.startswith("127."):
        return addr
    with open("/proc/net/fib_trie") as f:  # no route out: any local address of an interface
        text = f.read()
    import re

    for m in re.finditer(r"\|-- (\d+\.\d+\.\d+\.\d+)\n\s+/32 host LOCAL", text):
        if not m.group(1).startswith("127."):
            return m.group(1)
    return None


def hostile_network_calls(host: str, udp_port: int, tcp_port: int, progress=None) -> dict:
    """What a model script could do to reach the network, inside the sandbox of a worker."""
    import _socket
    import socket
    import subprocess
    import sys

    from mlprof.model.sandbox import network_isolation, script_sandbox

    out: dict[str, str] = {}

    def attempt(name, fn):
        try:
            fn()
            out[name] = "reached"
        except Exception as e:  # noqa: BLE001  (any refusal is what the test wants)
            out[name] = f"{type(e).__name__}: {e}"

    with script_sandbox():
        out["isolation"] = network_isolation()
        attempt("gethostbyname", lambda: socket.gethostbyname("example.com"))
        attempt("raw udp", lambda: _socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"raw udp", (host, udp_port)))
        attempt("raw tcp", lambda: _socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(
            (host, tcp_port)))
        attempt("udp sendto", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"udp sendto", (host, udp_port)))
        code = (f"import _socket, socket; _socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                f".sendto(b'subprocess', ({host!r}, {udp_port}))")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)
        out["subprocess"] = "reached" if proc.returncode == 0 else proc.stderr.strip()[-120:]
    return out


def test_the_sandbox_blocks_resolution_raw_sockets_udp_and_subprocesses():
    import socket

    host = _outside_address()
    if host is None:
        pytest.skip("no non-loopback address on this machine to stand for another one")
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        udp.bind((host, 0))
        tcp.bind((host, 0))
        tcp.listen(4)
        out = run_isolated(hostile_network_calls, {"host": host, "udp_port": udp.getsockname()[1],
                                                   "tcp_port": tcp.getsockname()[1]},
                           label="hostile network", timeout=120)
        udp.settimeout(1.0)  # a datagram that got through is there by now
        received = []
        try:
            while True:
                received.append(udp.recv(100))
        except TimeoutError:
            pass
    finally:
        udp.close()
        tcp.close()
    assert out["isolation"] == "namespace", out
    assert out["gethostbyname"].startswith("NetworkBlocked") and "example.com" in \
        out["gethostbyname"], out
    for name in ("raw udp", "raw tcp", "udp sendto", "subprocess"):
        assert out[name] != "reached", (name, out)
    assert received == [], received  # nothing left the worker (before: raw udp, subprocess)


NOBODY_CHECK = """
import socket, subprocess, sys, _socket
sys.path.insert(0, {repo!r})
from mlprof.model.sandbox import enter_network_namespace, network_isolation
print(enter_network_namespace(), network_isolation())
try:
    _socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ({host!r}, 9))
    print("reached")
except OSError as e:
    print("blocked", e.errno)
print(open({readme!r}).read(8) == "# mlprof")  # files keep their owners (user mapped to itself)
"""


def test_the_network_namespace_works_for_a_user_other_than_root():
    import shutil

    host = _outside_address() or "192.0.2.1"
    python = "/usr/bin/python3"  # the test's own interpreter may be unreadable for nobody
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(python):
        pytest.skip("needs root, setpriv and a system python3 to run as nobody")
    code = NOBODY_CHECK.format(repo=str(REPO), host=host, readme=str(REPO / "README.md"))
    proc = subprocess.run(["setpriv", "--reuid", "nobody", "--regid", "nogroup",
                           "--clear-groups", python, "-c", code], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:3] == ["True namespace", "blocked 101", "True"], proc.stdout


def test_outside_a_worker_the_python_layer_still_blocks_names_and_udp():
    import socket

    from mlprof.model.sandbox import NetworkBlocked, network_isolation, script_sandbox

    with script_sandbox() as guard:
        assert network_isolation() == "python"  # this process is not disposable
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname("example.com")
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname_ex("example.com")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, \
                pytest.raises(NetworkBlocked):
            s.sendto(b"x", ("192.0.2.1", 53))
    assert guard.blocked == ["example.com", "192.0.2.1:53"]
    assert socket.gethostbyname is not None and "guarded" not in socket.gethostbyname.__name__


@pytest.mark.parametrize("value, message", [
    ("\u0661\u0660", "MLP_TIMEOUT: must be a number of seconds, got '\u0661\u0660'"),
    ("1_0", "MLP_TIMEOUT: must be a number of seconds, got '1_0'"),
    ("inf", "MLP_TIMEOUT: must be a finite number of seconds, got 'inf'"),
])
def test_numbers_in_the_environment_are_ascii_and_finite(monkeypatch, value, message):
    from mlprof.measure import isolate

    monkeypatch.setenv("MLP_TIMEOUT", value)
    with pytest.raises(MLProfError) as e:
        isolate.default_timeout()
    assert str(e.value) == message
    monkeypatch.setenv("MLP_TIMEOUT", "30")
    assert isolate.default_timeout() == 30.0


@pytest.mark.slow  # 2 s or more here (2026-11-26): out of the 5-minute fast tier
def test_a_script_using_a_raw_socket_gets_needs_network(tmp_path):
    """Past the Python layer (``_socket`` directly): the namespace refuses it and the script's
    status is still ``needs-network`` (before: it connected)."""
    import socket

    pytest.importorskip("torch", reason="model scripts need PyTorch (MLP_EXTRAS=torch)")
    from mlprof.model.script import discover

    host = _outside_address()
    if host is None:
        pytest.skip("no non-loopback address on this machine to stand for another one")
    script = tmp_path / "raw_socket.py"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind((host, 0))
        server.listen(4)
        script.write_text("import _socket, socket\n"
                          "s = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                          f"s.connect(({host!r}, {server.getsockname()[1]}))\n")
        with pytest.raises(MeasurementFailed) as e:
            run_isolated(discover, {"path": str(script)}, timeout=120, torch=True)
    assert e.value.status == "needs-network", e.value
    assert str(e.value) == (f"{script}: needs-network: the script tried to reach the network "
                            "(mlprof runs scripts without network: the network namespace "
                            "refused it; OSError)")
