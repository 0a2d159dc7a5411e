"""Model specifications: MLProf-style YAML files and bare ONNX files.

Reading a spec (:func:`read_model_file`) is cheap and never imports onnx: the tasks do it to
build output paths. Checking it against the ONNX graph (:func:`resolve_inputs`) loads the graph
and happens in the measurement process.

MLProf's YAML format, accepted as MLProf writes it, plus an optional ``dtype`` per input::

    model:
      name: dnn_l10u128            # optional, default: file name
      label: "DNN 10x128"          # optional, for plots
      version: "1.0.0"             # optional
      inference_engine: onnx       # onnx only (tf/tfaot: convert to ONNX first)
      file: model_onnx_l10u128.onnx   # relative to this YAML file
      inputs:
        - name: input_0
          shape: [64]              # without the batch dimension
          dtype: float32           # optional, default: the graph's type
      outputs:
        - name: output_0
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlprof.errors import MLProfError

SUPPORTED_ENGINES = ("onnx",)
#: the engine of a Python model script (its model is built with PyTorch)
SCRIPT_ENGINE = "torch"

#: canonical dtype names and the spellings accepted for them
DTYPE_ALIASES = {
    "float32": "float32", "float": "float32", "f32": "float32", "single": "float32",
    "float16": "float16", "half": "float16", "f16": "float16",
    "float64": "float64", "double": "float64", "f64": "float64",
    "int64": "int64", "long": "int64", "i64": "int64",
    "int32": "int32", "int": "int32", "i32": "int32",
    "int16": "int16", "int8": "int8", "uint8": "uint8",
    "bool": "bool", "boolean": "bool",
}

_CONVERT_HINT = {
    "tf": "convert the frozen graph to ONNX, e.g. `python -m tf2onnx.convert --graphdef "
          "model.pb --inputs IN:0 --outputs OUT:0 --output model.onnx`, and set "
          "inference_engine: onnx",
    "tfaot": "AOT-compiled TensorFlow models need CMSSW; convert the saved_model to ONNX, e.g. "
             "`python -m tf2onnx.convert --saved-model DIR --output model.onnx`, and set "
             "inference_engine: onnx",
}


def canonical_dtype(value: Any, file: str | None = None, fld: str | None = None) -> str:
    """Return the canonical dtype name for ``value`` or raise a clear error."""
    key = str(value).strip().lower()
    if key.startswith("tensor(") and key.endswith(")"):
        key = key[7:-1]
    if key not in DTYPE_ALIASES:
        raise MLProfError(f"unsupported dtype {value!r}; supported: "
                          f"{', '.join(sorted(set(DTYPE_ALIASES.values())))}", file, fld)
    return DTYPE_ALIASES[key]


@dataclass(frozen=True)
class InputSpec:
    """One model input: its name, its shape *without* the batch dimension and its dtype.

    ``batched`` is False for inputs that have no batch dimension at all (scalars or inputs
    whose shape the batch size must not change).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    batched: bool = True

    def full_shape(self, batch_size: int) -> tuple[int, ...]:
        """The shape of a tensor for ``batch_size`` events."""
        return (batch_size, *self.shape) if self.batched else self.shape


@dataclass
class ModelSpec:
    """What mlprof knows about a model before loading it."""

    name: str
    label: str
    spec_file: str                      # the file the user gave (YAML or ONNX)
    file: str                           # the ONNX file
    engine: str = "onnx"
    version: str | None = None
    inputs: list[InputSpec] | None = None   # None: read everything from the graph
    outputs: list[str] | None = None
    #: for model scripts: the hashes after ``::`` (empty: every model in the script)
    model_hashes: tuple[str, ...] = ()
    _hash: str | None = field(default=None, repr=False)

    @property
    def is_script(self) -> bool:
        """Whether this is a Python model script (engine :data:`SCRIPT_ENGINE`)."""
        return self.engine == SCRIPT_ENGINE

    @property
    def content_hash(self) -> str:
        """sha256 over the spec file and the model file: changes whenever either changes.

        Cached per process by the files' paths, sizes and modification times (a sweep creates
        one task per batch size, each asking).
        """
        if self._hash is None:
            paths = list(dict.fromkeys([self.spec_file, self.file]))
            key = (*(_stat_key(p) for p in paths), self.model_hashes)
            if None in key or key not in _HASHES:
                h = hashlib.sha256()
                for path in paths:
                    h.update(_read_bytes(path, self.spec_file, "file"))
                for mh in self.model_hashes:
                    h.update(b"::" + mh.encode())
                if None in key:
                    self._hash = h.hexdigest()
                    return self._hash
                _HASHES[key] = h.hexdigest()
            self._hash = _HASHES[key]
        return self._hash

    def model_sha256(self) -> str:
        """sha256 of the ONNX model file alone."""
        return hashlib.sha256(_read_bytes(self.file, self.spec_file, "file")).hexdigest()


#: content hashes and parsed specs of this process, keyed by file identity (see _stat_key)
_HASHES: dict[tuple, str] = {}
_SPECS: dict[tuple, ModelSpec] = {}


def _stat_key(path: str) -> tuple | None:
    """(path, size, mtime_ns) of ``path``, None if it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_mtime_ns)


def _read_bytes(path: str, spec_file: str, fld: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        if path == spec_file:
            raise MLProfError("file not found", path) from None
        raise MLProfError(f"model file {path} not found", spec_file, f"model.{fld}") from None
    except OSError as e:
        raise MLProfError(f"cannot read: {e.strerror}", path) from None


def script_model_name(name: str, model_hash: str) -> str:
    """The one name of a model in a script (paths, logs, legends, dashboard): ``<name>-<hash>``,
    where ``name`` is the script's stem or the ``--model-name`` given for the script."""
    return f"{name}-{model_hash}"


def read_model_file(path: str | os.PathLike) -> ModelSpec:
    """Read a model file (``.yaml``/``.yml`` in MLProf's format, or ``.onnx``).

    Only the YAML is parsed here; the ONNX graph is not loaded (see :func:`resolve_inputs`).
    Raises :class:`MLProfError` naming the file and field for any problem.
    """
    path, sep, hashes = os.fspath(path).partition("::")
    path = os.path.abspath(os.path.expandvars(os.path.expanduser(path)))
    ext = os.path.splitext(path)[1].lower()
    if sep and ext != ".py":
        raise MLProfError("'::HASH' selects a model of a Python script; this is not a .py "
                          "file", path, "--model-file")
    if not os.path.exists(path):
        raise MLProfError("file not found", path)
    if os.path.isdir(path):
        raise MLProfError("is a directory, expected a .yaml or .onnx model file", path)
    if ext == ".onnx":
        stem = Path(path).stem
        return ModelSpec(name=stem, label=stem, spec_file=path, file=path)
    if ext in (".yaml", ".yml"):
        # parsed once per process and file version (a sweep creates one task per batch size)
        key = _stat_key(path)
        if key is None or key not in _SPECS:
            spec = _read_yaml(path)
            if key is None:
                return spec
            _SPECS[key] = spec
        return copy.deepcopy(_SPECS[key])
    if ext == ".py":
        from mlprof.model.script import read_labels, split_model_file

        _, model_hashes = split_model_file(f"{path}{sep}{hashes}")
        read_labels(path)  # a malformed labels line fails here, before anything runs
        stem = Path(path).stem
        name = stem if len(model_hashes) != 1 else script_model_name(stem, model_hashes[0])
        return ModelSpec(name=name, label=name, spec_file=path, file=path, engine=SCRIPT_ENGINE,
                         model_hashes=model_hashes)
    raise MLProfError(f"unknown model file type {ext or '(none)'!r}; expected .yaml, .yml or "
                      ".onnx", path)


def _read_yaml(path: str) -> ModelSpec:
    import yaml

    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise MLProfError(f"malformed YAML: {where}{problem}", path) from None
    if not isinstance(data, dict) or "model" not in data:
        raise MLProfError("missing top-level 'model' section", path, "model")
    m = data["model"]
    if not isinstance(m, dict):
        raise MLProfError("must be a mapping", path, "model")

    engine = m.get("inference_engine")
    if engine is None:
        raise MLProfError(f"missing field; supported: {', '.join(SUPPORTED_ENGINES)}", path,
                          "model.inference_engine")
    engine = str(engine).strip().lower()
    if engine in _CONVERT_HINT:
        raise MLProfError(f"inference_engine '{engine}' is not supported (supported: "
                          f"{', '.join(SUPPORTED_ENGINES)}); {_CONVERT_HINT[engine]}",
                          path, "model.inference_engine")
    if engine not in SUPPORTED_ENGINES:
        raise MLProfError(f"unknown inference_engine {engine!r}; supported: "
                          f"{', '.join(SUPPORTED_ENGINES)}", path, "model.inference_engine")

    file = m.get("file")
    if not file or not isinstance(file, str):
        raise MLProfError("missing or empty; give the ONNX file, relative to this YAML", path,
                          "model.file")
    file = os.path.expandvars(os.path.expanduser(file))
    onnx_file = os.path.normpath(os.path.join(os.path.dirname(path), file))
    if not os.path.isfile(onnx_file):
        raise MLProfError(f"model file {onnx_file} not found", path, "model.file")
    if not onnx_file.lower().endswith(".onnx"):
        raise MLProfError(f"expected an .onnx file, got {file!r}", path, "model.file")

    inputs = _read_inputs(m.get("inputs"), path)
    outputs = _read_outputs(m.get("outputs"), path)

    stem = Path(path).stem
    name = m.get("name")
    name = str(name) if name not in (None, "") else stem
    label = m.get("label")
    label = str(label) if label not in (None, "") else name
    version = m.get("version")
    return ModelSpec(name=name, label=label, spec_file=path, file=onnx_file, engine=engine,
                     version=None if version is None else str(version), inputs=inputs,
                     outputs=outputs)


def _read_inputs(raw: Any, path: str) -> list[InputSpec]:
    if raw is None:
        raise MLProfError("missing; list each input with name and shape (without the batch "
                          "dimension)", path, "model.inputs")
    if not isinstance(raw, list) or not raw:
        raise MLProfError("must be a non-empty list of {name, shape}", path, "model.inputs")
    inputs = []
    for i, item in enumerate(raw):
        fld = f"model.inputs[{i}]"
        if not isinstance(item, dict):
            raise MLProfError("must be a mapping with name and shape", path, fld)
        name = item.get("name")
        if not name or not isinstance(name, str):
            raise MLProfError("missing or not a string", path, f"{fld}.name")
        shape = item.get("shape")
        if shape is None:
            raise MLProfError("missing (the input shape without the batch dimension)", path,
                              f"{fld}.shape")
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in shape):
            raise MLProfError(f"must be a list of positive integers, got {shape!r}", path,
                              f"{fld}.shape")
        dtype = item.get("dtype")
        dtype = canonical_dtype(dtype, path, f"{fld}.dtype") if dtype is not None else None
        inputs.append(InputSpec(name=name, shape=tuple(shape), dtype=dtype or ""))
    names = [i.name for i in inputs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise MLProfError(f"duplicate input names: {', '.join(dupes)}", path, "model.inputs")
    return inputs


def _read_outputs(raw: Any, path: str) -> list[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise MLProfError("must be a list of {name}", path, "model.outputs")
    outputs = []
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else item
        if not name or not isinstance(name, str):
            raise MLProfError("missing or not a string", path, f"model.outputs[{i}].name")
        outputs.append(name)
    return outputs
