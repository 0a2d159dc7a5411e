"""Scheduling overhead per task of ``law run`` for sweeps of 100 and 1000 branches.

What is measured: ``law run MeasureRuntime --version ... --batch-sizes 1,2,...,N`` as a
subprocess (the real command a user types; default model, ``--n-calls 10 --warmup 1
--min-duration 0``), each into a fresh temporary store, from ``Popen`` until luigi logs "Done
scheduling tasks". Nothing is measured by the tool in that span: scheduling ends before the
first task runs. Two scenarios:

- ``pending``: no outputs exist. luigi checks the workflow and all N branches, registers N + 1
  tasks with the scheduler (``Worker._add_task``); the process is killed (with its process group)
  as soon as scheduling is done, so no branch is measured;
- ``complete``: all N branches' outputs exist: valid files of ``FAKE_SAMPLES`` samples each
  (a raw CSV and a provenance JSON that pass :func:`mlprof.measure.results.read_branch`, which
  the completeness check applies). The workflow builds its N branches to check their outputs;
  nothing runs.

For each, both the wall time and the CPU time (user + system) of the ``law`` process at that
moment (``/proc/<pid>/stat``) are taken, and, inside the process, the CPU time of luigi's
``Worker.add`` of the root task (``law`` runs under a small driver, :data:`SPAN_DRIVER`, which
imports numpy first: a one-off import whose +-10 ms were +-0.1 ms per task at N = 100): the
scheduling itself without the start-up, whose +-50 ms from run to run are +-0.5 ms per task at
N = 100 in the end-to-end figure; "scheduling's own cpu" per task is (span(N) - span(1)) /
(N - 1). The CPU time is the figure to trust on a shared machine: other processes slow the
wall time far more than the CPU time. The end-to-end per-task overhead is

    (T(N) - T(1)) / (N - 1)

with T(1) (the same command with one batch size: start-up, imports, one task) measured in the
same run, so start-up does not dilute the per-task figure. ``ratio`` is the per-task overhead at
the largest N over that at the smallest (issue 38's targets: ratio <= 1.05 and at most 3 ms of
CPU per task; issue 30's was <= 2). The per-task overhead holds a constant part (law/luigi's and
mlprof's work per task instance: 8.8-10.9 ms of CPU before issue 38's patches in
``mlprof/tasks/framework/scale.py``, 1.1-2.2 ms after) that dilutes the ratio; "grew by"
(per-task CPU at the largest N minus at the smallest) isolates what grows with N.

Noise, and how the ratio is reported robustly: on a 2-vCPU machine shared with other jobs (load
2.5-3.7) the CPU time of the same work moves by +-20-30 % between runs seconds apart (caches,
a shared core, frequency), so one run's ratio moved between 0.70 and 1.75 for unchanged code.
Hence: ``--repeats R`` runs R rounds, each running every size of one configuration back to
back (N = 1, then smallest to largest), and reports both the ratio of each size's least CPU
time over the rounds (other work only ever adds CPU time) and the median of the rounds' own
ratios with their spread. ``--in-process ROUNDS`` adds a second measurement with less noise:
luigi's ``Worker.add`` of the same workflow, in one process per scenario and code
(:func:`in_process_child`), every size rebuilt and rechecked from scratch each time (task
instances and the checked branch files forgotten), each round bracketing the largest size by
the others (1, 100, 1000, 100, 1) so that a drift of the machine's speed cancels to first
order; the median of the rounds' ratios with its quartiles, and the ratio of the least times.
Read the ratio from several rounds, never from one.

Modes: ``patched`` (mlprof's patches of law 0.1.21 and luigi 3.8.1,
``mlprof/tasks/framework/scale.py``), ``unpatched`` (``MLP_NO_SCALE_PATCH=1``), and, with
``--before DIR``, ``before``: another checkout's code (e.g. ``git worktree add DIR <commit>``
and ``law index`` there), patched, in the same rounds, so a change is compared within one run.

Usage (after ``source setup.sh``)::

    python benchmarks/scheduling.py [--sizes 100,1000] [--scenarios pending,complete]
        [--repeats 1] [--modes patched,unpatched] [--before DIR] [--in-process ROUNDS]

This is a benchmark, not a test: it prints figures and exits 0 unless ``law run`` fails.
Unpatched at N = 1000 takes about a minute per scenario on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = ["--n-calls", "10", "--warmup", "1", "--min-duration", "0"]
DONE_SCHEDULING = "Done scheduling tasks"
#: samples per faked branch (a 0.5 s measurement of a fast model has thousands, a slow one tens)
FAKE_SAMPLES = 1000
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    """Wall and CPU seconds of ``law run`` until the end of scheduling, and the CPU seconds of
    the scheduling itself (luigi's ``Worker.add`` of the root task, measured inside the process:
    no start-up in it)."""

    wall_s: float
    cpu_s: float
    span_cpu_s: float = 0.0


#: runs ``law`` as its console script does, printing the CPU time of luigi's ``Worker.add``
#: (the workflow's and every branch's completeness check and registration) when it returns
SPAN_DRIVER = r"""
import runpy, shutil, sys, time
import numpy  # one-off: imported by the first completeness check; +-10 ms were +-0.1 ms per task
import luigi.worker
_add = luigi.worker.Worker.add
def add(self, *args, **kwargs):
    t0 = time.process_time()
    try:
        return _add(self, *args, **kwargs)
    finally:
        print(f"MLP-SCHED-CPU {time.process_time() - t0:.6f}", flush=True)
luigi.worker.Worker.add = add
sys.argv = ["law", *sys.argv[1:]]
runpy.run_path(shutil.which("law"), run_name="__main__")
"""
SPAN_MARK = "MLP-SCHED-CPU "


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (3rd field of stat); utime and stime are the 14th and 15th
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def branch_dir(store: str, version: str) -> str:
    """The directory MeasureRuntime's branches write to (independent of the batch-size list)."""
    os.environ["MLP_STORE"] = store
    from mlprof.tasks.runtime import MeasureRuntime

    wf = MeasureRuntime(version=version, batch_sizes=(1,), n_calls=10, warmup=1, min_duration=0.0)
    return os.path.dirname(wf.req(wf, branch=0).output()["csv"].path)


def fake_outputs(store: str, version: str, n: int) -> None:
    """Create valid outputs of branches 1..n (``FAKE_SAMPLES`` samples each): the completeness
    check, which validates them, sees them done."""
    import json

    from mlprof.measure.stats import RAW_COLUMNS
    from mlprof.results import layout

    directory = branch_dir(store, version)
    os.makedirs(directory, exist_ok=True)
    for bs in range(1, n + 1):
        files = layout.branch_files(bs)
        rows = "".join(f"{bs},0,{i},{0.1 + i * 1e-4:.6f}\n" for i in range(FAKE_SAMPLES))
        with open(os.path.join(directory, files["csv"]), "w") as f:
            f.write(",".join(RAW_COLUMNS) + "\n" + rows)
        with open(os.path.join(directory, files["json"]), "w") as f:
            json.dump({"settings": {"batch_size": bs}, "n_samples": FAKE_SAMPLES}, f)


def schedule_once(n: int, scenario: str, patched: bool, code: str | None = None) -> Sample:
    """One ``law run`` of N branches in a fresh store, timed until "Done scheduling tasks".

    ``code``: another checkout of mlprof to run instead of this one (``--before``)."""
    store = tempfile.mkdtemp(prefix="mlp-sched-")
    version = f"sched-{n}"
    try:
        if scenario == "complete":
            fake_outputs(store, version, n)
        env = dict(os.environ, MLP_STORE=store)
        if code is not None:  # that checkout's code, law index and config
            env.update(MLP_BASE=code, LAW_HOME=os.path.join(code, ".law"),
                       LAW_CONFIG_FILE=os.path.join(code, "law.cfg"),
                       PYTHONPATH=os.pathsep.join([code, *filter(None, [env.get("PYTHONPATH")])]),
                       PATH=os.pathsep.join([os.path.join(code, "bin"), env.get("PATH", "")]))
        env.setdefault("MLP_BASE", REPO)
        env.setdefault("LAW_HOME", os.path.join(REPO, ".law"))
        env.setdefault("LAW_CONFIG_FILE", os.path.join(REPO, "law.cfg"))
        env.pop("MLP_NO_SCALE_PATCH", None)
        env["MLP_VERBOSE"] = "1"  # luigi's "Done scheduling tasks" is an INFO line
        if not patched:
            env["MLP_NO_SCALE_PATCH"] = "1"
        args = ["run", "MeasureRuntime", "--version", version,
                "--batch-sizes", ",".join(map(str, range(1, n + 1))), *FAST]
        cmd = [sys.executable, "-c", SPAN_DRIVER, *args]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=code or REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        sample = None
        span = 0.0
        tail: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(SPAN_MARK):
                span += float(line[len(SPAN_MARK):])
                if sample is not None and scenario == "pending":
                    sample.span_cpu_s = span
                    os.killpg(proc.pid, signal.SIGKILL)
                    break
                continue
            if sample is None and DONE_SCHEDULING in line:
                sample = Sample(time.perf_counter() - t0, proc_cpu_s(proc.pid))
                if scenario == "pending" and span:  # do not measure anything: stop here
                    sample.span_cpu_s = span
                    os.killpg(proc.pid, signal.SIGKILL)
                    break
            tail = (tail + [line])[-20:]
        proc.wait()
        if sample is None:
            sys.stdout.write("".join(tail))
            raise SystemExit(f"law run failed (exit code {proc.returncode}): {' '.join(cmd[:5])}")
        if scenario == "complete" and proc.returncode != 0:
            sys.stdout.write("".join(tail))
            raise SystemExit(f"law run exited with {proc.returncode}")
        sample.span_cpu_s = sample.span_cpu_s or span
        return sample
    finally:
        shutil.rmtree(store, ignore_errors=True)


def per_task(samples: dict[int, Sample], n: int) -> tuple[float, float, float]:
    """(wall, cpu, scheduling's own cpu) per task at ``n``: ``(X(n) - X(1)) / (n - 1)``."""
    base, s = samples[1], samples[n]
    return ((s.wall_s - base.wall_s) / (n - 1), (s.cpu_s - base.cpu_s) / (n - 1),
            (s.span_cpu_s - base.span_cpu_s) / (n - 1))


def reduce(samples: list[Sample], how) -> Sample:
    """One sample of ``samples``' figures reduced by ``how`` (min or median), each apart."""
    return Sample(how(s.wall_s for s in samples), how(s.cpu_s for s in samples),
                  how(s.span_cpu_s for s in samples))


def in_process_child(sizes: list[int], scenario: str, rounds: int) -> None:
    """Runs in a child process (``--in-process``; the code of ``$PYTHONPATH``): luigi's
    ``Worker.add`` of ``MeasureRuntime`` with 1 and each of ``sizes`` branches, in rounds that
    run every size back to back, each time with fresh task instances and nothing remembered of
    the branch files (so every branch is built, checked and registered again, as in a new
    ``law run``). Prints one line ``MLP-INPROC <n> <cpu seconds>`` per measurement."""
    import gc

    import luigi.scheduler
    import luigi.worker
    from luigi.task_register import Register

    from mlprof.measure import results
    from mlprof.tasks.framework.hooks import install_build_hooks
    from mlprof.tasks.runtime import MeasureRuntime

    install_build_hooks()  # what law run and the mlprof command apply (mlprof's patches)
    store = os.environ["MLP_STORE"]
    all_sizes = [1, *sizes]
    if scenario == "complete":
        for n in all_sizes:
            fake_outputs(store, f"inproc-{n}", n)

    def forget() -> None:
        """What a new law run would not know: the task instances, the files checked."""
        Register.clear_instance_cache()
        for name in ("_CHECKED", "_CONTENT"):
            table = getattr(results, name, None)
            if table is not None:
                table.clear()
        if hasattr(results, "_CONTENT_SAMPLES"):
            results._CONTENT_SAMPLES = 0

    # each round brackets the largest size by the others, in order and back (1, 100, 1000,
    # 100, 1): a drift of the machine's speed during the round cancels to first order
    order = all_sizes + all_sizes[-2::-1]
    for r in range(rounds + 1):  # round 0 warms up (imports, first reads): not reported
        for n in order:
            forget()
            gc.collect()
            worker = luigi.worker.Worker(scheduler=luigi.scheduler.Scheduler(), worker_id=f"b{n}")
            t0 = time.process_time()
            task = MeasureRuntime(version=f"inproc-{n}", batch_sizes=tuple(range(1, n + 1)),
                                  n_calls=10, warmup=1, min_duration=0.0)
            worker.add(task)
            if r:
                print(f"MLP-INPROC {r} {n} {time.process_time() - t0:.6f}", flush=True)
            worker._scheduler = None  # no keep-alive thread was started: nothing to stop


def in_process(sizes: list[int], scenario: str, rounds: int, code: str | None) -> dict:
    """``{n: [cpu seconds per round]}`` from :func:`in_process_child` in a fresh process (the
    mean of a round's measurements of a size)."""
    store = tempfile.mkdtemp(prefix="mlp-sched-inproc-")
    try:
        env = dict(os.environ, MLP_STORE=store)
        env.pop("MLP_NO_SCALE_PATCH", None)
        root = code or REPO
        env.update(MLP_BASE=root, LAW_HOME=os.path.join(root, ".law"),
                   LAW_CONFIG_FILE=os.path.join(root, "law.cfg"),
                   PYTHONPATH=os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])]))
        script = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
                  f"import scheduling; scheduling.in_process_child({sizes!r}, {scenario!r}, "
                  f"{rounds!r})")
        out = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, text=True,
                             capture_output=True)
        if out.returncode != 0:
            sys.stdout.write(out.stdout[-2000:] + out.stderr[-4000:])
            raise SystemExit(f"in-process measurement failed (exit code {out.returncode})")
        per_round: dict[tuple[int, int], list[float]] = {}
        for line in out.stdout.splitlines():
            if line.startswith("MLP-INPROC "):
                r, n, t = line.split()[1:]
                per_round.setdefault((int(n), int(r)), []).append(float(t))
        cpu: dict[int, list[float]] = {}
        for (n, _), times in sorted(per_round.items()):
            cpu.setdefault(n, []).append(statistics.fmean(times))
        return cpu
    finally:
        shutil.rmtree(store, ignore_errors=True)


def report_in_process(sizes: list[int], scenarios: list[str], rounds: int,
                      before: str | None) -> None:
    """Print the in-process per-task CPU and its ratio, per scenario and code."""
    order = [1, *sizes] + [1, *sizes][-2::-1]
    print(f"\nin-process (luigi's Worker.add in one process per scenario and code, {rounds} "
          f"rounds of N={','.join(map(str, order))} back to back):", flush=True)
    for scenario in scenarios:
        for mode, code in ([("before", before)] if before else []) + [("patched", None)]:
            cpu = in_process(sizes, scenario, rounds, code)
            per = {n: [(cpu[n][r] - cpu[1][r]) / (n - 1) for r in range(rounds)] for n in sizes}
            ratios = [per[sizes[-1]][r] / per[sizes[0]][r] for r in range(rounds)]
            least = {n: (min(cpu[n]) - min(cpu[1])) / (n - 1) for n in sizes}
            print(f"in-process {scenario:8s} {mode:9s}: per task "
                  + ", ".join(f"N={n} {1e3 * statistics.median(per[n]):.3f} ms (least "
                              f"{1e3 * least[n]:.3f})" for n in sizes)
                  + f"; ratio N={sizes[-1]}/N={sizes[0]}: median of rounds "
                  f"{statistics.median(ratios):.3f} (quartiles "
                  f"{' '.join(f'{q:.3f}' for q in statistics.quantiles(ratios, n=4)[::2])}), "
                  f"least {least[sizes[-1]] / least[sizes[0]]:.3f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print per-task overheads and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="numbers of branches (default "
                        "100,1000); the ratio is largest over smallest")
    parser.add_argument("--scenarios", default="pending,complete")
    parser.add_argument("--modes", default="patched,unpatched")
    parser.add_argument("--repeats", type=int, default=1, help="rounds (default 1); each "
                        "round runs every size of a configuration back to back; 0: only the "
                        "in-process measurement")
    parser.add_argument("--in-process", type=int, default=0, metavar="ROUNDS",
                        help="also measure luigi's Worker.add in one process per scenario and "
                        "code, ROUNDS rounds of every size back to back (default 0: not)")
    parser.add_argument("--before", metavar="DIR", help="another checkout of mlprof (e.g. "
                        "`git worktree add DIR <commit>`, then `law index` there): adds the mode "
                        "'before', that code with its patches, to the rounds")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if len(sizes) < 2 or sizes[0] < 2:
        parser.error("give at least two sizes >= 2")

    import law

    print(f"law {law.__version__}; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    modes = args.modes.split(",")
    if args.before:
        args.before = os.path.abspath(args.before)
        if not os.path.isfile(os.path.join(args.before, ".law", "index")):
            parser.error(f"--before {args.before}: no .law/index there (run `law index` in it "
                         "with LAW_HOME and LAW_CONFIG_FILE pointing there)")
        modes = ["before", *(m for m in modes if m != "before")]
    configs = [(scenario, mode) for scenario in args.scenarios.split(",") for mode in modes]
    runs: dict[tuple[str, str], list[dict[int, Sample]]] = {c: [] for c in configs}
    for r in range(args.repeats):
        # one round: every size of one configuration back to back (1, then smallest to
        # largest), so that a change of the machine's load between rounds moves all sizes of
        # a round alike and the per-round ratio keeps its meaning
        for scenario, mode in configs:
            rnd = {n: schedule_once(n, scenario, mode != "unpatched",
                                    args.before if mode == "before" else None)
                   for n in [1, *sizes]}
            runs[(scenario, mode)].append(rnd)
            lo, hi = per_task(rnd, sizes[0]), per_task(rnd, sizes[-1])
            print(f"round {r + 1}/{args.repeats} {scenario:8s} {mode:9s}: scheduling's own cpu "
                  f"per task {1e3 * lo[2]:.2f} ms at N={sizes[0]}, {1e3 * hi[2]:.2f} ms at "
                  f"N={sizes[-1]} (ratio {hi[2] / lo[2]:.2f}); span at N=1 "
                  f"{1e3 * rnd[1].span_cpu_s:.1f} ms", flush=True)
    print()
    results: dict[tuple[str, str], dict[str, float]] = {}
    for scenario, mode in configs if args.repeats else []:
        rounds = runs[(scenario, mode)]
        # the least CPU time of each size over the rounds: other processes on the machine
        # (caches, memory bandwidth, a shared core) only ever add CPU time to a run
        best = {n: reduce([rnd[n] for rnd in rounds], min) for n in [1, *sizes]}
        med = {n: reduce([rnd[n] for rnd in rounds], statistics.median) for n in [1, *sizes]}
        print(f"{scenario:8s} {mode:9s} N=1: wall {med[1].wall_s:7.2f} s, cpu "
              f"{med[1].cpu_s:7.2f} s (start-up baseline, median of {len(rounds)})", flush=True)
        for n in sizes:
            wall, cpu, span = per_task(med, n)
            print(f"{scenario:8s} {mode:9s} N={n}: wall {med[n].wall_s:7.2f} s, cpu "
                  f"{med[n].cpu_s:7.2f} s; per task (medians): wall {1e3 * wall:6.2f} ms, cpu "
                  f"{1e3 * cpu:6.2f} ms; scheduling's own cpu {1e3 * span:6.2f} ms "
                  f"(least: {1e3 * per_task(best, n)[2]:6.2f} ms)", flush=True)
        lo, hi = per_task(med, sizes[0]), per_task(med, sizes[-1])
        blo, bhi = per_task(best, sizes[0]), per_task(best, sizes[-1])
        round_ratios = [per_task(rnd, sizes[-1])[2] / per_task(rnd, sizes[0])[2]
                        for rnd in rounds]
        results[(scenario, mode)] = {
            "least": bhi[2] / blo[2], "rounds": statistics.median(round_ratios),
            "spread": max(round_ratios) - min(round_ratios),
            "cpu": hi[1] / lo[1], "wall": hi[0] / lo[0], "per_task_ms": 1e3 * max(bhi[2], blo[2])}
        print(f"{scenario:8s} {mode:9s} ratio per task N={sizes[-1]} / N={sizes[0]}: "
              f"scheduling's own cpu {bhi[2] / blo[2]:.2f} (least of each size), "
              f"{statistics.median(round_ratios):.2f} (median of the rounds' ratios: "
              f"{', '.join(f'{x:.2f}' for x in round_ratios)}); end-to-end cpu "
              f"{hi[1] / lo[1]:.2f}, wall {hi[0] / lo[0]:.2f}; scheduling's own cpu per task "
              f"grew by {1e3 * (bhi[2] - blo[2]):.3f} ms", flush=True)
    print()
    for (scenario, mode), res in results.items():
        print(f"ratio {scenario} {mode}: scheduling's own cpu {res['least']:.2f} (least of "
              f"{args.repeats}), {res['rounds']:.2f} (median of rounds, spread "
              f"{res['spread']:.2f}); at most {res['per_task_ms']:.2f} ms per task; end-to-end "
              f"cpu {res['cpu']:.2f} (wall {res['wall']:.2f}); target <= 1.05 and <= 3 ms of "
              "CPU per task")
    if args.in_process:
        report_in_process(sizes, args.scenarios.split(","), args.in_process, args.before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
