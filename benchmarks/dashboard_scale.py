"""Dashboard at the corpus scale: how long the build takes and how fast its index loads.

Issue 15's target: a dashboard over 40 models x 3 runtimes x 11 batch sizes x 10 nights builds
in under a minute and its index loads in Chromium in under 2 s.

The script writes a synthetic store in the project's real formats (``MeasureRuntime``'s
``runtime_bs_<N>.csv`` and ``runtime_bs_<N>.json`` under :mod:`mlprof.results.layout`'s
paths, failure records as the tasks write them; every branch passes
:func:`mlprof.measure.results.read_branch`),
one version per night (``nightly-2026-11-01``, ...), then runs what a user runs::

    law run Dashboard --version <night> --current <night> --publish

for the last two nights (the first build, then the next night's, which also updates the fixed
entry point ``$MLP_STORE/dashboard/``), timing each as a subprocess (wall time, as a shell sees
it), and opens the entry point, the night's front page and one model page in Chromium
(Playwright, Debian's ``chromium``), timing each until its ``load`` event. It prints::

    build nightly-2026-11-09: 20.8 s (target < 60 s)  dashboard: 1320 result(s), ...
    build nightly-2026-11-10: 18.7 s (target < 60 s)  dashboard: 1320 result(s), ...
    load dashboard/index.html: 0.07 s (47 elements)
    load dashboard/nightly-2026-11-10/index.html: 0.70 s (22024 elements)
    load dashboard/nightly-2026-11-10/models/synth_m00__d141eb06.html: 0.12 s (2344 elements)
    ratio load/2s: 0.35
    site size: 19.8 MB (8 PNG)
    ratio build/60s: 0.35

(measured so on the shared 2-core VM at load average 6: other sessions were running).

The synthetic data: per model a base latency, per runtime a factor, latency per batch
``base * bs**0.8`` with 3 % log-normal noise between calls and 2 % between nights; a handful
of series step up by 60 % (regressions) or down (improvements) in the last two nights, one
model's ``openvino`` fails at its two largest batch sizes every night (one message), some
points are unstable (a few calls 30x slower) or measured while the machine was contended, and
one branch is damaged (a truncated CSV). ``--samples`` calls per branch (default 100; a real
0.5 s measurement of a fast model has thousands, which costs the report's reading, not the
dashboard).

Usage (after ``source setup.sh``; a benchmark, not a test: it prints figures and exits 0 unless
``law run`` fails)::

    python benchmarks/dashboard_scale.py [--models 40] [--nights 10] [--samples 100]
        [--store DIR] [--keep] [--no-browser]

:func:`write_store` is also what ``tests/test_dashboard_html.py`` builds its multi-night store
with (small sizes).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mlprof.results import layout  # noqa: E402
from mlprof.util import short_hash  # noqa: E402

#: the runtimes of the synthetic store, their versions and how fast each is relative to ORT
RUNTIMES = (("onnxruntime", "1.32.0", 1.0), ("torch", "2.14.1", 1.6),
            ("openvino", "2026.4.1", 0.8))
BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: the message of the failures that repeat every night (grouped on the dashboard)
FAILURE_MESSAGE = ("MeasureRuntime failed: openvino: the compiled model needs 2.1 GiB at this "
                   "batch size, more than the 2.0 GiB allowed (oom)")


@dataclasses.dataclass
class Scenario:
    """What the synthetic store holds. Series are (model index, runtime, batch size)."""

    models: int = 40
    nights: int = 10
    batch_sizes: Sequence[int] = BATCH_SIZES
    runtimes: Sequence[tuple[str, str, float]] = RUNTIMES
    samples: int = 100
    seed: int = 0
    first_night: datetime.date = datetime.date(2026, 11, 1)
    #: relative step of the regressed series in the last ``step_nights`` nights
    step: float = 0.6
    step_nights: int = 2
    #: how many series step up (regressions) and down (improvements)
    regressions: int = 6
    improvements: int = 2
    #: the model (index) whose last runtime fails at its two largest batch sizes every night
    failing_model: int = 1
    #: (model index, runtime, batch size) measured unstable / contended in the last night
    unstable: int = 4
    contended: int = 3
    #: one damaged branch in the last night
    corrupt: bool = True
    #: model index measured like a model script: ONNX Runtime on its export (the settings carry
    #: ``__onnx-op18-fp32``), the other runtimes on the script itself
    script_model: int | None = 2
    #: the last night's results measured again under ``<night>.confirm`` (as Nightly does for
    #: the series beyond the alert thresholds)
    confirm: bool = True

    def night(self, i: int) -> str:
        """The version of night ``i`` (0-based): ``nightly-YYYY-MM-DD``."""
        return f"nightly-{(self.first_night + datetime.timedelta(days=i)).isoformat()}"

    @property
    def versions(self) -> list[str]:
        return [self.night(i) for i in range(self.nights)]


def model_name(i: int) -> str:
    return f"synth_m{i:02d}"


def model_label(i: int) -> str:
    return f"Synthetic DNN {i:02d} ({4 + i % 7}x{64 * (1 + i % 4)})"


def model_hash(i: int) -> str:
    return short_hash("synthetic model", i)


MEASURE = layout.MeasureKey(n_calls=100, n_events=1, warmup=10, min_duration=0.0, threads=1,
                            input="random")
EXPORT = layout.ExportKey(opset=18)


def _settings_segment(i: int, runtime: str, sc: Scenario) -> str:
    export = EXPORT if (i == sc.script_model and runtime == "onnxruntime") else None
    return layout.measure_settings_segment(MEASURE, export)


def _model_file(i: int, sc: Scenario) -> str:
    if i == sc.script_model:
        return f"/synthetic/models/selftest/{model_name(i)}.py"
    return f"/synthetic/models/{model_name(i)}.yaml"


def provenance(i: int, runtime: str, runtime_version: str, bs: int, version: str,
               timestamp: str, n_samples: int, sc: Scenario, *, contended: bool = False) -> dict:
    """A branch's provenance as the harness writes it (the fields the report reads)."""
    script = i == sc.script_model
    name = model_name(i)
    prov = {
        "mlprof_version": "0.1.0", "git_commit": "0123456789abcdef0123456789abcdef01234567",
        "timestamp": timestamp, "host": "bench-host", "platform": "Linux-x86_64",
        "python": "3.11.7", "cpu_model": "Synthetic CPU @ 3.0GHz", "cpu_count": 2,
        "runtime": runtime, "runtime_version": runtime_version, "device": "cpu", "threads": 1,
        "model": {"name": name, "label": name if script else model_label(i), "version": "1.0.0",
                  "spec_file": _model_file(i, sc), "file": _model_file(i, sc),
                  "content_hash": model_hash(i) * 8},
        "settings": {"batch_size": bs, "runtime": runtime, "device": "cpu", "threads": 1,
                     "n_calls": MEASURE.n_calls, "n_events": 1, "warmup": MEASURE.warmup,
                     "min_duration": MEASURE.min_duration, "input_data": "random", "seed": 0,
                     "tfaot_batch_rules": ""},
        "session_creation_ms": 4.1, "first_call_ms": 0.4, "warmup_ms": 0.06,
        "n_samples": n_samples, "rounds": 1, "loop_wall_s": 0.01,
        "environment": {"window_s": 0.2, "cpus": 2, "other_cpu_cores": 1.2 if contended else 0.0,
                        "own_cpu_cores": 1.0, "steal_share": 0.0, "loadavg": [1.0, 1.0, 1.0],
                        "cpu_mhz": None, "contended": contended,
                        "contended_threshold_cores": 0.5},
        "peak_rss_mb": 80.0, "lock_wait_s": 0.0, "batch_job": None,
        "task": {"family": "MeasureRuntime", "version": version, "model_name": name,
                 "model_file": _model_file(i, sc), "params": {}},
    }
    if script and runtime == "onnxruntime":
        prov["export"] = {"opset": 18, "precision": "fp32"}
    return prov


def _csv_text(bs: int, samples: np.ndarray) -> str:
    lines = [f"{bs},0,{k},{v:.6f}" for k, v in enumerate(samples)]
    return "batch_size,event,call,runtime_ms\n" + "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_store(store: str | os.PathLike, sc: Scenario | None = None) -> dict:
    """Write the synthetic store; returns what was injected: ``versions``, ``regressions``
    and ``improvements`` (``(model, runtime, batch size)``), ``unstable``, ``contended``,
    ``failures`` (count of failure records), ``corrupt`` (the damaged file) and ``branches``."""
    sc = sc or Scenario()
    store = Path(store)
    rng = np.random.default_rng(sc.seed)
    series = [(i, rt, bs) for i in range(sc.models) for rt, _, _ in sc.runtimes
              for bs in sc.batch_sizes]
    failing = {(sc.failing_model % sc.models, sc.runtimes[-1][0], bs)
               for bs in sorted(sc.batch_sizes)[-2:]} if sc.models > 1 else set()
    candidates = [s for s in series if s not in failing and s[0] != sc.script_model]
    picks = rng.choice(len(candidates), size=sc.regressions + sc.improvements + sc.unstable
                       + sc.contended + 1, replace=False)
    chosen = [candidates[int(k)] for k in picks]
    regress = chosen[:sc.regressions]
    improve = chosen[sc.regressions:sc.regressions + sc.improvements]
    rest = chosen[sc.regressions + sc.improvements:]
    unstable, contended = rest[:sc.unstable], rest[sc.unstable:sc.unstable + sc.contended]
    corrupt_series = rest[-1]
    base = {i: 0.01 * (1 + i % 7) * (1 + i % 4) for i in range(sc.models)}
    night_noise = rng.normal(0.0, 0.02, size=(sc.nights, len(series)))
    out = {"versions": sc.versions, "regressions": regress, "improvements": improve,
           "unstable": unstable, "contended": contended, "failures": 0, "corrupt": None,
           "branches": 0, "failing": sorted(failing)}
    last = sc.nights - 1
    nights = [(n, sc.night(n)) for n in range(sc.nights)]
    if sc.confirm:
        nights.append((last, sc.night(last) + ".confirm"))
    for n, version in nights:
        day = sc.first_night + datetime.timedelta(days=n)
        confirm = version.endswith(".confirm")
        for k, (i, rt, bs) in enumerate(series):
            if confirm and (i, rt, bs) not in regress + improve:
                continue  # Nightly measures again only what would alert
            runtime, rt_version, factor = next(r for r in sc.runtimes if r[0] == rt)
            directory = Path(layout.result_dir("MeasureRuntime", version, {
                "model": layout.model_segment(model_name(i), model_hash(i)),
                "runtime": layout.runtime_segment([(runtime, rt_version)], "cpu"),
                "settings": _settings_segment(i, runtime, sc)}, store=str(store)))
            minute = (k // len(sc.batch_sizes)) % 60
            hour = 23 if confirm else 2 + (k // 600) % 20  # re-measured after the night
            ts = f"{day.isoformat()}T{hour:02d}:{minute:02d}:{k % 60:02d}+00:00"
            if (i, rt, bs) in failing:
                _write(directory / layout.branch_failure_file(bs), json.dumps({
                    "task": "MeasureRuntime", "status": "failed", "message": FAILURE_MESSAGE,
                    "model_file": _model_file(i, sc), "time": ts}))
                out["failures"] += 1
                continue
            level = base[i] * factor * bs ** 0.8 * np.exp(night_noise[n, k])
            if n > last - sc.step_nights:
                if (i, rt, bs) in regress:
                    level *= 1 + sc.step
                elif (i, rt, bs) in improve:
                    level /= 1 + sc.step
            samples = level * np.exp(rng.normal(0.0, 0.03, size=sc.samples))
            is_unstable = n == last and (i, rt, bs) in unstable
            if is_unstable:  # a few calls 30x slower: CV far beyond 10 %
                samples[:: max(2, sc.samples // 8)] *= 30
            files = layout.branch_files(bs)
            text = _csv_text(bs, samples)
            if sc.corrupt and n == last and not confirm and (i, rt, bs) == corrupt_series:
                text = text[: len(text) // 2]  # truncated: the report makes it a corrupt row
                out["corrupt"] = str(directory / files["csv"])
            _write(directory / files["csv"], text)
            prov = provenance(i, runtime, rt_version, bs, version, ts, len(samples), sc,
                              contended=n == last and (i, rt, bs) in contended)
            _write(directory / files["json"], json.dumps(prov))
            out["branches"] += 1
    return out


# -- the benchmark --------------------------------------------------------------------------


def law_dashboard(store: Path, night: str) -> tuple[float, str]:
    """``law run Dashboard --version NIGHT --current NIGHT[,NIGHT.confirm] --publish`` (as
    Nightly shows a night): wall time and output."""
    current = [night] + ([f"{night}.confirm"] if f"{night}.confirm" in
                         layout.versions_in(str(store)) else [])
    env = dict(os.environ, MLP_STORE=str(store))
    env.setdefault("MLP_BASE", str(REPO))
    env.setdefault("LAW_HOME", str(REPO / ".law"))
    env.setdefault("LAW_CONFIG_FILE", str(REPO / "law.cfg"))
    t0 = time.perf_counter()
    proc = subprocess.run(["law", "run", "Dashboard", "--version", night, "--current",
                           ",".join(current), "--publish"], cwd=REPO, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"law run Dashboard failed (exit {proc.returncode})")
    return wall, proc.stdout + proc.stderr


def load_times(pages: Sequence[Path]) -> list[tuple[Path, float, int]]:
    """Each page opened in a fresh Chromium tab: seconds until ``load`` and its DOM size."""
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or "/usr/bin/chromium"
    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"])
        warm = browser.new_page()  # the first page of a browser pays its start-up
        warm.goto("about:blank")
        warm.close()
        for path in pages:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            t0 = time.perf_counter()
            page.goto(path.as_uri(), wait_until="load")
            wall = time.perf_counter() - t0
            nodes = page.evaluate("document.getElementsByTagName('*').length")
            if errors:
                print(f"  script errors on {path.name}: {errors}")
            out.append((path, wall, nodes))
            page.close()
        browser.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=40)
    ap.add_argument("--nights", type=int, default=10)
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--store", help="write the store here (default: a fresh temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary store")
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium load times")
    args = ap.parse_args(argv)

    store = Path(args.store) if args.store else Path(tempfile.mkdtemp(prefix="mlp-dash-"))
    sc = Scenario(models=args.models, nights=args.nights, samples=args.samples)
    try:
        t0 = time.perf_counter()
        info = write_store(store, sc)
        print(f"store {store}: {args.models} models x {len(sc.runtimes)} runtimes x "
              f"{len(sc.batch_sizes)} batch sizes x {args.nights} nights: {info['branches']} "
              f"branches of {args.samples} samples, {info['failures']} failure records "
              f"(written in {time.perf_counter() - t0:.1f} s)")
        builds = []
        for night in sc.versions[-2:]:
            wall, out = law_dashboard(store, night)
            builds.append(wall)
            line = next((ln for ln in out.splitlines() if "dashboard:" in ln), "")
            print(f"build {night}: {wall:.1f} s (target < 60 s)  {line.strip()[:160]}")
        entry = store / "dashboard" / "index.html"
        night_index = store / "dashboard" / sc.versions[-1] / "index.html"
        model_page = sorted((night_index.parent / "models").glob("*.html"))[0]
        if not args.no_browser:
            times = load_times([entry, night_index, model_page])
            for path, wall, nodes in times:
                print(f"load {path.relative_to(store)}: {wall:.2f} s ({nodes} elements)")
            slowest = max(w for p, w, _ in times if p != model_page)
            print(f"ratio load/2s: {slowest / 2.0:.2f}")
        size = sum(f.stat().st_size for f in night_index.parent.rglob("*") if f.is_file())
        print(f"site size: {size / 1e6:.1f} MB "
              f"({sum(1 for _ in night_index.parent.rglob('*.png'))} PNG)")
        print(f"ratio build/60s: {max(builds) / 60.0:.2f}")
    finally:
        if not args.store and not args.keep:
            shutil.rmtree(store, ignore_errors=True)
        elif args.keep:
            print(f"kept {store}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
