"""Progress you can see: a measurement says what it does at least every ~2 s (the terminal: a
line at least every 5 s), whatever a call takes, on real ONNX Runtime sessions."""

from __future__ import annotations

import io
import logging
import re
import time

import numpy as np
import pytest

from mlprof.measure import MeasureSettings, measure, measure_isolated
from mlprof.progress import LOG_EVERY, STALL, Progress, progress_logger
from tests.helpers import DNN, law_run
from tests.onnx_factory import slow_model

CALLS_LINE = re.compile(r"^(\d+) calls?, ([\d.]+) s elapsed, ~([\d.]+) s left$")


def slow_onnx(path, seconds: float, size: int = 256) -> str:
    """An ONNX model (:func:`onnx_factory.slow_model`) whose call at batch size 1 takes about
    ``seconds`` on this machine, as it is now: scaled from a short probe, then timed whole
    and scaled again when it came out shorter than 0.8 of that (a probe slowed by a stall
    made a 3.5 s model that took 1.8 s in a CI run)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    feed = {"x": np.ones((1, size), np.float32)}

    def best_of(iterations: int, runs: int) -> float:
        sess = ort.InferenceSession(slow_model(path, iterations, size), so,
                                    providers=["CPUExecutionProvider"])
        if runs > 1:
            sess.run(None, feed)  # a warm-up call
        best = float("inf")
        for _ in range(runs):
            t0 = time.perf_counter()
            sess.run(None, feed)
            best = min(best, time.perf_counter() - t0)
        return best

    iterations = 3000
    iterations = max(1, round(seconds * iterations / best_of(iterations, 3)))
    for _ in range(2):
        took = best_of(iterations, 1)
        if took >= 0.8 * seconds:
            break
        iterations = max(1, round(seconds * iterations / took))
    return slow_model(path, iterations, size)


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_a_3_s_call_still_reports_at_least_every_2_s(tmp_path):
    model = slow_onnx(tmp_path / "slow.onnx", 3.5)
    seen: list[tuple[float, float, str]] = []
    r = measure_isolated(model, MeasureSettings(batch_size=1, n_calls=1, warmup=0,
                                                min_duration=0), timeout=300,
                         progress=lambda f, m: seen.append((time.monotonic(), f, m)))
    end = time.monotonic()
    p = r.provenance
    # calls longer than the longest silence allowed (so the watcher thread had to speak)
    assert p["first_call_ms"] > 2000 and r.samples_ns[0] > 2e9
    times = [t for t, _, _ in seen]
    gaps = np.diff([*times, end])
    assert gaps.max() < 2.0, [(round(t - times[0], 2), m) for t, _, m in seen]
    # (the parent's own report while a server starts, when this is the process's first child)
    messages = [m for _, _, m in seen if "starting the measurement server" not in m]
    # what it is doing, then how long it has been at it
    assert messages[0] == "loading the model, 0.0 s elapsed"
    assert sum(m.startswith("first call, ") for m in messages) >= 2
    assert sum(m.startswith("measuring, ") for m in messages) >= 2
    assert messages[-1].startswith("1 call measured, ")
    elapsed = [float(re.search(r"([\d.]+) s elapsed", m).group(1)) for m in messages]
    assert elapsed == sorted(elapsed)
    assert elapsed[-1] >= p["first_call_ms"] / 1e3 + r.samples_ns[0] / 1e9 - 0.1


@pytest.mark.slow  # 3 s or more here: out of the 5-minute fast tier
def test_measuring_reports_calls_elapsed_and_time_left_between_blocks():
    seen: list[tuple[float, float, str]] = []
    start = time.monotonic()
    r = measure(str(DNN), MeasureSettings(batch_size=1, n_calls=100, warmup=10, min_duration=3),
                progress=lambda f, m: seen.append((time.monotonic() - start, f, m)))
    total = time.monotonic() - start
    lines = [(t, f, CALLS_LINE.match(m)) for t, f, m in seen if CALLS_LINE.match(m)]
    assert len(lines) >= 2, seen
    for _, fraction, m in lines:
        calls, elapsed, left = int(m.group(1)), float(m.group(2)), float(m.group(3))
        assert 0 < calls <= r.samples_ns.size and 0 < fraction <= 1
        assert elapsed + left == pytest.approx(total, abs=1.0)  # the estimate is about right
    # about once a second, from between blocks (no call here takes long)
    assert np.diff([t for t, _, _ in lines]).max() < STALL + 0.5
    # the samples are laid out as ever: whole rounds of n_calls, events in turn
    assert r.samples_ns.size == 100 * r.provenance["rounds"]
    assert r.calls.tolist() == list(range(r.samples_ns.size))


def test_the_watcher_speaks_while_the_work_is_silent_and_stops_with_it():
    seen: list[tuple[float, str]] = []
    with Progress(lambda f, m: seen.append((time.monotonic(), m)), every=0.0, stall=0.2) as rep:
        rep.phase("first call (compiling with torch.compile...)")
        time.sleep(1.0)  # a long call: the working thread says nothing
        rep.update("10 calls", left_s=5.0, fraction=0.5)
    n = len(seen)
    time.sleep(0.5)
    assert len(seen) == n  # no thread left behind
    assert seen[0][1] == "first call (compiling with torch.compile...), 0.0 s elapsed"
    assert 4 <= sum("compiling" in m for _, m in seen) <= 7
    assert np.diff([t for t, _ in seen]).max() < 0.35
    assert re.fullmatch(r"10 calls, 1\.\d s elapsed, ~5\.0 s left", seen[-1][1])
    with Progress(None) as rep:  # nobody listens: nothing runs
        rep.phase("first call")
        assert rep._thread is None


def test_a_phase_said_only_if_it_lasts_is_sent_by_the_watcher_alone():
    seen: list[tuple[float, str]] = []
    with Progress(lambda f, m: seen.append((time.monotonic(), m)), stall=0.3) as rep:
        rep.phase("creating the session")
        rep.phase("first call", now=False)
        assert [m for _, m in seen] == ["creating the session, 0.0 s elapsed"]  # not yet
        start = time.monotonic()
        time.sleep(0.8)  # a first call that lasts
    later = [(t - start, m) for t, m in seen[1:]]
    assert later and all(m.startswith("first call, ") for _, m in later), seen
    assert later[0][0] >= 0.2  # from the watcher, after the silence, not at once


@pytest.mark.slow
def test_a_20_s_point_prints_progress_lines_in_the_terminal(store, tmp_path):
    model = slow_onnx(tmp_path / "slow.onnx", 1.0)
    proc = law_run("PlotRuntimes", "--version", "p", "--model-file", model, "--batch-sizes", "1",
                   "--n-calls", "20", "--warmup", "1", "--min-duration", "20", store=store,
                   timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    point = "slow on onnxruntime at batch size 1 (point 1 of 1)"
    assert f"measuring {point}" in out
    lines = [ln.split(f"{point}: ", 1)[1] for ln in out.splitlines() if f"{point}: " in ln
             and " s elapsed" in ln]
    assert len(lines) >= 3, out[-3000:]
    assert sum(bool(CALLS_LINE.match(ln)) for ln in lines) >= 2, lines
    # a line at least every 5 s: the child's clock, in the lines
    elapsed = [float(re.search(r"([\d.]+) s elapsed", ln).group(1)) for ln in lines]
    assert elapsed[0] < 5.5 and np.diff(elapsed).max() < 5.5, lines
    assert np.diff(elapsed).min() >= LOG_EVERY - 0.5


def test_only_torch_compile_compiles_on_its_first_call():
    from mlprof.runtimes import runtime_info

    assert runtime_info("inductor").compiler == "torch.compile"
    assert runtime_info("torch-compile").compiles_on_first_call
    assert not runtime_info("ort").compiles_on_first_call
    assert not runtime_info("torch").compiles_on_first_call


@pytest.mark.slow
def test_torch_compile_says_it_is_compiling(tmp_path):
    pytest.importorskip("torch")
    from tests.helpers import REPO

    seen: list[str] = []
    r = measure_isolated(str(REPO / "tests" / "scripts" / "linear.py"),
                         MeasureSettings(batch_size=2, n_calls=5, warmup=1, min_duration=0,
                                         runtime="torch-compile"), timeout=600,
                         progress=lambda f, m: seen.append(m))
    # the phases in order, each said when it begins; the compile says which one it is: the
    # AOTInductor package built (an empty cache) or loaded from the store (one built before)
    heads = list(dict.fromkeys(m.split(", ")[0] for m in seen))
    assert heads[2] in ("compiling with torch.export + AOTInductor (once per store)",
                        "loading the AOTInductor package from the store"), heads
    # the timed first call is not announced (a report just before it would cool its caches):
    # the watcher names it only if it lasts
    assert heads[:4] == ["loading the model", "creating the session", heads[2],
                         "warm-up: 0 of 1 calls"]
    compiling = [m for m in seen if m.startswith(heads[2] + ", ")]
    assert compiling and compiling[0].endswith(" s elapsed")
    # one report per STALL seconds of compiling, after the one when it began
    assert len(compiling) >= 1 + int(r.provenance["compile_s"] / (STALL + 0.5))
    assert "measuring" in heads and heads[-1] == "5 calls measured"


class _Lines(logging.Handler):
    """The messages logged to a logger, with the (fake) time they came at."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self.clock, self.lines = clock, []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((self.clock[0], record.getMessage()))


def test_a_progress_line_is_due_when_the_process_not_the_step_was_silent(monkeypatch):
    """Two steps without an announcement between them (a load search, then its next point):
    the second speaks 3.5 s after the first's last line, not 3.5 s after its own first report
    (which gave 6.1 s without a line here); a line of the mlprof logger or a task's
    announcement counts as said; a step's first report is never a line (``0.0 s elapsed``)."""
    import types

    import mlprof.progress as progress
    from mlprof.tasks.runtime import MergeRuntimes

    clock = [100.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    out = logging.getLogger("mlprof-test-progress")
    out.propagate = False
    handler = _Lines(clock)
    out.addHandler(handler)
    out.setLevel(logging.INFO)

    def report(step, *times: float) -> None:
        for t in times:
            clock[0] = t
            step(0.5, f"at {t}")

    try:
        progress.said()  # the announcement of step A, at 100
        a, b = progress_logger("A", out), progress_logger("B", out)
        report(a, 100.2, 101.2, 102.2, 103.2, 104.2, 105.2, 106.2)
        report(b, 106.8, 107.8)
        assert handler.lines == [(104.2, "A: at 104.2"), (107.8, "B: at 107.8")]
        gaps = np.diff([100.0] + [t for t, _ in handler.lines])
        assert gaps.max() <= LOG_EVERY + STALL
        # a warning of mlprof's logger is a line said: B waits 3.5 s from it
        clock[0] = 108.8
        logging.getLogger("mlprof").warning("a warning in between")
        report(b, 109.8, 110.8, 111.8, 112.8)
        assert handler.lines[2:] == [(112.8, "B: at 112.8")]
        # so is a task's announcement (law's publish_message, to stdout)
        clock[0] = 113.0
        MergeRuntimes(version="t1").publish_message("measuring C", stdout=io.StringIO(),
                                                    scheduler=False)
        c = progress_logger("C", out)
        report(c, 117.0, 118.0)  # silent 4 s at its first report: a line at the second only
        assert handler.lines[3:] == [(118.0, "C: at 118.0")]
    finally:
        out.removeHandler(handler)


def test_the_runs_watcher_is_quiet_while_a_step_speaks_for_itself(monkeypatch):
    """``law run``'s own watcher (progress.watch_run) speaks after 3.5 s of silence, but not
    while a step reports for itself (own_voice: a child's progress, a lock wait), whose line
    is the one to print (``1234 calls, ...``, not ``running MeasureRuntime``)."""
    import types

    import mlprof.progress as progress

    clock = [100.0]
    monkeypatch.setattr(progress, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    mlprof_log = logging.getLogger("mlprof")
    handler = _Lines(clock)
    mlprof_log.addHandler(handler)
    monkeypatch.setattr(mlprof_log, "level", logging.INFO)
    try:
        line = progress._run_line("law run X")
        progress.said()
        line(0.0, "importing")  # a first report is never a line
        clock[0] = 104.0
        with progress.own_voice():
            line(0.0, "running X")  # silent 4 s, but a step speaks for itself
            assert handler.lines == []
        line(0.0, "running X")
        assert handler.lines == [(104.0, "law run X: running X")]
        clock[0] = 106.0
        line(0.0, "running X")  # 2 s after that line: not yet
        assert len(handler.lines) == 1
    finally:
        mlprof_log.removeHandler(handler)


def test_the_runs_watcher_names_a_workflow_waiting_for_its_jobs():
    """Between law's polls of a Slurm/HTCondor workflow (30 s by default) the run's watcher
    says what the law process waits for, not only which task runs."""
    from mlprof.tasks.runtime import MeasureRuntime

    remote = MeasureRuntime(version="t1", workflow="slurm", poll_interval=0.25)
    assert remote.watch_phase() == \
        "MeasureRuntime: waiting for its slurm jobs (law polls every 15 s)"
    assert MeasureRuntime(version="t1").watch_phase() == "running MeasureRuntime"
