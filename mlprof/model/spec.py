"""Model specifications: MLProf-style YAML files and bare ONNX files.

Reading a spec (:func:`read_model_file`) is cheap and never imports onnx: the tasks do it to
build output paths. Checking it against the ONNX graph (:func:`resolve_inputs`) loads the graph
and happens in the measurement process.

MLProf's YAML format, accepted as MLProf writes it, plus an optional ``dtype`` per input::

    model:
      name: dnn_l10u128            # optional, default: file name
      label: "DNN 10x128"          # optional, for plots
      version: "1.0.0"             # optional
      inference_engine: onnx       # onnx, tf (a frozen graph .pb or a SavedModel) or tfaot
      file: model_onnx_l10u128.onnx   # relative to this YAML file (tf: a .pb frozen graph)
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

from mlprof import ingest
from mlprof.errors import MLProfError

#: MLProf's TensorFlow engines: a frozen graph or SavedModel, and an AOT-compiled SavedModel
#: (their model kinds, :data:`mlprof.runtimes.TF_MODEL` and ``TFAOT_MODEL``, are these names)
TF_ENGINE, TFAOT_ENGINE = "tf", "tfaot"
TF_ENGINES = (TF_ENGINE, TFAOT_ENGINE)
SUPPORTED_ENGINES = ("onnx", *TF_ENGINES)
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


class HasInputs:
    """A base of the resolved models (:class:`mlprof.model.onnx_graph.ResolvedModel`,
    ``ResolvedTFModel``): what follows from their checked ``inputs`` alone. A plain class, so
    the dataclasses below it keep their own fields and order."""

    inputs: list[InputSpec]

    @property
    def batched(self) -> bool:
        """Whether any input has a batch dimension (none: every batch size measures the
        model's own shapes)."""
        return any(i.batched for i in self.inputs)


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
    #: TensorFlow SavedModels: the signature to call (``serving_default``)
    serving_key: str | None = None
    #: tfaot: the YAML's ``compilation`` block (batch_sizes, tf_xla_flags, xla_flags)
    compilation: dict[str, Any] | None = None
    _hash: str | None = field(default=None, repr=False)

    @property
    def is_script(self) -> bool:
        """Whether this is a Python model script (engine :data:`SCRIPT_ENGINE`)."""
        return self.engine == SCRIPT_ENGINE

    @property
    def model_kind(self) -> str:
        """``script``, ``onnx``, ``tf`` or ``tfaot`` (see :data:`mlprof.runtimes.MODEL_KINDS`)."""
        if self.is_script:
            return "script"
        return self.engine if self.engine in TF_ENGINES else "onnx"

    @property
    def is_saved_model(self) -> bool:
        """Whether the model file is a SavedModel directory."""
        return os.path.isdir(self.file)

    @property
    def content_hash(self) -> str:
        """sha256 over the spec file, the model file and an ONNX file's external-data files:
        changes whenever any of them changes.

        Cached per process by the files' paths, sizes and modification times (a sweep creates
        one task per batch size, each asking).
        """
        if self._hash is None:
            paths = list(dict.fromkeys([self.spec_file, self.file]))
            key = (*(_stat_key(p) for p in paths), self.model_hashes)
            # the external-data files of this version of the model file, once known
            extra = _EXTERNAL.get(key, ())
            full_key = (*key, *(_stat_key(p) for p in extra))
            if None in full_key or full_key not in _HASHES:
                h = hashlib.sha256()
                found: list[str] = []
                for path in paths:
                    data = _read_bytes(path, self.spec_file, "file")
                    h.update(data)
                    # tensors stored beside an ONNX file (model.onnx.data) are the model too
                    for ext in external_data_files(path, data):
                        found.append(ext)
                        h.update(b"\0external\0" + os.path.basename(ext).encode())
                        h.update(_read_bytes(ext, self.spec_file, "file (external data)"))
                for mh in self.model_hashes:
                    h.update(b"::" + mh.encode())
                full_key = (*key, *(_stat_key(p) for p in found))
                if None in full_key:
                    self._hash = h.hexdigest()
                    return self._hash
                _EXTERNAL[key] = tuple(found)
                _HASHES[full_key] = h.hexdigest()
            self._hash = _HASHES[full_key]
        return self._hash

    def model_sha256(self) -> str:
        """sha256 of the model file alone (a SavedModel: over its files' names and bytes)."""
        return hashlib.sha256(_read_bytes(self.file, self.spec_file, "file")).hexdigest()


#: content hashes and parsed specs of this process, keyed by file identity (see _stat_key)
_HASHES: dict[tuple, str] = {}
_EXTERNAL: dict[tuple, tuple[str, ...]] = {}
_SPECS: dict[tuple, ModelSpec] = {}


def external_data_files(path: str, data: bytes) -> list[str]:
    """The external-data files an ONNX file's tensors live in (sorted, unique; none for other
    files). A missing or escaping one is an error naming the file."""
    if not path.lower().endswith(".onnx"):
        return []
    # without onnx (it imports numpy: 0.06-0.2 s of every law run, which hashes the model
    # file) when no tensor can be external: one that is carries data_location EXTERNAL (field
    # 14 = 1, the bytes 70 01 in any nesting) and its "location" key; one without a location
    # fails to load anyway ("not a valid ONNX model")
    if b"\x70\x01" not in data or b"location" not in data:
        return []
    import onnx

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)  # the graph only: external data is not loaded
    except Exception:
        return []  # not parseable: load_onnx says so with the whole message
    base = os.path.dirname(os.path.abspath(path))
    files = set()
    tensors = list(model.graph.initializer)
    tensors += [a.t for n in model.graph.node for a in n.attribute if a.HasField("t")]
    for t in tensors:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        location = next((e.value for e in t.external_data if e.key == "location"), "")
        full = os.path.normpath(os.path.join(base, location))
        if not location or os.path.isabs(location) or not full.startswith(base + os.sep):
            raise MLProfError(f"tensor {t.name!r} has its data outside the model's directory "
                              f"({location!r})", path, "external data")
        files.add(full)
    return sorted(files)


def _stat_key(path: str) -> tuple | None:
    """(path, size, mtime_ns) of ``path``, None if it cannot be read (a directory: of every
    file in it)."""
    if os.path.isdir(path):
        keys = tuple(_stat_key(f) for f in _dir_files(path))
        return None if None in keys else (path, keys)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_mtime_ns)


#: the most files a SavedModel directory may have (a few, plus assets): a link inside it to a
#: large tree ("/") is refused in one line instead of hashing that tree
MAX_SAVED_MODEL_FILES = 10_000

#: the largest model file read for its hash (no real limit: devices and FIFOs are refused by
#: their type, see :mod:`mlprof.ingest`)
MAX_MODEL_BYTES = 1 << 40


def _dir_files(path: str) -> list[str]:
    """Every file under directory ``path``, sorted, symbolic links to directories followed.

    A SavedModel whose ``variables/`` is a link (to weights kept elsewhere) is hashed with the
    weights it loads: without following, changed weights kept the hash and reused old results.
    Each directory is entered once, by its device and inode, so a link back up the tree (a
    cycle) ends; names are the paths seen from ``path`` (a linked ``variables/`` hashes like a
    copied one, and an ordinary SavedModel as before). An unreadable subdirectory is one line,
    not skipped.
    """
    seen: set[tuple[int, int]] = set()
    files: list[str] = []

    def fail(e: OSError) -> None:
        raise MLProfError(f"cannot be read: {e.strerror or e}", e.filename or path)

    for root, dirs, names in os.walk(path, followlinks=True, onerror=fail):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:  # reached again through a link: a cycle
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        files.extend(os.path.join(root, f) for f in names)
        if len(files) > MAX_SAVED_MODEL_FILES:
            raise MLProfError(f"has more than {MAX_SAVED_MODEL_FILES} files; a SavedModel "
                              "has a few (a link inside it to a large tree?)", path)
    return sorted(files)


def _read_bytes(path: str, spec_file: str, fld: str) -> bytes:
    """The bytes hashed for a model file; for a SavedModel directory, its files' relative names
    and contents (:func:`_dir_files`). Read through :func:`mlprof.ingest.read_bytes`: a FIFO or
    a device (in a SavedModel too) is one line naming it, never a hang or a read without end."""
    if os.path.isdir(path):  # a SavedModel: its files' relative names and contents
        return b"".join(os.path.relpath(f, path).encode() + b"\0" + _read_bytes(f, spec_file, fld)
                        + b"\0" for f in _dir_files(path))
    if not os.path.exists(path):
        if path == spec_file:
            raise MLProfError("file not found", path)
        if not os.path.lexists(path):
            raise MLProfError(f"model file {path} not found", spec_file, f"model.{fld}")
    return ingest.read_bytes(path, MAX_MODEL_BYTES, what="a model file")


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
        if os.path.isfile(os.path.join(path, "saved_model.pb")):  # a SavedModel: engine tf
            check_saved_model(path)
            name = Path(path).name
            return ModelSpec(name=name, label=name, spec_file=path, file=path, engine=TF_ENGINE,
                             serving_key="serving_default")
        raise MLProfError("is a directory, expected a .yaml, .onnx or .py model file or a "
                          "SavedModel directory", path)
    check_regular_file(path)
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


#: the largest model YAML read (a spec is a few hundred bytes; a huge one is a mistake or worse)
MAX_SPEC_BYTES = 1 << 20


def check_regular_file(path: str, spec_file: str | None = None, fld: str | None = None) -> None:
    """A one-line error unless ``path`` (links followed) is a regular file: a FIFO would hang
    the reader, a device (``/dev/zero``) would be read until memory runs out."""
    ingest.check_regular(path, field=fld if spec_file else None, source=spec_file)


def check_saved_model(path: str, spec_file: str | None = None, fld: str | None = None) -> None:
    """A one-line error unless every file of the SavedModel directory ``path`` (linked
    directories followed, :func:`_dir_files`) is a regular file: checked when the spec is read,
    so that a FIFO or device inside it fails the task up front instead of in its first
    ``complete()`` (which hashes the directory) or hanging TensorFlow's loader."""
    for f in _dir_files(path):
        ingest.check_regular(f, field=fld if spec_file else None, source=spec_file)


def _yaml_scalar(m: dict, key: str, path: str) -> str | None:
    """``model.<key>`` as a string (numbers are taken as written); lists, mappings and booleans
    are refused."""
    value = m.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise MLProfError(f"must be a string, got {type(value).__name__}", path, f"model.{key}")
    return str(value)


def _read_yaml(path: str) -> ModelSpec:

    data = ingest.load_yaml(path, MAX_SPEC_BYTES, what="model files", subject="a model YAML")
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
    if engine not in SUPPORTED_ENGINES:
        raise MLProfError(f"unknown inference_engine {engine!r}; supported: "
                          f"{', '.join(SUPPORTED_ENGINES)}", path, "model.inference_engine")

    serving_key = compilation = None
    if engine in TF_ENGINES and (engine == TFAOT_ENGINE or m.get("saved_model") is not None):
        # a SavedModel directory; its signature gives inputs and outputs
        if m.get("file") is not None and engine == TF_ENGINE:
            raise MLProfError("give either file (a frozen graph .pb) or saved_model, not both",
                              path, "model.saved_model")
        model_file = _model_path(m, "saved_model", path, "the SavedModel directory", dir_ok=True)
        if not os.path.isfile(os.path.join(model_file, "saved_model.pb")):
            raise MLProfError(f"{model_file} is not a SavedModel directory (no saved_model.pb)",
                              path, "model.saved_model")
        check_saved_model(model_file, path, "model.saved_model")
        serving_key = _yaml_scalar(m, "serving_key", path) or "serving_default"
        if engine == TFAOT_ENGINE:
            # MLProf writes the compilation block next to the model block (top level)
            raw = m.get("compilation") if "compilation" in m else data.get("compilation")
            compilation = _read_compilation(raw, path)
        raw_inputs = m.get("inputs")
        inputs = _read_inputs(raw_inputs, path) if raw_inputs is not None else None
    else:
        what = "the frozen graph (.pb)" if engine == TF_ENGINE else "the ONNX file"
        model_file = _model_path(m, "file", path, what)
        want = ".pb" if engine == TF_ENGINE else ".onnx"
        if not model_file.lower().endswith(want):
            raise MLProfError(f"expected a {want} file, got {m.get('file')!r}", path,
                              "model.file")
        inputs = _read_inputs(m.get("inputs"), path)
    outputs = _read_outputs(m.get("outputs"), path)

    name = _yaml_scalar(m, "name", path) or Path(path).stem
    label = _yaml_scalar(m, "label", path) or name
    version = _yaml_scalar(m, "version", path)
    return ModelSpec(name=name, label=label, spec_file=path, file=model_file, engine=engine,
                     version=version, inputs=inputs, outputs=outputs, serving_key=serving_key,
                     compilation=compilation)


def _model_path(m: dict, key: str, path: str, what: str, dir_ok: bool = False) -> str:
    """``model.<key>``: a path relative to the YAML that exists."""
    file = m.get(key)
    if not file or not isinstance(file, str):
        raise MLProfError(f"missing or empty; give {what}, relative to this YAML", path,
                          f"model.{key}")
    file = os.path.expandvars(os.path.expanduser(file))
    full = os.path.normpath(os.path.join(os.path.dirname(path), file))
    if not os.path.exists(full):
        raise MLProfError(f"model file {full} not found", path, f"model.{key}")
    if dir_ok:
        if not os.path.isdir(full):
            raise MLProfError(f"{full} is not a directory; give {what}", path, f"model.{key}")
    else:
        check_regular_file(full, path, f"model.{key}")
    return full


def _read_compilation(raw: Any, path: str) -> dict[str, Any]:
    """tfaot's ``compilation`` block: ``batch_sizes`` (positive, unique) and the XLA flags."""
    fld = "compilation"
    if not isinstance(raw, dict):
        raise MLProfError("missing or not a mapping; give batch_sizes, tf_xla_flags and "
                          "xla_flags", path, fld)
    unknown = sorted(set(raw) - {"batch_sizes", "tf_xla_flags", "xla_flags"})
    if unknown:
        raise MLProfError(f"unknown field(s) {', '.join(unknown)}; known: batch_sizes, "
                          "tf_xla_flags, xla_flags", path, fld)
    sizes = raw.get("batch_sizes")
    if not isinstance(sizes, list) or not sizes or not all(
            isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in sizes):
        raise MLProfError(f"must be a non-empty list of positive integers, got {sizes!r}", path,
                          f"{fld}.batch_sizes")
    flags = {}
    for key in ("tf_xla_flags", "xla_flags"):
        value = raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise MLProfError(f"must be a list of strings, got {value!r}", path, f"{fld}.{key}")
        flags[key] = list(value)
    return {"batch_sizes": sorted(set(sizes)), **flags}


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


def checked_marker(spec: ModelSpec) -> str:
    """The mark that ``spec`` passed :func:`mlprof.model.onnx_graph.check_up_front`:
    ``$LAW_HOME/mlprof-checked/<key>`` (``~/.cache/mlprof/mlprof-checked`` without a law home),
    keyed by the spec file's path, its content hash (the spec, the ONNX file and its external
    data) and the checking code's file (its size and mtime).

    Why: the check loads the graph with ``onnx``, which imports numpy: 0.06-0.2 s of every
    ``law run`` (a no-op rerun of the quick start is 0.5 s); a file checked once need not be
    checked again until it or the check changes. Beside law's index, not in the store: a mark
    is no result (in the store, ``mlprof store list`` counted it and ``store delete`` left it
    behind). Read by :func:`checked_before`."""
    code = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_graph.py")
    try:
        st = os.stat(code)
        stamp = f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        stamp = "?"
    key = hashlib.sha256("\0".join([os.path.abspath(spec.spec_file), spec.content_hash,
                                     stamp]).encode()).hexdigest()[:32]
    home = os.environ.get("LAW_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                      "mlprof")
    return os.path.join(home, "mlprof-checked", key)


def checked_before(spec: ModelSpec) -> bool:
    """Whether ``spec`` (this content, this checking code) passed the up-front check before
    (:func:`checked_marker`): then ``onnx`` need not be imported to check it."""
    return spec.model_kind == "onnx" and os.path.isfile(checked_marker(spec))
