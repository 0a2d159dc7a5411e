"""Nightly experiments: YAML files that say what to measure every night.

An experiment file (``experiments/*.yaml``) looks like this::

    title: DNN latency on ONNX Runtime
    description: The 10x128 example DNN at small and large batch sizes.
    active: true            # only active experiments run (default: true)
    priority: 10            # higher runs first (default: 0); ties by file name
    model_files:            # YAML, ONNX or script.py[::HASH]; relative to this file, $VARS and
      - $MLP_BASE/examples/dnn/model_onnx_l10u128.yaml    # globs work
    runtimes: [onnxruntime, torch]       # default: [onnxruntime]
    reference_runtime: onnxruntime       # speed-ups on the dashboard are against this one
    batch_sizes: [1, 8, 64]              # default: 1, 2, 4, ..., 1024
    device: cpu
    settings:                # measurement settings, as the --options of MeasureRuntime
      n_calls: 100
      warmup: 10
      min_duration: 0.5
      threads: 1
      n_events: 1
      input_data: random
    script_args: ""          # arguments for model scripts

Unlike Relay's ``config.json`` (where experiments were shell scripts and a broken one was
rejected silently), every field is checked up front: a bad file gives one error naming the file
and the field, and the nightly run shows it on the dashboard while the other experiments run.
"""

from __future__ import annotations

import glob
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from mlprof.errors import MLProfError
from mlprof.measure.settings import check_batch_sizes, check_setting, cli_settings
from mlprof.runtimes import DEFAULT_RUNTIME

FIELDS = ("title", "description", "active", "priority", "model_files", "runtimes",
          "reference_runtime", "batch_sizes", "device", "settings", "script_args", "notify")


@dataclass(frozen=True)
class Experiment:
    """One experiment file, checked."""

    name: str                     # the file's stem
    file: str                     # absolute path of the YAML file
    title: str
    description: str = ""
    active: bool = True
    priority: int = 0
    model_files: tuple[str, ...] = ()
    runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)
    reference_runtime: str | None = None
    batch_sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    device: str = "cpu"
    settings: dict[str, Any] = field(default_factory=dict)
    script_args: str = ""
    notify: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serializable)."""
        return asdict(self)


def _fail(path: str, fld: str, message: str) -> MLProfError:
    return MLProfError(message, path, fld)


def _str_list(path: str, fld: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or \
            not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, fld, f"must be a non-empty list of strings, got {value!r}")
    return [v.strip() for v in value]


def _model_files(path: str, values: list[str]) -> tuple[str, ...]:
    """Model files relative to the experiment file, with $VARS, ~ and globs expanded."""
    base = os.path.dirname(path)
    out: list[str] = []
    for i, raw in enumerate(values):
        fld = f"model_files[{i}]"
        file_part, sep, hashes = raw.partition("::")
        expanded = os.path.expanduser(os.path.expandvars(file_part))
        if "$" in expanded:
            raise _fail(path, fld, f"undefined variable in {raw!r}")
        full = os.path.abspath(os.path.join(base, expanded))
        if any(c in full for c in "*?["):
            matches = sorted(glob.glob(full))
            if not matches:
                raise _fail(path, fld, f"no file matches {raw!r}")
            out.extend(matches)
            continue
        if not os.path.isfile(full):
            raise _fail(path, fld, f"no such file: {full}")
        out.append(full + sep + hashes.strip().lower())
    return tuple(dict.fromkeys(out))


def load_experiment(path: str | os.PathLike) -> Experiment:
    """Read and check one experiment file; raises :class:`MLProfError` naming file and field."""
    import yaml

    from mlprof.runtimes import canonical_runtime, check_device

    path = os.path.abspath(os.fspath(path))
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise _fail(path, "", f"cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise _fail(path, where, f"not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(data, dict):
        raise _fail(path, "", "must be a mapping of fields (title, model_files, ...)")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise _fail(path, unknown[0], f"unknown field; known: {', '.join(FIELDS)}")
    kw: dict[str, Any] = {"name": os.path.splitext(os.path.basename(path))[0], "file": path}

    for fld in ("title", "description", "script_args"):
        if fld in data and data[fld] is not None:
            if not isinstance(data[fld], str):
                raise _fail(path, fld, f"must be a string, got {data[fld]!r}")
            kw[fld] = " ".join(data[fld].split()) if fld != "description" else data[fld].strip()
    kw.setdefault("title", kw["name"])
    if "active" in data:
        if not isinstance(data["active"], bool):
            raise _fail(path, "active", f"must be true or false, got {data['active']!r}")
        kw["active"] = data["active"]
    if "priority" in data:
        if isinstance(data["priority"], bool) or not isinstance(data["priority"], int):
            raise _fail(path, "priority", f"must be an integer, got {data['priority']!r}")
        kw["priority"] = data["priority"]

    if "model_files" not in data:
        raise _fail(path, "model_files", "missing: give at least one model file")
    kw["model_files"] = _model_files(path, _str_list(path, "model_files", data["model_files"]))

    if "runtimes" in data:
        rts = _str_list(path, "runtimes", data["runtimes"])
        try:
            kw["runtimes"] = tuple(dict.fromkeys(canonical_runtime(r) for r in rts))
        except MLProfError as e:
            raise _fail(path, "runtimes", e.message) from None
    device = data.get("device", "cpu")
    if not isinstance(device, str):
        raise _fail(path, "device", f"must be a string, got {device!r}")
    for rt in kw.get("runtimes", Experiment.runtimes):
        try:
            check_device(rt, device)
        except MLProfError as e:
            raise _fail(path, "device", e.message) from None
    kw["device"] = device
    if data.get("reference_runtime") is not None:
        try:
            ref = canonical_runtime(str(data["reference_runtime"]))
        except MLProfError as e:
            raise _fail(path, "reference_runtime", e.message) from None
        if ref not in kw.get("runtimes", Experiment.runtimes):
            raise _fail(path, "reference_runtime", f"{ref!r} is not one of the runtimes")
        kw["reference_runtime"] = ref

    if "batch_sizes" in data:
        bs = data["batch_sizes"]
        if isinstance(bs, int) and not isinstance(bs, bool):
            bs = [bs]
        if not isinstance(bs, list):
            raise _fail(path, "batch_sizes", f"must be a list of integers >= 1, got {bs!r}")
        try:
            kw["batch_sizes"] = check_batch_sizes(bs)
        except MLProfError as e:
            raise _fail(path, "batch_sizes", e.message) from None

    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise _fail(path, "settings", f"must be a mapping, got {settings!r}")
    known = [s.name for s in cli_settings()]  # the measurement options of MeasureRuntime
    checked: dict[str, Any] = {}
    for key, value in settings.items():
        fld = f"settings.{key}"
        if key not in known:
            raise _fail(path, fld, f"unknown setting; known: {', '.join(known)}")
        try:
            checked[key] = check_setting(key, value)
        except MLProfError as e:  # e.g. an input data file that is not found: named
            raise _fail(path, fld, f"{e.message}: {e.file}" if e.file else e.message) from None
    kw["settings"] = checked
    if "notify" in data and data["notify"] is not None:
        kw["notify"] = tuple(_str_list(path, "notify", data["notify"]))
    return Experiment(**kw)


def experiment_files(directory: str | os.PathLike) -> list[str]:
    """The ``*.yaml``/``*.yml`` files of ``directory``, sorted by name."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise MLProfError("no such directory", directory, "--experiments")
    return sorted(os.path.join(directory, f) for f in os.listdir(directory)
                  if f.endswith((".yaml", ".yml")) and not f.startswith("."))


def load_experiments(directory: str | os.PathLike
                     ) -> list[tuple[str, Experiment | None, MLProfError | None]]:
    """``(file, experiment, error)`` for every file of ``directory``.

    A broken file gives ``(file, None, error)`` instead of stopping the others. The list is in
    run order: priority (highest first), then file name.
    """
    out = []
    for path in experiment_files(directory):
        try:
            out.append((path, load_experiment(path), None))
        except MLProfError as e:
            out.append((path, None, e))
    return sorted(out, key=lambda t: (-(t[1].priority if t[1] else 0), os.path.basename(t[0])))
