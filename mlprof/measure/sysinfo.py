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
        "cpu_affinity": len(affinity) if affinity is not None else None,
    }
