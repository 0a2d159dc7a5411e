"""Facts about the machine and process, for provenance records.

Below ``measure`` and ``model`` (both read it: the precision checks ask for the CPU's flags,
the measurements record the host): it imports only the runtime registry and ``util``, lazily."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import resource
import socket
import sys
from collections.abc import Iterable


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


def read_text(path: str) -> str | None:
    """The text of ``path``, or None where it cannot be read (``/proc`` and ``/sys`` files
    that this kernel or container lacks)."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def cpu_cgroup_dirs(proc_cgroup: str | None = None, root: str = "/sys/fs/cgroup") -> list[str]:
    """The directories of the cgroups that hold the CPU controller for this process, from its
    own up to the hierarchy's root, for cgroup v1 (``cpu``, ``cpu,cpuacct``) and v2 (the
    ``0::`` line, under ``root`` or ``root/unified``). ``proc_cgroup``: the text of
    ``/proc/self/cgroup`` (read when None). A path missing under ``root`` (a container that
    sees the host's path) falls back to the hierarchy's root."""
    text = proc_cgroup if proc_cgroup is not None else read_text("/proc/self/cgroup")
    dirs: list[str] = []
    for line in (text or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            mounts = [root, f"{root}/unified"]
        elif "cpu" in controllers.split(","):
            mounts = [f"{root}/{name}" for name in
                      (controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu")]
        else:
            continue
        for mount in dict.fromkeys(mounts):
            if not os.path.isfile(f"{mount}/cpu.stat") and not os.path.isfile(
                    f"{mount}/cgroup.procs"):
                continue
            rel = path.strip("/")
            leaf = f"{mount}/{rel}" if rel and os.path.isdir(f"{mount}/{rel}") else mount
            while True:
                dirs.append(leaf)
                if leaf == mount:
                    break
                leaf = os.path.dirname(leaf)
            break
    return list(dict.fromkeys(dirs))


def quota_cpus(dirs: Iterable[str]) -> float | None:
    """The CPUs the cgroups' quota allows (the smallest over ``dirs``): v2 ``cpu.max``
    (``max 100000`` or ``150000 100000``), v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``
    (-1: none); None without a quota."""
    best: float | None = None
    for d in dirs:
        quota = period = None
        text = read_text(f"{d}/cpu.max")
        if text:
            q, _, p = text.strip().partition(" ")
            if q != "max":
                with contextlib.suppress(ValueError):
                    quota, period = int(q), int(p or 100000)
        else:
            q1, p1 = read_text(f"{d}/cpu.cfs_quota_us"), read_text(f"{d}/cpu.cfs_period_us")
            with contextlib.suppress(TypeError, ValueError):
                quota, period = int(q1), int(p1)  # type: ignore[arg-type]
        if quota is not None and period and quota > 0:
            cpus = quota / period
            best = cpus if best is None else min(best, cpus)
    return best


def usable_cpus(affinity: int | None, dirs: Iterable[str]) -> float | None:
    """The CPUs this process can use: its affinity's, capped by the cgroups' quota."""
    quota = quota_cpus(dirs)
    if affinity is None:
        return quota
    return float(affinity) if quota is None else min(float(affinity), quota)


def status_mb(key: str, pid: int | str = "self") -> float | None:
    """A memory figure of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``) in MiB; None where
    there is none (not Linux, the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB: ``VmHWM`` on Linux, which a measurement
    process that runs several measurements restarts between them (``/proc/self/clear_refs``,
    :func:`mlprof.measure.isolate.run_isolated`'s ``reuse``), else ``ru_maxrss``."""
    hwm = status_mb("VmHWM")
    if hwm is not None:
        return round(hwm, 1)
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
