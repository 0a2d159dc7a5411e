"""The file names of each task family's outputs and failure records, and their tags (batch
sizes, load points, generation points), built and parsed back (:mod:`mlprof.results.layout`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from mlprof.results.layout.segments import (
    interleave_tag,
    path_safe,
    safe_name,
)
from mlprof.results.layout.store import (
    LAYOUTS,
)
from mlprof.util import short_hash

# --- file names ---------------------------------------------------------------------------------

#: the file next to a task's outputs that records why it failed (never an output itself)
FAILURE_FILE = "_failure.json"

_BRANCH_FILE = re.compile(r"runtime_bs_(\d+)\.(csv|json)")
_BRANCH_FAILURE = re.compile(r"_failure_bs_(-?\w+)\.json")
_LOAD_FAILURE = re.compile(r"_failure_((?:streams|server)_[\w.-]+)\.json")
_GENERATION_FAILURE = re.compile(r"_failure_generation_(p\d+_bs\d+)\.json")


def branch_files(batch_size: int) -> dict[str, str]:
    """MeasureRuntime's files of one batch size: raw samples and provenance."""
    stem = f"runtime_bs_{int(batch_size)}"
    return {"csv": f"{stem}.csv", "json": f"{stem}.json"}


#: glob patterns of MeasureRuntime's provenance files and failure records
BRANCH_JSON_GLOB = "runtime_bs_*.json"
BRANCH_FAILURE_GLOB = "_failure_bs_*.json"


def branch_failure_file(batch_size: int) -> str:
    """The failure record of one MeasureRuntime branch (the branches share a directory)."""
    return f"_failure_bs_{int(batch_size)}.json"


def parse_branch_file(name: str) -> tuple[int, str] | None:
    """``runtime_bs_8.csv`` -> ``(8, "csv")``; None for another name."""
    m = _BRANCH_FILE.fullmatch(os.path.basename(name))
    return (int(m.group(1)), m.group(2)) if m else None


def parse_branch_failure(name: str) -> int | None:
    """``_failure_bs_8.json`` -> 8; None for another name or a batch size that is no number."""
    m = _BRANCH_FAILURE.fullmatch(os.path.basename(name))
    if not m:
        return None
    try:
        return int(m.group(1))
    except ValueError:
        return None


def batch_sizes_tag(sizes: Sequence[int]) -> str:
    """``bs_1_2_4``, or ``bs_1-1024_n11_<hash>`` for more than six batch sizes."""
    sizes = tuple(int(b) for b in sizes)
    if len(sizes) <= 6:
        return "bs_" + "_".join(map(str, sizes))
    return f"bs_{sizes[0]}-{sizes[-1]}_n{len(sizes)}_{short_hash(*sizes, length=6)}"


def merged_files(bs_tag: str) -> dict[str, str]:
    """MergeRuntimes' files: all raw samples, statistics per batch size, provenance."""
    return {"raw": f"runtimes_{bs_tag}.csv", "stats": f"stats_{bs_tag}.csv",
            "provenance": f"provenance_{bs_tag}.json"}


def interleaved_files(bs_tag: str, rounds: int) -> dict[str, str]:
    """CompareInterleaved's files: the speed-up table, every round's medians, provenance."""
    tag = f"{bs_tag}_{interleave_tag(rounds)}"
    return {"table": f"speedup_{tag}.csv", "rounds": f"rounds_{tag}.csv",
            "provenance": f"provenance_{tag}.json"}


def precision_files(bs_tag: str, rounds: int, budget: int = 0) -> dict[str, str]:
    """ComparePrecisions' files: the table as CSV and as text (the profiles' time budget in
    the name: the reasons come from profiles it may cut short)."""
    stem = f"precisions_{bs_tag}_{interleave_tag(rounds)}_{budget_tag(budget)}"
    return {"csv": f"{stem}.csv", "text": f"{stem}.txt"}


def budget_tag(seconds: int) -> str:
    """``budget60s``: a profile's time budget per batch size; ``nobudget``: none (0)."""
    return f"budget{int(seconds)}s" if int(seconds) > 0 else "nobudget"


def profile_files(batch_size: int, budget: int = 0) -> dict[str, str]:
    """ProfileRuntime's files of one batch size: time per operator type, provenance (the
    time budget in the name: it may cut the profiled calls short)."""
    stem = f"profile_bs_{int(batch_size)}_{budget_tag(budget)}"
    return {"csv": f"{stem}.csv", "json": f"{stem}.json"}


def profile_plot_files(bs_tag: str, top: int, budget: int = 0) -> dict[str, str]:
    """PlotProfile's files besides the plots: the ``plot`` stem (the plot options' tag and the
    file type follow), the top operators as ``csv`` and as a ``text`` table."""
    stem = f"profile_{bs_tag}_top{int(top)}_{budget_tag(budget)}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


def _num_tag(value: float) -> str:
    """``2.5`` -> ``2p5``, ``1000.0`` -> ``1000``: a number in a file name, exact: two numbers
    have two tags. Six significant digits (``:g``) where they hold the number exactly (every
    tag of a store written before stays), else the shortest text that reads back as it
    (``repr``): ``200.00001`` -> ``200p00001`` (``:g`` made it ``200``, and the rates 200.00001
    and 200.00002 one point, measured once and shown twice)."""
    v = float(value)
    text = f"{v:g}"
    if float(text) != v:
        text = repr(v)
    return text.replace(".", "p").replace("+", "")


def load_point_tag(scenario: str, streams: int, batch_size: int, sessions: str, *,
                   max_batch: int = 1, max_wait_ms: float = 0.0, rate: float | None = None,
                   latency_bound_ms: float | None = None, percentile: float = 99.0) -> str:
    """One MeasureLoad branch's part of its file names: ``streams_s2_bs1_each``, or
    ``server_w1_bs1_each_mb8_mw2`` followed by ``_r5000`` (a rate) and/or ``_p99le1ms`` (the
    percentile and bound its verdicts are judged by; without a rate: the search for the
    highest rate that meets it)."""
    tag = f"{scenario}_{'s' if scenario == 'streams' else 'w'}{int(streams)}_bs{int(batch_size)}"
    tag += f"_{sessions}"
    if scenario == "server":
        tag += f"_mb{int(max_batch)}_mw{_num_tag(max_wait_ms)}"
        if rate is not None:
            tag += f"_r{_num_tag(rate)}"
        if latency_bound_ms is not None:
            tag += f"_p{_num_tag(percentile)}le{_num_tag(latency_bound_ms)}ms"
    return tag


def load_files(tag: str) -> dict[str, str]:
    """MeasureLoad's files of one branch: every timed call or served request (``csv``), and
    the record with each point's summary and the provenance (``json``)."""
    return {"csv": f"load_{tag}.csv", "json": f"load_{tag}.json"}


def load_failure_file(tag: str) -> str:
    """The failure record of one MeasureLoad branch (the branches share a directory, so each
    load point has its own: a point that succeeds must not drop another's record)."""
    return f"_failure_{tag}.json"


def parse_generation_failure(name: str) -> str | None:
    """``_failure_generation_p16_bs1.json`` -> ``p16_bs1``; None for another name."""
    m = _GENERATION_FAILURE.fullmatch(os.path.basename(name))
    return m.group(1) if m else None


def parse_load_failure(name: str) -> str | None:
    """``_failure_streams_s2_bs1_each.json`` -> ``streams_s2_bs1_each``; None for another
    name."""
    m = _LOAD_FAILURE.fullmatch(os.path.basename(name))
    return m.group(1) if m else None


def load_set_tag(tags: Sequence[str]) -> str:
    """PlotLoad: the branches it shows, as one file-name part (the tag itself for one, a
    hash of them for more)."""
    tags = list(tags)
    if len(tags) == 1:
        return tags[0]
    return f"{tags[0].split('_')[0]}_n{len(tags)}_{short_hash(*tags, length=8)}"


def load_plot_files(set_tag: str) -> dict[str, str]:
    """PlotLoad's files besides the plots: the ``plot`` stem, the points as ``csv`` and the
    table with the answer as ``text``."""
    stem = f"load_{set_tag}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


def generation_point_tag(prompt_length: int, batch_size: int) -> str:
    """One MeasureGeneration branch's part of its file names: ``p128_bs4``."""
    return f"p{int(prompt_length)}_bs{int(batch_size)}"


def generation_files(tag: str) -> dict[str, str]:
    """MeasureGeneration's files of one point: every timed call's per-token times (``csv``)
    and the record (``json``: provenance, each runtime's metrics and agreement, speed-ups)."""
    return {"csv": f"generation_{tag}.csv", "json": f"generation_{tag}.json"}


def generation_failure_file(tag: str) -> str:
    """The failure record of one MeasureGeneration point (the points share a directory)."""
    return f"_failure_generation_{tag}.json"


def generation_set_tag(prompt_lengths: Sequence[int], batch_sizes: Sequence[int]) -> str:
    """PlotGeneration: its points as one file-name part, ``p16-128_bs1-4`` (hashed when
    long)."""
    tag = (f"p{'-'.join(str(int(p)) for p in prompt_lengths)}"
           f"_bs{'-'.join(str(int(b)) for b in batch_sizes)}")
    if len(tag) <= 60:
        return tag
    return (f"p{len(prompt_lengths)}x_bs{len(batch_sizes)}x_"
            f"{short_hash(*prompt_lengths, '/', *batch_sizes, length=8)}")


def generation_plot_files(set_tag: str) -> dict[str, str]:
    """PlotGeneration's files besides the plots: the ``plot`` stem, the table as ``csv`` and
    as ``text``."""
    stem = f"generation_{set_tag}"
    return {"plot": stem, "csv": f"{stem}.csv", "text": f"{stem}.txt"}


#: MeasurePeak's record (mlprof.measure.peak)
PEAK_FILE = "peak.json"
#: MeasurePeak's version directory: the GEMM benchmark's revision, never ``--version`` (a peak
#: belongs to the host, runtime version and threads; raise it when the benchmark changes)
PEAK_REVISION = "gemm1"


#: CalibrateNoise's record (mlprof.measure.noise)
NOISE_FILE = "noise.json"
#: CalibrateNoise's version directory: the calibration's revision, never ``--version`` (a floor
#: belongs to the host's fingerprint; raise it when the calibration changes)
NOISE_REVISION = "aa1"


def fingerprint_segment(fingerprint_id: str) -> str:
    """CalibrateNoise: ``fp-<12 hex digits>`` (:func:`mlprof.sysinfo.fingerprint_id`)."""
    return "fp-" + safe_name(fingerprint_id, 32)


def host_segment(host: str) -> str:
    """MeasurePeak: the host the peak was measured on (a peak belongs to one machine)."""
    return safe_name(host, 64)


def peak_settings_segment(threads: int) -> str:
    """MeasurePeak's settings: ``threads<N>`` (the benchmark itself is fixed by the code)."""
    return f"threads{int(threads)}"


def model_page(model: str, model_hash: str | None) -> str:
    """The dashboard's page of one model, relative to the site: its model segment
    (:func:`model_segment`, so the page and the store's directories name a model alike; the
    hash is never cut), or the name alone for a result without a hash."""
    if model_hash:
        return f"models/{safe_name(model, 48)}__{model_hash}.html"
    return f"models/{safe_name(model, 64)}.html"


# --- segments of the report and nightly tasks -----------------------------------------------------


def stores_segment(stores: Sequence[str]) -> str:
    """Report, PlotHistory and Dashboard: ``stores_<hash8>`` of the stores they read."""
    return "stores_" + short_hash(*stores)


def dashboard_settings_segment(statistic: str, reference_runtime: str,
                               extras: Sequence[str] = ()) -> str:
    """``<statistic>_ref-<runtime>``, plus a hash of the other options when any is given."""
    tag = f"{statistic}_ref-{reference_runtime}"
    if any(extras):
        tag += "_" + short_hash(*extras, length=8)
    return tag


def experiment_segment(experiment_file: str, content_hash: str) -> str:
    """RunExperiment: ``<file stem>__<hash8 of the file's content>``."""
    stem = os.path.splitext(os.path.basename(experiment_file))[0]
    return f"{path_safe(stem, 48)}__{content_hash[:8]}"


def experiments_dir_segment(directory: str) -> str:
    """ConfirmResults and Nightly: ``<directory name>__<hash8 of its path>``."""
    return f"{path_safe(os.path.basename(directory), 32)}__{short_hash(directory)}"


_MERGED_FILE = re.compile(r"(runtimes|stats|provenance)_(bs_[0-9A-Za-z_-]+)\.(csv|json)")


def parse_merged_file(name: str) -> tuple[str, str] | None:
    """``stats_bs_1_2.csv`` -> ``("stats", "bs_1_2")`` (keys of :func:`merged_files`); None for
    another name."""
    m = _MERGED_FILE.fullmatch(os.path.basename(name))
    if not m:
        return None
    kind = {"runtimes": "raw"}.get(m.group(1), m.group(1))
    return (kind, m.group(2)) if merged_files(m.group(2))[kind] == os.path.basename(name) \
        else None


def versions_in(store: str, task: str = "MeasureRuntime") -> set[str]:
    """The version directories of ``task`` in ``store`` (names only)."""
    depth = len(LAYOUTS.get(task, ()))
    level = [os.path.join(store, task)]
    for _ in range(depth):
        level = [e.path for d in level if os.path.isdir(d) for e in os.scandir(d)
                 if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    return {e.name for d in level if os.path.isdir(d) for e in os.scandir(d)
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")}
