"""What a noise-floor calibration costs against a default nightly run (issue 36: at most 10 %).

What is measured, ``--repeats`` times in turn, each into a fresh temporary store:

- ``night``: ``law run Nightly --version 2026-11-28 --calibrate-noise False`` with the
  repository's experiments/ (the default night, without the calibration);
- ``calibrate``: ``law run CalibrateNoise`` (the calibration alone: start-up included);
- ``night+calibrate``: the same Nightly calibrating first (what a night on a new fingerprint
  costs).

Each calibration's floors are printed too: what the cost buys.

For each: the wall time of the ``law`` process (not its CPU time: the measurements run in
children of mlprof's measurement server, which ``law`` never waits for, so
``RUSAGE_CHILDREN`` misses them). For the calibrations, the record's own ``duration_s`` (from
the child's start to its last round, without a wait for the measurement lock) is the
calibration's share of a night. Other processes slow both sides: alternating the three
commands gives each the same machine, on average. The ratio printed is the median calibration
over the median night. ``MLP_NO_LOCK=1`` unless ``--lock``: another checkout's measurements
would otherwise make the wall time a measure of the lock's queue.

    python benchmarks/calibration_cost.py [--repeats 3] [--lock]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(kind: str, store: str, env: dict[str, str]) -> dict:
    """One command of ``kind`` into ``store``: its wall time and the calibration's
    duration_s."""
    args = {"night": ["Nightly", "--version", "2026-11-28", "--calibrate-noise", "False"],
            "calibrate": ["CalibrateNoise"],
            "night+calibrate": ["Nightly", "--version", "2026-11-28"]}[kind]
    t0 = time.monotonic()
    proc = subprocess.run(["law", "run", *args], env={**env, "MLP_STORE": store},
                          capture_output=True, text=True)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"law run {' '.join(args)} failed ({proc.returncode})")
    records = glob.glob(os.path.join(store, "CalibrateNoise", "*", "*", "*", "noise.json"))
    record = json.load(open(records[0])) if records else {}
    return {"kind": kind, "wall_s": wall, "calibration_s": record.get("duration_s"),
            "classes": record.get("classes", []), "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lock", action="store_true", help="measure under the machine-wide "
                        "measurement lock (waits for other mlprof runs)")
    a = parser.parse_args(argv)
    env = dict(os.environ)
    if not a.lock:
        env["MLP_NO_LOCK"] = "1"
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlprof-calibration-cost-") as tmp:
        for i in range(a.repeats):
            for kind in ("night", "calibrate", "night+calibrate"):
                row = run(kind, os.path.join(tmp, f"{kind}{i}"), env)
                rows.append(row)
                cal = row["calibration_s"]
                print(f"{kind:16s} {i + 1}: wall {row['wall_s']:6.2f} s"
                      + (f"  calibration {cal:.2f} s" if cal is not None else "")
                      + f"  (load {row['load']:.1f})", flush=True)
                for c in row["classes"]:  # the floors measured, beside what they cost
                    print(f"    {c['call_ms']:.3g} ms x {c['threads']} thread(s): floor "
                          f"{100 * c['floor']:.1f} % [{100 * c['ci_low']:.1f}, "
                          f"{100 * c['ci_high']:.1f}], median |ratio - 1| "
                          f"{100 * c['median_abs']:.1f} %", flush=True)

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["kind"] == kind)

    cal = statistics.median(r["calibration_s"] for r in rows if r["calibration_s"] is not None)
    night_wall = med("night", "wall_s")
    print(f"median night: wall {night_wall:.2f} s")
    print(f"median calibration (duration_s, {2 * a.repeats} calibrations): {cal:.2f} s = "
          f"{100 * cal / night_wall:.1f} % of the night's wall time")
    print(f"law run CalibrateNoise alone: wall {med('calibrate', 'wall_s'):.2f} s = "
          f"{100 * med('calibrate', 'wall_s') / night_wall:.1f} % of the night's")
    print(f"night calibrating: wall {med('night+calibrate', 'wall_s'):.2f} s "
          "(target: calibration <= 10 % of a night)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
