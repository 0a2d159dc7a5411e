"""The one writer of a measurement record's header: mlprof's version and git commit, the time,
the machine, the runtime and its libraries, the model, the settings and the environment
(:class:`mlprof.results.records.Header`).

Every measurement record (a branch, a profile, a GEMM peak, an interleaved comparison, a load
point) starts with what :func:`measurement_header` fills, so that a field is named, typed and
computed once; each writer adds its own fields after it. Fields a writer passes as None are
left out of its record (an interleaved comparison has no one runtime), except the versions and
the machine, which every record has.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

from mlprof.measure.isolate import earlier_in_process, starter_pid
from mlprof.results.records import Header, ModelIdentity
from mlprof.sysinfo import fingerprint_id, peak_rss_mb, system_info
from mlprof.util import git_commit
from mlprof.version import __version__


def library_versions() -> dict[str, str | None]:
    """Versions of what the harness imports and of every runtime's package (None: missing)."""
    from mlprof.runtimes import runtime_packages
    from mlprof.util import dist_version

    dists = dict.fromkeys(("numpy", "onnx", *runtime_packages()))
    return {d: dist_version(d) for d in dists}


def _as_dict(settings: Any) -> dict[str, Any] | None:
    if settings is None:
        return None
    if is_dataclass(settings) and not isinstance(settings, type):
        return asdict(settings)
    return dict(settings)


def measurement_header(*, settings: Any = None, runtime: str | None = None,
                       runtime_version: str | None = None, device: str | None = None,
                       threads: int | None = None,
                       runtime_settings: Mapping[str, Any] | None = None,
                       precision: Mapping[str, Any] | None = None,
                       model: Mapping[str, Any] | None = None,
                       model_identity: ModelIdentity | None = None,
                       batch_size: int | None = None, events_per_call: int | None = None,
                       environment: Mapping[str, Any] | None = None,
                       started: _dt.datetime | None = None,
                       timestamp: str | None = None) -> Header:
    """The header of a measurement made in this process, now: the versions (mlprof, its git
    commit, the libraries), the machine (:func:`mlprof.sysinfo.system_info`), this
    process (pid, the process that started it, the measurements it ran before, its peak
    memory) and what the caller passes:
    ``settings`` (a :class:`~mlprof.measure.settings.MeasureSettings` or its dict), the
    runtime, the model, ``environment`` (:func:`mlprof.measure.contention.environment` of
    snapshots taken around the measured calls).

    ``timestamp``: ``started`` (default: now, UTC) in ISO format to the second, unless given.
    """
    if timestamp is None:
        when = started or _dt.datetime.now(_dt.timezone.utc)
        timestamp = when.isoformat(timespec="seconds")
    machine = system_info()
    isa = machine.get("isa")
    return Header(
        mlprof_version=__version__, git_commit=git_commit(), timestamp=timestamp,
        host=machine.get("host"), platform=machine.get("platform"),
        python=machine.get("python"), cpu_model=machine.get("cpu_model"),
        cpu_count=machine.get("cpu_count"), isa=None if isa is None else tuple(isa),
        cpu_affinity=machine.get("cpu_affinity"), host_fingerprint=fingerprint_id(),
        runtime=runtime, runtime_version=runtime_version, device=device, threads=threads,
        runtime_settings=runtime_settings, precision=precision, model=model,
        model_identity=model_identity,
        settings=_as_dict(settings),
        batch_size=batch_size, events_per_call=events_per_call, environment=environment,
        peak_rss_mb=peak_rss_mb(), pid=os.getpid(), parent_pid=starter_pid(),
        earlier_in_process=earlier_in_process(),
        library_versions=library_versions())
