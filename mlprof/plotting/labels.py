"""The texts of runtime plots: curve labels and corner labels (pure functions, no law)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass


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
    """What one curve of a runtime plot shows: a model on a runtime, at its measured version."""

    model_label: str
    runtime: str
    versions: tuple[str, ...]  # the runtime versions the results were measured with

    @property
    def version(self) -> str:
        """The measured version(s), ``/``-joined when a sweep mixed versions."""
        return "/".join(self.versions) or "unknown"


def device_label(device: str, threads: int) -> str:
    """``CPU, 1 thread``."""
    t = "default threads" if threads == 0 else f"{threads} thread{'s' if threads != 1 else ''}"
    return f"{device.upper()}, {t}"


def runtime_label(runtime: str, version: str, device: str, threads: int) -> str:
    """``onnxruntime 1.20.1 | CPU, 1 thread``."""
    return f"{runtime} {version} | {device_label(device, threads)}"


def curve_labels(curves: Sequence[CurveInfo]) -> list[str]:
    """Legend labels naming only what varies: the model (when several, or when one model is
    shown on one runtime), the runtime (when several), its version (when versions differ)."""
    many_models = len({c.model_label for c in curves}) > 1
    runtimes = {c.runtime for c in curves}
    many_rts = len({(c.runtime, c.version) for c in curves}) > 1
    versions_vary = any(len({c.version for c in curves if c.runtime == rt}) > 1
                        for rt in runtimes)
    # models measured by one runtime each (a TF model by TensorFlow, an ONNX model by ONNX
    # Runtime): the model's label says it all
    per_model = any(len({(c.runtime, c.version) for c in curves if c.model_label == m}) > 1
                    for m in {c.model_label for c in curves})
    show_runtime = many_rts and (not many_models or per_model)
    labels = []
    for c in curves:
        parts = []
        if many_models or not many_rts:
            parts.append(c.model_label)
        if show_runtime:
            parts.append(f"{c.runtime} {c.version}" if versions_vary else c.runtime)
        labels.append(", ".join(parts))
    return labels


def corner_label(curves: Sequence[CurveInfo], device: str, threads: int) -> str:
    """The top right corner: runtime and measured version for one runtime, else the device
    (and the model when all curves show one model)."""
    pairs = {(c.runtime, c.version) for c in curves}
    if len(pairs) == 1:
        (rt, version), = pairs
        return runtime_label(rt, version, device, threads)
    label = device_label(device, threads)
    models = {c.model_label for c in curves}
    if len(models) == 1:
        label = f"{next(iter(models))} | {label}"
    return label
