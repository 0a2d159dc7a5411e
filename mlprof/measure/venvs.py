"""Measure with another version of a runtime, in a cached virtual environment of its own.

MLProf compared one model across CMSSW releases; here the same comparison is across versions of
the runtime: ``--runtime-version 1.20.1`` (or ``onnxruntime==1.20.1``) measures in
``$MLP_VENVS/onnxruntime-1.20.1-py311/`` (default ``$MLP_BASE/.venvs``), created once with
``python -m venv`` and ``pip install onnxruntime==1.20.1`` plus what the harness imports
(numpy, onnx, pyyaml, at the versions of the main environment where they fit). The harness
itself is this checkout's ``mlprof`` (on ``PYTHONPATH``), so only the runtime differs.

The child is a fresh interpreter of that environment (``python -m mlprof.measure.venv_child``)
with the same timeout as any measurement; a crash or hang fails the measurement clearly.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

from mlprof.errors import MeasurementFailed, MLProfError
from mlprof.measure.harness import MeasureResult
from mlprof.measure.isolate import _describe_exit, default_timeout, settle
from mlprof.measure.lock import measurement_lock
from mlprof.runtimes import runtime_info, runtime_names

#: what the harness needs besides the runtime (pinned to the main environment's versions
#: where those install beside the requested runtime)
HARNESS_DEPS = ("numpy", "onnx", "pyyaml")
_VERSION_RE = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
STAMP = "mlprof-venv.json"


def parse_runtime_version(runtime: str, value: str, field: str = "--runtime-version") -> str:
    """``1.20.1`` or ``onnxruntime==1.20.1`` for ``runtime`` -> ``1.20.1`` (checked)."""
    text = str(value).strip()
    name, sep, version = text.partition("==")
    if not sep:
        name, version = runtime, text
    name, version = name.strip().lower(), version.strip()
    if name != runtime:
        raise MLProfError(f"{text!r} names {name!r}, but the runtime is {runtime!r}", field=field)
    if venv_package(runtime) is None:
        raise MLProfError(f"choosing the version is supported for {', '.join(venv_runtimes())}, "
                          f"not {runtime!r} (its builds are too large to install per version "
                          "here)", field=field)
    if not _VERSION_RE.match(version):
        raise MLProfError(f"not a version: {version!r} (e.g. 1.20.1)", field=field)
    return version


def venv_package(runtime: str) -> str | None:
    """The pip package installed to measure another version of ``runtime`` (None: not
    supported)."""

    return runtime_info(runtime).venv_package


def venv_runtimes() -> tuple[str, ...]:
    """The runtimes whose version can be chosen (``--runtime-version``)."""

    return tuple(n for n in runtime_names() if runtime_info(n).venv_package)


def venv_root() -> str:
    """``$MLP_VENVS``, default ``$MLP_BASE/.venvs``."""
    root = os.environ.get("MLP_VENVS") or os.path.join(
        os.environ.get("MLP_BASE", os.getcwd()), ".venvs")
    return os.path.abspath(os.path.expanduser(os.path.expandvars(root)))


def venv_dir(runtime: str, version: str) -> str:
    """Where the environment for ``runtime==version`` lives."""
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    return os.path.join(venv_root(), f"{runtime}-{version}-{py}")


def _python(path: str) -> str:
    return os.path.join(path, "bin", "python")


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on ``path`` (another process creating the same venv waits)."""
    import fcntl

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _pip(python: str, args: list[str], log: str) -> subprocess.CompletedProcess:
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{r.stdout}{r.stderr}\n")
    return r


def ensure_venv(runtime: str, version: str,
                log: Callable[[str], None] | None = None) -> str:
    """The Python of the environment with ``runtime==version``, created on first use."""
    from mlprof.util import dist_version, write_json_atomic

    final = venv_dir(runtime, version)
    if os.path.exists(os.path.join(final, STAMP)):
        return _python(final)
    with _locked(final + ".lock"):
        if os.path.exists(os.path.join(final, STAMP)):
            return _python(final)
        dist = venv_package(runtime)
        if dist is None:
            raise MLProfError(f"choosing the version is not supported for {runtime!r}",
                              field="--runtime-version")
        if log:
            log(f"creating {final} for {dist}=={version} (once; cached afterwards)")
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.", dir=venv_root())
        logfile = final + ".log"
        try:
            t0 = time.time()
            subprocess.run([sys.executable, "-m", "venv", tmp], check=True,
                           capture_output=True, text=True)
            pins = [f"{d}=={dist_version(d)}" if dist_version(d) else d for d in HARNESS_DEPS]
            r = _pip(_python(tmp), [f"{dist}=={version}", *pins], logfile)
            if r.returncode != 0:  # the main environment's versions do not fit: let pip choose
                r = _pip(_python(tmp), [f"{dist}=={version}", *HARNESS_DEPS], logfile)
            if r.returncode != 0:
                last = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise MLProfError(f"cannot install {dist}=={version}: {last} (log: {logfile})",
                                  field="--runtime-version")
            # load the runtime's class there, as the harness will (it imports the library),
            # and read the version that measurements record
            probe = ("from mlprof.runtimes import get_runtime; "
                     f"print(get_runtime({runtime!r}).version())")
            got = subprocess.run([_python(tmp), "-c", probe], env=_harness_env(),
                                 capture_output=True, text=True)
            if got.returncode != 0 or got.stdout.strip() != version:
                raise MLProfError(f"{dist}=={version} installed but imports as "
                                  f"{got.stdout.strip() or got.stderr.strip()[-200:]!r}",
                                  field="--runtime-version")
            write_json_atomic(os.path.join(tmp, STAMP), {
                "runtime": runtime, "version": version, "python": sys.version.split()[0],
                "seconds": round(time.time() - t0, 1)})
            if os.path.exists(final):  # a half-made one from a crash: never used (no stamp)
                shutil.rmtree(final)
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return _python(final)


def _harness_env() -> dict[str, str]:
    """The environment of a child in a venv: this checkout's ``mlprof`` on ``PYTHONPATH``, and
    quiet libraries as in the measurement server (:mod:`mlprof.measure.quiet`)."""
    from mlprof.measure.quiet import child_env

    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return dict(os.environ, **child_env(), PYTHONPATH=src, PYTHONSAFEPATH="1")


def measure_in_venv(python: str, model_file: str, settings, *,
                    script_args: tuple[str, ...] = (), timeout: float | None = None,
                    reference_file: str | None = None):
    """:func:`mlprof.measure.harness.measure` run by ``python`` (another environment).

    Returns a :class:`~mlprof.measure.harness.MeasureResult`; errors and crashes raise
    :class:`MLProfError` / :class:`MeasurementFailed` like :func:`measure_isolated`. Like it,
    holds the machine-wide measurement lock while the child runs and records ``lock_wait_s``.
    """
    import numpy as np

    timeout = default_timeout() if timeout is None else timeout
    label = f"{os.path.basename(model_file)} at batch size {settings.batch_size}"
    env = _harness_env()
    with tempfile.TemporaryDirectory(prefix="mlprof-venv-") as tmp:
        job, out = os.path.join(tmp, "job.json"), os.path.join(tmp, "result.npz")
        from dataclasses import asdict

        with open(job, "w") as f:
            json.dump({"model_file": model_file, "settings": asdict(settings),
                       "script_args": list(script_args), "output": out,
                       "reference_file": reference_file}, f)
        # one measurement at a time on this machine (mlprof.measure.lock), as in measure_isolated
        with measurement_lock(label) as lock:
            settle()  # no export of this process ends beside the measurement
            proc = subprocess.Popen([python, "-m", "mlprof.measure.venv_child", job], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                raise MeasurementFailed(f"{label}: no result after {timeout:g} s "
                                        "(MLP_TIMEOUT); killed", status="timeout") from None
            except BaseException:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                raise
        if proc.returncode != 0 or not os.path.exists(out):
            try:
                err = json.loads(stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                err = None
            if isinstance(err, dict) and "error" in err:
                if err.get("status"):
                    raise MeasurementFailed(err["error"], status=err["status"])
                raise MLProfError(err["error"])
            tail = stderr.strip().splitlines()[-1:] or [""]
            raise MeasurementFailed(f"{label}: {_describe_exit(proc.returncode)} "
                                    f"({python}) {tail[0][-300:]}".strip())
        data = np.load(out, allow_pickle=False)
        prov = json.loads(str(data["provenance"]))
        prov["lock_wait_s"] = lock.wait_s
        return MeasureResult(int(data["batch_size"]), data["samples_ns"], data["events"],
                             data["calls"], prov)
