"""The texts of runtime plots: curve labels and corner labels (pure functions, no law)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@functools.lru_cache(maxsize=1024)
def plot_text(text: str) -> str:
    """User text as matplotlib should draw it: literally, unless it is valid mathtext.

    A label such as ``'$\\badcmd{x}$'`` would make matplotlib raise while drawing (one such
    model name broke every history plot); it is shown as typed instead.
    """
    import re

    text = str(text)
    dollars = text.count("$") - text.count("\\$")
    if dollars == 0 or dollars % 2:  # matplotlib shows an odd number of dollars as typed
        return text
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(text)
    except Exception:  # ValueError (a ParseFatalException) for invalid mathtext
        return re.sub(r"(?<!\\)\$", r"\\$", text)
    return text


@dataclass(frozen=True)
class CurveInfo:
    """What one curve of a runtime plot shows: a model on a runtime, at its measured version,
    on the machine it was measured on (``cpu_model`` and ``host`` as recorded; empty: unknown)."""

    model_label: str
    runtime: str
    versions: tuple[str, ...]  # the runtime versions the results were measured with
    cpu_model: str = ""
    host: str = ""
    #: the CPU's instruction-set extensions as recorded (``AVX2 FMA F16C``)
    isa: str = ""

    @property
    def version(self) -> str:
        """The measured version(s), ``/``-joined when a sweep mixed versions."""
        return "/".join(self.versions) or "unknown"

    @property
    def runtime_text(self) -> str:
        """``onnxruntime 1.32.0``: what a legend or corner says about the runtime."""
        return f"{self.runtime} {self.version}"


def curve_info(label: str, runtime: str, version: str, record: dict) -> CurveInfo:
    """The :class:`CurveInfo` of a result whose provenance ``record`` has the machine's facts
    (``cpu_model``, ``host``, as :func:`mlprof.sysinfo.system_info` writes them): what
    every plot's corner is made of (:func:`corner_label`), whichever task drew it."""
    return CurveInfo(label, runtime, (str(version),) if version else (),
                     cpu_model=str(record.get("cpu_model") or ""),
                     host=str(record.get("host") or ""), isa=isa_text(record.get("isa")))


#: instruction sets a plot's corner leaves out: every CPU with AVX2 has them too
_IMPLIED_ISA = {"FMA", "F16C", "NEON"}


def isa_text(isa: object) -> str:
    """What a corner says about the CPU's instructions: the recorded extensions
    (:func:`mlprof.sysinfo.isa`, a list, or a report's comma-separated column) that
    decide lower precisions' speed, one entry per family, ``+``-joined (``AVX2``, ``AVX-512
    VNNI/BF16+AMX INT8/BF16``); "" when none is recorded."""
    if isinstance(isa, str):  # a report's column: "AVX2, FMA, F16C"
        isa = [x.strip() for x in isa.split(",") if x.strip()]
    if not isinstance(isa, (list, tuple)):
        return ""
    names = [str(x) for x in isa if str(x) not in _IMPLIED_ISA]
    # one entry per family, so that a corner stays short: a Xeon with AMX records nine
    # extensions, "AVX2+AVX-512+AVX-512 VNNI+AVX-VNNI+AVX-512 BF16+...", 100 characters that
    # pushed the axes off the figure; it is "AVX-512 VNNI/BF16/FP16+AMX INT8/BF16"
    if "AVX-512" in names:  # AVX-512 CPUs have AVX2, and AVX-VNNI where they have VNNI
        names = [n for n in names if n != "AVX2"
                 and not (n == "AVX-VNNI" and "AVX-512 VNNI" in names)]
    for family, sep in (("AVX-512", " "), ("AMX", "-")):
        members = [n for n in names if n == family or n.startswith(family + sep)]
        if not members:
            continue
        subs = [n[len(family) + 1:] for n in members if n != family]
        entry = family + (" " + "/".join(subs) if subs else "")
        names = [entry if n == members[0] else n for n in names if n not in members[1:]]
    return "+".join(names)


def short_cpu_model(name: str) -> str:
    """A CPU model name as a plot shows it: without trademarks, the word CPU, the clock and the
    core count (``Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz`` -> ``Intel Xeon Gold 6248R``)."""
    import re

    text = re.sub(r"\((R|TM|tm|r)\)", "", str(name))
    text = re.sub(r"@.*$", "", text)
    text = re.sub(r"\b\d+-Core Processor\b|\bProcessor\b|\bCPU\b", "", text)
    return " ".join(text.split())


def device_label(device: str, threads: int | str, cpu_model: str = "", isa: str = "") -> str:
    """``CPU, 1 thread``, or with the CPU model ``AMD EPYC, 1 thread`` (``AMD EPYC (AVX2), 1
    thread`` with its instruction sets); ``threads`` as text (``threads=1,2``) where the curves
    differ in it."""
    t = threads if isinstance(threads, str) else "default threads" if threads == 0 else \
        f"{threads} thread{'s' if threads != 1 else ''}"
    what = short_cpu_model(cpu_model) if cpu_model and device.lower() == "cpu" else ""
    what = what or device.upper()
    if isa and device.lower() == "cpu":
        what += f" ({isa})"
    return f"{what}, {t}"


def machine_label(device: str, threads: int | str, cpu_model: str = "", host: str = "",
                  isa: str = "") -> str:
    """``AMD EPYC (AVX2), 1 thread | host vm``: where a plot's numbers were measured."""
    label = device_label(device, threads, cpu_model, isa)
    return f"{label} | host {host}" if host else label


def runtime_label(runtime: str, version: str, device: str, threads: int | str, cpu_model: str = "",
                  host: str = "") -> str:
    """``onnxruntime 1.20.1 | CPU, 1 thread`` (with CPU model and host when given)."""
    return f"{runtime} {version} | {machine_label(device, threads, cpu_model, host)}"


def _joined(values) -> str:
    return "/".join(dict.fromkeys(v for v in values if v))


def curve_labels(curves: Sequence[CurveInfo]) -> list[str]:
    """Legend labels: the model (when several, or when one model is shown on one runtime) and
    the runtime with its measured version whenever curves differ in runtime or version.

    A plot names the runtime and its version always: in the legend when there are several,
    in the corner (:func:`corner_label`) when every curve has the same one.
    """
    many_models = len({c.model_label for c in curves}) > 1
    many_rts = len({(c.runtime, c.version) for c in curves}) > 1
    labels = []
    for c in curves:
        parts = []
        if many_models or not many_rts:
            parts.append(c.model_label)
        if many_rts:
            parts.append(c.runtime_text)
        labels.append(", ".join(parts))
    return labels


def corner_label(curves: Sequence[CurveInfo], device: str, threads: int | str) -> str:
    """The top right corner: the runtime and measured version when all curves share one, the
    CPU model, threads and host (and the model when all curves show one model)."""
    machine = machine_label(device, threads, _joined(c.cpu_model for c in curves),
                            _joined(c.host for c in curves), _joined(c.isa for c in curves))
    pairs = {(c.runtime, c.version) for c in curves}
    if len(pairs) == 1:
        return f"{curves[0].runtime_text} | {machine}"
    models = {c.model_label for c in curves}
    if len(models) == 1:
        return f"{next(iter(models))} | {machine}"
    return machine


def export_caption(export_runtimes: Sequence[str], opset: int, precision: str,
                   ort_optimize: bool = False, tolerances: str = "",
                   script_runtimes: Sequence[str] = ()) -> str:
    """What a plot of a model script says under its axes about how it was exported: the export
    settings are the same for every curve that needs an export and absent for the runtimes that
    run the script itself, so they belong in a caption, not in what the curves are matched on.

    ``ONNX export for onnxruntime: opset 18, fp32; torch runs the script itself``.
    """
    how = [f"opset {opset}", precision]
    if ort_optimize:
        how.append("ONNX Runtime offline optimization")
    if tolerances:
        how.append(f"check tolerances {tolerances}")
    text = f"ONNX export for {', '.join(export_runtimes)}: {', '.join(how)}"
    if script_runtimes:
        verb = "runs" if len(script_runtimes) == 1 else "run"
        text += f"; {', '.join(script_runtimes)} {verb} the script itself"
    return text


#: what tells one configuration's points from another's (the host: branches that ran as jobs
#: on different nodes are compared)
CONFIG_KEYS = ("host", "streams", "threads", "sessions", "batch_size", "max_batch",
               "max_wait_ms")


def config_label(row: Mapping[str, Any]) -> str:
    """``2 streams x 1 thread``, with ``, dynamic batch 8 (wait 2 ms)`` where it batches."""
    import pandas as pd

    s, t = int(row["streams"]), int(row["threads"])
    who = "stream" if row["scenario"] == "streams" else "worker"
    text = f"{s} {who}{'s' if s != 1 else ''} x {t} thread{'s' if t != 1 else ''}"
    if row["scenario"] == "streams" and int(row["batch_size"]) != 1:
        text += f", batch {int(row['batch_size'])}"
    mb = row.get("max_batch")
    if row["scenario"] == "server" and mb is not None and not pd.isna(mb) and int(mb) > 1:
        text += f", dynamic batch {int(mb)} (wait {float(row['max_wait_ms']):g} ms)"
    if row.get("sessions") == "shared":
        text += ", one session"
    elif row.get("sessions") == "process":
        text += ", as processes" if s != 1 else ", as a process"
    if row.get("_hosts", 1) > 1 and row.get("host"):
        text += f" on {row['host']}"
    return text
