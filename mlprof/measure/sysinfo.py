"""Facts about the machine and process, for provenance records."""

from __future__ import annotations

import functools
import hashlib
import json
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


def _memory_gib() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / (1024 * 1024))
    except (OSError, ValueError, IndexError):
        pass
    return None


def _smt() -> bool | None:
    try:
        with open("/sys/devices/system/cpu/smt/active") as f:
            return f.read().strip() == "1"
    except OSError:
        return None


def virtualisation() -> str:
    """What the machine runs in: ``docker``/``container`` (a container's marks), a hypervisor
    (``/sys/hypervisor/type``, else ``vm`` for the CPU's ``hypervisor`` flag), or ``none``."""
    kinds = []
    if os.path.exists("/.dockerenv"):
        kinds.append("docker")
    elif os.path.exists("/run/.containerenv") or os.environ.get("container"):
        kinds.append("container")
    try:
        with open("/sys/hypervisor/type") as f:
            kinds.append(f.read().strip() or "vm")
    except OSError:
        if "hypervisor" in cpu_flags():
            kinds.append("vm")
    return "+".join(kinds) or "none"


@functools.lru_cache(maxsize=1)
def host_fingerprint() -> dict:
    """What decides how noisy this machine is for a measurement, and changes when the machine
    does (a noise floor belongs to one fingerprint, :mod:`mlprof.measure.noise`): the CPU model
    and a digest of its flags, the usable CPUs (affinity and the cgroup's quota), memory in
    GiB, SMT, the kernel release, the virtualisation and the runtimes' versions. Not the host
    name: a cluster's identical nodes share a floor, and a renamed machine keeps its own."""
    from mlprof.measure.causes import cpu_cgroup_dirs, usable_cpus
    from mlprof.runtimes import runtime_packages
    from mlprof.util import dist_version

    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    usable = usable_cpus(len(affinity) if affinity is not None else os.cpu_count(),
                         cpu_cgroup_dirs())
    flags = hashlib.sha256(" ".join(sorted(cpu_flags())).encode()).hexdigest()[:12]
    return {
        "cpu_model": cpu_model(), "cpu_flags_sha256": flags,
        "usable_cpus": None if usable is None else round(float(usable), 2),
        "memory_gib": _memory_gib(), "smt": _smt(), "kernel": platform.release(),
        "machine": platform.machine(), "virtualisation": virtualisation(),
        "runtimes": {d: dist_version(d) for d in sorted(set(runtime_packages()))},
    }


def fingerprint_id(fingerprint: dict | None = None) -> str:
    """A short stable name of a fingerprint (:func:`host_fingerprint` by default): the first
    12 hex digits of the SHA-256 of its canonical JSON."""
    fp = host_fingerprint() if fingerprint is None else fingerprint
    text = json.dumps(fp, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
