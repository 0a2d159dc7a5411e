"""Start-up: how long does a no-op rerun of the quick start take, next to law's own floor?

The README's first command (``law run PlotRuntimes --version quickstart``) is run once into a
fresh temporary store; then, interleaved round by round, each checkout given (default: this
one) reruns it (everything complete: nothing measured) and law runs a trivial task (one
complete ``law.Task`` whose output exists: law, luigi, law.cfg, one scheduling pass; the floor
issue 38 compares with). Wall times of the whole ``law`` process as a user sees them, and its
CPU times (user + system: what to compare on a shared machine).

Usage (after ``source setup.sh``)::

    python benchmarks/startup.py [--rounds 5] [--before DIR]

``--before DIR``: another checkout of mlprof (``git archive <commit> | tar -x -C DIR``) run with
the same store and venv, interleaved with this one, for before/after figures in one run.
Bytecode: the runs write Python's bytecode caches (``__pycache__``, as a user's Python does on
the first run), also when the environment sets ``PYTHONDONTWRITEBYTECODE``; without them every
run compiles mlprof's ~60 modules from source (measured: CPU 1.31 of the floor's without, 0.97
with, same code); ``--no-bytecode`` keeps the environment's setting (to see that cost).
Prints per round and the medians: ``noop/floor`` per checkout (target <= 1.2; and <= 0.5 s
on a quiet machine). A benchmark, not a test: exits 0 unless a ``law run`` fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

FLOOR_TASK = '''
import os
import law
import luigi


class Trivial(law.Task):
    """Complete once its file exists: law's floor for a no-op ``law run``."""

    version = luigi.Parameter()

    def output(self):
        return law.LocalFileTarget(os.path.join(os.environ["MLP_STORE"], "floor", "done"))

    def run(self):
        self.output().touch()
'''


def env_for(checkout: Path, store: Path, extra_path: Path, bytecode: bool = True
            ) -> dict[str, str]:
    """The environment ``source setup.sh`` gives in ``checkout`` (its code, law.cfg and index).

    ``bytecode``: let Python write its bytecode caches, as it does for a user. A session that
    sets ``PYTHONDONTWRITEBYTECODE=1`` (no ``__pycache__`` in the checkout) otherwise makes
    every ``law run`` compile mlprof's ~60 modules from source: measured 0.1 s of CPU per run
    (no-op rerun 1.31 of the floor's CPU without caches, 0.97 with them, same code), a cost
    the floor (law and luigi, compiled in site-packages at install) does not pay."""
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(MLP_BASE=str(checkout), MLP_STORE=str(store), LAW_HOME=str(checkout / ".law"),
               LAW_CONFIG_FILE=str(checkout / "law.cfg"),
               PYTHONPATH=os.pathsep.join([str(checkout), str(extra_path)]))
    bins = [str(checkout / "bin")] if (checkout / "bin" / "law").exists() else []
    parts = [p for p in env.get("PATH", "").split(os.pathsep) if not p.endswith("/bin")
             or not (Path(p) / "law").exists() or p == str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join([*bins, str(Path(sys.executable).parent), *parts])
    return env


#: CPU seconds (user + system) of the last command :func:`timed` ran
_last_cpu = [0.0]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    """Wall seconds of ``cmd``; its CPU seconds go to ``_last_cpu`` (the figure to trust on a
    shared machine: other processes slow the wall time, not the CPU time)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=env["MLP_BASE"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    _last_cpu[0] = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--before", type=Path, help="another checkout, interleaved with this one")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE from the environment (default: unset it "
                         "for the runs, as a user's Python writes its bytecode caches)")
    args = ap.parse_args()
    checkouts = {"this": HERE}
    if args.before:
        checkouts = {"before": args.before.resolve(), "after": HERE}
    with tempfile.TemporaryDirectory(prefix="mlp-startup-") as tmp:
        store, extra = Path(tmp) / "store", Path(tmp) / "py"
        extra.mkdir()
        (extra / "mlp_floor.py").write_text(FLOOR_TASK)
        quick = ["law", "run", "PlotRuntimes", "--version", "quickstart"]
        floor = ["law", "run", "mlp_floor.Trivial", "--version", "v1"]
        envs = {name: env_for(path, store, extra, bytecode=not args.no_bytecode)
                for name, path in checkouts.items()}
        if "PYTHONDONTWRITEBYTECODE" in os.environ:
            print("PYTHONDONTWRITEBYTECODE: " + (
                "kept (runs without bytecode caches compile mlprof from source)"
                if args.no_bytecode else "unset for the runs (bytecode caches written as a "
                "user's Python writes them)"), flush=True)
        for name, env in envs.items():  # each checkout's index, then the quick start once
            subprocess.run(["law", "index", "-q"], env=env, cwd=env["MLP_BASE"], check=True)
            print(f"quick start ({name}; measures unless the store has it): "
                  f"{timed(quick, env):.2f} s", flush=True)
        first = next(iter(envs.values()))
        timed(floor, first)
        times: dict[str, list[float]] = {"floor": []}
        times.update({name: [] for name in envs})
        cpus: dict[str, list[float]] = {name: [] for name in times}
        for r in range(args.rounds):
            line = [f"round {r + 1}:"]
            order = ["floor", *envs] if r % 2 == 0 else [*reversed(envs), "floor"]
            for name in order:
                t = timed(floor, first) if name == "floor" else timed(quick, envs[name])
                times[name].append(t)
                cpus[name].append(_last_cpu[0])
                line.append(f"{name} {t:.3f}")
            print("  ".join(line), flush=True)
        med = {name: statistics.median(ts) for name, ts in times.items()}
        cpu = {name: statistics.median(ts) for name, ts in cpus.items()}
        print(f"median floor (law run of a trivial complete task): {med['floor']:.3f} s "
              f"(CPU {cpu['floor']:.3f} s)")
        for name in envs:
            print(f"median no-op rerun ({name}): {med[name]:.3f} s, "
                  f"noop/floor {med[name] / med['floor']:.2f} (target <= 1.2); CPU "
                  f"{cpu[name]:.3f} s, {cpu[name] / cpu['floor']:.2f} of the floor's")


if __name__ == "__main__":
    main()
