"""Facts about the machine and process, for provenance records."""

from __future__ import annotations

import functools
import os
import platform
import resource
import socket
import sys


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo`` on Linux, ``platform`` elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


#: the CPU flags (``/proc/cpuinfo``) that decide how fast lower precisions can be, and their
#: usual names: int8 is fast with VNNI (or AMX), bf16 with AVX-512 BF16 or AMX, fp16
#: arithmetic with AVX-512 FP16 (measured here, on an AVX2 CPU without VNNI: ONNX Runtime's
#: dynamic int8 of the example DNN was 1.3x faster than fp32 at batch size 64, its static int8
#: 0.9x, and OpenVINO's int8 2-3x slower than its fp32)
ISA_FLAGS = {
    "avx2": "AVX2", "fma": "FMA", "f16c": "F16C", "avx512f": "AVX-512",
    "avx512_vnni": "AVX-512 VNNI", "avx_vnni": "AVX-VNNI", "avx512_bf16": "AVX-512 BF16",
    "avx512_fp16": "AVX-512 FP16", "amx_tile": "AMX", "amx_int8": "AMX-INT8",
    "amx_bf16": "AMX-BF16", "amx_fp16": "AMX-FP16",
    # aarch64
    "asimd": "NEON", "asimddp": "NEON dot product", "i8mm": "I8MM", "bf16": "BF16",
    "sve": "SVE", "sve2": "SVE2",
}


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (``flags``/``Features`` of ``/proc/cpuinfo``; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() in ("flags", "features"):
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def isa() -> list[str]:
    """The instruction-set extensions of :data:`ISA_FLAGS` this CPU has, by their usual names
    (``["AVX2", "FMA", "F16C"]``), in the table's order."""
    flags = cpu_flags()
    return [name for flag, name in ISA_FLAGS.items() if flag in flags]


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes
    return round(rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024, 1)


def system_info() -> dict:
    """Host, OS, Python and CPU facts."""
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "isa": isa(),
        "cpu_affinity": len(affinity) if affinity is not None else None,
    }
