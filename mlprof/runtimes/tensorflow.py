"""TensorFlow: MLProf's ``inference_engine: tf`` models (a frozen graph ``.pb`` or a SavedModel).

The model runs in a ``tf.compat.v1.Session`` (graph mode) and the timed call is the session's
``make_callable(fetches, feed_list)``: one C++ ``Session::Run`` behind the thinnest Python
layer TensorFlow documents, run in the calling thread (``RunOptions(inter_op_thread_pool=-1)``,
see :data:`RUN_IN_CALLER`). Measured on the 10x128 example DNN (TF 2.21, 1 thread, batch 1):
``make_callable`` 0.07 ms, ``session.run`` 0.075 ms, an XLA-compiled concrete function 0.07 ms
(plus 0.02 ms to get numpy outputs), a SavedModel signature 0.27 ms, a ``wrap_function``-pruned
frozen graph 0.49 ms; ONNX Runtime's ``session.run`` 0.014 ms. What remains above ONNX Runtime
is mostly TensorFlow's per-call Python and session overhead, which CMSSW's C++ calls do not pay.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mlprof.errors import MLProfError
from mlprof.model import read_model_file
from mlprof.model.spec import HasInputs, InputSpec, ModelSpec, canonical_dtype
from mlprof.runtimes.base import Compiled, Runtime, compile_cache_enabled
from mlprof.runtimes.batching import rule_for

try:
    import tensorflow as tf
except ImportError:  # the optional extra is not installed: one clear line
    raise MLProfError("the tensorflow runtime needs TensorFlow: pip install -e '.[tf]' (or "
                      "source setup.sh with the default MLP_EXTRAS)", field="--runtime") from None

#: the call path, recorded in the provenance
CALL = ("tf.compat.v1.Session.make_callable(fetches, feed_list, accept_options=True) called "
        "with RunOptions(inter_op_thread_pool=-1)")
#: ``RunOptions.inter_op_thread_pool``: -1 runs ``Session::Run`` in the calling thread, as
#: CMSSW's TensorFlow interface does by default (its ``NoThreadPool``). Handing each call to
#: an inter-op pool thread instead cost a context switch per call whose price depended on
#: whether the other core was asleep: 0.07 or 0.12 ms at batch size 1 from one process to the
#: next, against a steady 0.063 ms in the calling thread.
RUN_IN_CALLER = -1


@dataclass
class TFTensor:
    """A graph tensor: its name in the graph (``input:0``), dtype and dims (None: unknown)."""

    name: str
    dtype: str
    dims: list[int | None] | None


@dataclass
class ResolvedTFModel(HasInputs):
    """A TF model spec checked against its graph or SavedModel signature."""

    spec: ModelSpec
    inputs: list[InputSpec]
    outputs: list[str]
    #: graph tensor names, in the order of ``inputs`` and ``outputs``
    input_tensors: list[str]
    output_tensors: list[str]
    graph_def: Any = None            # a frozen graph's GraphDef
    tags: list[str] = field(default_factory=list)   # a SavedModel's meta graph tags
    fixed_batch: int | None = None
    opset: int | None = None
    notes: list[str] = field(default_factory=list)


def _tensor_name(name: str) -> str:
    return name if ":" in name else f"{name}:0"


def _dims(shape_proto) -> list[int | None] | None:
    if shape_proto.unknown_rank:
        return None
    return [d.size if d.size >= 0 else None for d in shape_proto.dim]


def _dtype(enum: int, where: str) -> str:
    name = tf.dtypes.as_dtype(enum).name
    return canonical_dtype(name, where)


def _frozen_graph(spec: ModelSpec) -> tuple[Any, dict[str, TFTensor], list[str]]:
    """The GraphDef, its placeholders and its sink tensors (outputs nobody consumes)."""
    gd = tf.compat.v1.GraphDef()
    try:
        with open(spec.file, "rb") as f:
            gd.ParseFromString(f.read())
    except Exception as e:
        raise MLProfError(f"not a frozen TensorFlow graph ({type(e).__name__}: {e})",
                          spec.file) from None
    placeholders = {}
    consumed = set()
    for node in gd.node:
        for inp in node.input:
            consumed.add(inp.lstrip("^").split(":")[0])
        if node.op == "Placeholder":
            placeholders[f"{node.name}:0"] = TFTensor(
                f"{node.name}:0", _dtype(node.attr["dtype"].type, spec.file),
                _dims(node.attr["shape"].shape) if "shape" in node.attr else None)
    sinks = [f"{n.name}:0" for n in gd.node if n.name not in consumed
             and n.op not in ("Placeholder", "Const", "NoOp")]
    return gd, placeholders, sinks


def _signature(spec: ModelSpec) -> tuple[list[str], dict[str, TFTensor], dict[str, str]]:
    """A SavedModel's tags, its signature's inputs (by key) and outputs (key -> tensor)."""
    from tensorflow.core.protobuf import saved_model_pb2

    sm = saved_model_pb2.SavedModel()
    try:
        with open(os.path.join(spec.file, "saved_model.pb"), "rb") as f:
            sm.ParseFromString(f.read())
    except Exception as e:
        raise MLProfError(f"not a valid SavedModel ({type(e).__name__}: {e})",
                          spec.file) from None
    for mg in sm.meta_graphs:
        if spec.serving_key in mg.signature_def:
            sig = mg.signature_def[spec.serving_key]
            inputs = {k: TFTensor(v.name, _dtype(v.dtype, spec.file), _dims(v.tensor_shape))
                      for k, v in sig.inputs.items()}
            outputs = {k: v.name for k, v in sig.outputs.items()}
            return list(mg.meta_info_def.tags), inputs, outputs
    keys = sorted({k for mg in sm.meta_graphs for k in mg.signature_def})
    raise MLProfError(f"serving_key {spec.serving_key!r} is not a signature of the SavedModel; "
                      f"signatures: {', '.join(keys) or '(none)'}", spec.spec_file,
                      "model.serving_key")


def resolve_tf(spec: ModelSpec) -> ResolvedTFModel:
    """Check a ``tf``/``tfaot`` spec against its frozen graph or SavedModel signature.

    YAML input names may be node names (``input``) or tensor names (``input:0``); for a
    SavedModel, signature keys or tensor names. A name that is not there is an error naming
    the graph's actual inputs.
    """
    where = spec.spec_file
    tags: list[str] = []
    gd = None
    if spec.is_saved_model:
        tags, sig_in, sig_out = _signature(spec)
        graph_inputs = {k: t for k, t in sig_in.items()}
        by_tensor = {t.name: k for k, t in sig_in.items()}
        outputs_avail = dict(sig_out)
        default_outputs = sorted(sig_out)
        kind = f"signature {spec.serving_key!r}"
    else:
        gd, placeholders, sinks = _frozen_graph(spec)
        graph_inputs = {k.split(":")[0]: t for k, t in placeholders.items()}
        by_tensor = {t.name: k for k, t in graph_inputs.items()}
        node_names = {n.name for n in gd.node}
        outputs_avail = None
        default_outputs = sinks
        kind = "graph"

    # inputs: the YAML's (checked), else every graph input
    given = spec.inputs
    keys = list(graph_inputs)
    chosen: list[tuple[str, InputSpec | None]]
    if given is None:
        chosen = [(k, None) for k in keys]
    else:
        chosen = []
        for i, item in enumerate(given):
            key = item.name if item.name in graph_inputs else by_tensor.get(item.name)
            if key is None and item.name.endswith(":0"):
                key = item.name[:-2] if item.name[:-2] in graph_inputs else None
            if key is None:
                raise MLProfError(f"input '{item.name}' is not in the {kind}; its inputs: "
                                  f"{', '.join(keys) or '(none)'}", where,
                                  f"model.inputs[{i}].name")
            chosen.append((key, item))
        missing = [k for k in keys if k not in {c[0] for c in chosen}]
        if missing:
            raise MLProfError(f"graph input(s) {', '.join(missing)} not listed", where,
                              "model.inputs")
    inputs, input_tensors = [], []
    for key, s in chosen:
        t = graph_inputs[key]
        fld = f"model.inputs[{given.index(s)}]" if given is not None and s is not None else None
        if t.dims is None or not t.dims:
            if s is None:
                raise MLProfError(f"input '{key}' has an unknown shape; write a model YAML "
                                  "that gives it", where)
            shape, batched = tuple(s.shape), True
        else:
            rest = t.dims[1:]
            if s is not None:
                if len(s.shape) != len(rest) or any(
                        g is not None and g != y for g, y in zip(rest, s.shape, strict=False)):
                    raise MLProfError(f"shape {list(s.shape)} contradicts the {kind}: input "
                                      f"'{key}' has dims {t.dims}", where, f"{fld}.shape")
                shape = tuple(s.shape)
            else:
                known = [d for d in rest if d is not None]
                if len(known) != len(rest):
                    raise MLProfError(f"input '{key}' has dims {t.dims}; write a model YAML "
                                      "that gives its shape", where)
                shape = tuple(int(d) for d in known)
            batched = True
        if s is not None and s.dtype and s.dtype != t.dtype:
            raise MLProfError(f"dtype {s.dtype} contradicts the {kind}: input '{key}' is "
                              f"{t.dtype}", where, f"{fld}.dtype")
        inputs.append(InputSpec(key, shape, t.dtype, batched=batched))
        input_tensors.append(t.name)

    # outputs: the YAML's (checked), else every signature output / graph sink
    names = spec.outputs or default_outputs
    output_tensors = []
    for i, name in enumerate(names):
        if outputs_avail is not None:
            tensor = outputs_avail.get(name) or (name if name in outputs_avail.values()
                                                 else None)
        else:
            tensor = _tensor_name(name) if name.split(":")[0] in node_names else None
        if tensor is None:
            avail = sorted(outputs_avail) if outputs_avail is not None else sinks
            raise MLProfError(f"output '{name}' is not in the {kind}; its outputs: "
                              f"{', '.join(avail) or '(none)'}", where,
                              f"model.outputs[{i}].name")
        output_tensors.append(tensor)
    return ResolvedTFModel(spec=spec, inputs=inputs, outputs=list(names),
                           input_tensors=input_tensors, output_tensors=output_tensors,
                           graph_def=gd, tags=tags)


#: TensorFlow feeds a numpy array without copying it only when its data is aligned to
#: EIGEN_MAX_ALIGN_BYTES (64); numpy aligns to 16, so whether a feed is copied on every call
#: depended on where the allocator put it (measured: 0.07 vs 0.12 ms per call at batch 1, from
#: one process to the next). Inputs are aligned once, beforehand.
ALIGN = 64


def aligned(array: np.ndarray, align: int = ALIGN) -> np.ndarray:
    """``array``, or a copy of it whose data starts on an ``align``-byte boundary."""
    array = np.ascontiguousarray(array)
    if array.ctypes.data % align == 0:
        return array
    buf = np.empty(array.nbytes + align, dtype=np.uint8)
    start = (-buf.ctypes.data) % align
    out = buf[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def build_info() -> dict[str, Any]:
    """TensorFlow's version and the build facts that change its speed."""
    info: dict[str, Any] = {"tensorflow_version": tf.__version__}
    try:
        from tensorflow.python.util import _pywrap_util_port

        info["onednn_enabled"] = bool(_pywrap_util_port.IsMklEnabled())
    except Exception:  # moved in another version
        info["onednn_enabled"] = None
    info["TF_ENABLE_ONEDNN_OPTS"] = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    build = dict(tf.sysconfig.get_build_info())
    info["build"] = {k: build[k] for k in ("is_cuda_build", "is_rocm_build") if k in build}
    return info


class _TFRuntime(Runtime):
    """What the TensorFlow runtimes share: each measures one ``inference_engine``
    (``model_kind``) and resolves its model file the same way; another kind is a one-line
    error (field ``--runtime``) saying which kind it measures (``kind_text``)."""

    model: ResolvedTFModel
    model_kind: ClassVar[str]
    kind_text: ClassVar[str]

    @classmethod
    def resolve(cls, model_file: str, script_args: tuple[str, ...] = ()) -> ResolvedTFModel:
        """Read the model file and check it against its graph or SavedModel signature."""
        spec = read_model_file(model_file)
        if spec.model_kind != cls.model_kind:
            raise MLProfError(f"{cls.name} measures {cls.kind_text} (inference_engine: "
                              f"{cls.model_kind}); this is a {spec.model_kind} model",
                              spec.spec_file, "--runtime")
        return resolve_tf(spec)


class TensorFlowRuntime(_TFRuntime):
    """A frozen graph or SavedModel in a ``tf.compat.v1.Session``, called through
    ``make_callable``.

    ``threads`` sets the session's ``intra_op_parallelism_threads`` (0: TensorFlow's default);
    ``inter_op_parallelism_threads`` is 1 (0 when threads is 0).
    """

    model_kind = "tf"
    kind_text = "TensorFlow models"

    def __init__(self, model: ResolvedTFModel, *, device: str = "cpu", threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.session: Any = None
        self._callable: Any = None

    def config(self):
        """The session's ConfigProto."""
        n = int(self.threads)
        return tf.compat.v1.ConfigProto(intra_op_parallelism_threads=n,
                                        inter_op_parallelism_threads=1 if n else 0,
                                        device_count={"GPU": 0})

    def load(self, batch_size: int) -> None:
        """Import the graph (or load the SavedModel) into a new session; prepare the call."""
        graph = tf.Graph()
        m = self.model
        try:
            with graph.as_default():
                if m.graph_def is not None:
                    tf.compat.v1.import_graph_def(m.graph_def, name="")
                    self.session = tf.compat.v1.Session(graph=graph, config=self.config())
                else:
                    self.session = tf.compat.v1.Session(graph=graph, config=self.config())
                    tf.compat.v1.saved_model.loader.load(self.session, m.tags, m.spec.file)
                feeds = [graph.get_tensor_by_name(t) for t in m.input_tensors]
                fetches = [graph.get_tensor_by_name(t) for t in m.output_tensors]
        except Exception as e:
            raise MLProfError(f"tensorflow cannot load the model: {_first_line(e)}",
                              m.spec.file) from None
        run = self.session.make_callable(fetches, feed_list=feeds, accept_options=True)
        self._callable = functools.partial(run, options=tf.compat.v1.RunOptions(
            inter_op_thread_pool=RUN_IN_CALLER))

    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """The session callable and the input arrays in its feed order (aligned, see
        :data:`ALIGN`)."""
        assert self._callable is not None, "load() first"
        return self._callable, tuple(aligned(feed[i.name]) for i in self.model.inputs)

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first inference."""
        return f"inference at batch size {batch_size} failed: {_first_line(exc)}"

    def info(self) -> dict[str, Any]:
        """Threads, the call path and TensorFlow's build facts."""
        n = int(self.threads)
        return {"call": CALL, "run_in_caller_thread": True,
                "intra_op_parallelism_threads": n,
                "inter_op_parallelism_threads": 1 if n else 0,
                "format": "saved_model" if self.model.spec.is_saved_model else "frozen_graph",
                "serving_key": self.model.spec.serving_key if self.model.spec.is_saved_model
                else None,
                "input_tensors": self.model.input_tensors,
                "output_tensors": self.model.output_tensors, **build_info()}


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc).strip() or type(exc).__name__
    return " ".join(text.split())[:500]


#: the ``TF_XLA_FLAGS`` flag naming XLA's persistent cache of compiled executables (TensorFlow's
#: ``DeviceExecutablePersistor``)
PERSIST_FLAG = "--tf_xla_persistent_cache_directory"
#: the names XLA gives its entries there: ``xla_compile_cache__<signature fingerprint>__<HLO
#: fingerprint>__XLA_CPU_JIT.pb``, one per compiled function
XLA_ENTRY = re.compile(r"^[A-Za-z0-9_.-]+__[0-9]+__[0-9]+__[A-Za-z0-9_]+\.pb$")
#: the cache directory XLA was given in this process, once it compiled (``None``: none). XLA
#: reads ``TF_XLA_FLAGS`` once, at its first compile, so a later :meth:`TfAotRuntime.load` in
#: the same process writes where the first one said, whatever it sets
_process_cache: list[str | None] = []


def xla_entries(directory: str | None) -> set[str]:
    """The names of XLA's cache entries in ``directory`` (regular files only, never a link)."""
    if directory is None:
        return set()
    try:
        with os.scandir(directory) as it:
            return {e.name for e in it if XLA_ENTRY.match(e.name)
                    and e.is_file(follow_symlinks=False)}
    except OSError:
        return set()


class TfAotRuntime(_TFRuntime):
    """MLProf's ``inference_engine: tfaot`` without CMSSW: the SavedModel's signature compiled
    with XLA (``jit_compile=True``) for each compiled batch size the batch rule uses, with a
    fixed input signature, ahead of the measurement (in :meth:`load`: its time is the session
    creation, and ``compile_ms`` per size is in the provenance, never in the samples).

    A batch size is composed as CMSSW's ``tfaot`` does (:mod:`mlprof.runtimes.batching`): the
    timed call splits the inputs, pads the last piece, calls the compiled function of each
    piece and concatenates the outputs (as numpy arrays). The YAML's ``tf_xla_flags`` and
    ``xla_flags`` are set as ``TF_XLA_FLAGS`` and ``XLA_FLAGS`` before the first compilation,
    as XLA reads them. ``threads`` sets TensorFlow's intra-op threads (XLA's CPU thread pool).

    The compiled executables are kept in the store (:func:`mlprof.results.layout.
    compile_cache_dir`, settings :meth:`cache_settings`) through XLA's own persistent cache
    (``TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=<dir>``, set in :meth:`load` before
    XLA's first compile in the process, which is when it reads the flags): XLA writes one entry
    per compiled function and, in a later process, loads it instead of compiling (it checks the
    entry's HLO against the function's). The 10x128 example DNN at batch size 1 under ``law
    run MeasureRuntime`` (TF 2.21, this 2-vCPU machine): ``compile_s`` 0.741 s compiling (XLA's
    part 641 ms), 0.124 s from the entry (88 ms); the example CNN 0.656 s, then 0.103 s. A size
    whose entry appeared during its compile was a ``miss``, the others
    ``hit`` (counters ``xla_entries_written``/``xla_entries_loaded``). XLA's key includes the
    traced function's name, which TensorFlow numbers in tracing order within the process: the
    sizes are traced in sorted order after the same load, so the same model and rule find
    their entries; another set of sizes may compile a size again (recorded as a miss).
    ``MLP_COMPILE_CACHE=0``, a cache directory that is a link or not writable, or a YAML or
    environment that names its own ``--tf_xla_persistent_cache_directory`` leave the cache
    unused by mlprof (``compile_cache`` ``none``; ``runtime_settings.compile`` says why).
    """

    model_kind = "tfaot"
    kind_text = "AOT TensorFlow models"

    def __init__(self, model: ResolvedTFModel, *, device: str = "cpu", threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.rules = ""
        self.rule: Any = None
        self.functions: dict[int, Any] = {}
        self.compile_ms: dict[int, float] = {}
        self.flags: dict[str, str] = {}
        self.threads_applied: bool | str = False
        self.cache_dir: str | None = None
        self.cache_refused: str | None = None
        self.cache_by_size: dict[int, str] = {}
        #: of ``compile_ms``: tracing the signature into a function (Python, in every process)
        #: and its first call (XLA's compile, or the load of its entry from the cache)
        self.trace_ms: dict[int, float] = {}
        self.xla_ms: dict[int, float] = {}

    def configure(self, settings: Any) -> None:
        """The batch rules (``--tfaot-batch-rules``)."""
        self.rules = getattr(settings, "tfaot_batch_rules", "") or ""

    def cache_settings(self, flags: dict[str, str]) -> str:
        """The settings that change the compiled code, as the cache directory's last segment:
        the threads, a hash of the CPU (architecture and feature flags) and, when any are set,
        a hash of the XLA flags in effect (``threads1_cpu1a2b3c4d``, then
        ``_flags5e6f7a8b``). XLA keys its entries by the function's HLO, which holds neither
        the machine nor the backend's flags (``XLA_FLAGS``): an entry compiled for AVX-512 in
        a store shared with an AVX2 machine would be loaded there (XLA only logs "This could
        lead to execution errors such as SIGILL"), and one compiled under other flags would be
        loaded as well. The batch sizes need no place here: the HLO includes the shapes."""
        import hashlib
        import platform

        from mlprof.sysinfo import cpu_flags

        text = "\n".join(f"{k}={v}" for k, v in sorted(flags.items()) if v.strip())
        cpu = f"{platform.machine()} {' '.join(sorted(cpu_flags()))}"
        key = (f"threads{int(self.threads)}_cpu"
               + hashlib.sha256(cpu.encode()).hexdigest()[:8])
        if text:
            key += "_flags" + hashlib.sha256(text.encode()).hexdigest()[:8]
        return key

    def _use_cache(self) -> None:
        """Point XLA's persistent cache at the store (see the class docstring), or record why
        not; before XLA's first compile in this process."""
        from mlprof.results import layout

        spec = self.model.spec
        given = os.environ.get("TF_XLA_FLAGS", "")
        if _process_cache:  # XLA read its flags already, in an earlier load of this process
            self.cache_dir = _process_cache[0]
            if self.cache_dir is None and compile_cache_enabled():
                self.cache_refused = ("XLA read TF_XLA_FLAGS at an earlier compile in this "
                                      "process, without a cache directory")
            return
        if not compile_cache_enabled():
            return
        if PERSIST_FLAG in given:
            self.cache_refused = (f"TF_XLA_FLAGS names its own {PERSIST_FLAG} (from the YAML "
                                  "or the environment): XLA uses it, mlprof does not count it")
            return
        directory = layout.compile_cache_dir(spec.name, spec.content_hash, self.name,
                                             self.version(), self.cache_settings(self.flags))
        self.cache_refused = layout.compile_cache_problem(directory)
        if self.cache_refused is None:
            self.cache_dir = directory
            os.environ["TF_XLA_FLAGS"] = " ".join(filter(None, [
                f"{PERSIST_FLAG}={directory}", given]))
            self.flags["TF_XLA_FLAGS"] = os.environ["TF_XLA_FLAGS"]

    def load(self, batch_size: int) -> None:
        """Compile the signature with XLA for each size of the batch rule at ``batch_size``,
        loading what the store's cache holds.

        ``TF_XLA_FLAGS`` and ``XLA_FLAGS`` are set for XLA's first compile (which is when it
        reads them, once per process) and given back their values afterwards: a process
        started later by this one (a test's ``law run``) would otherwise inherit this model's
        cache directory as if the user had named it."""
        spec = self.model.spec
        comp = spec.compilation or {}
        self.rule = rule_for(batch_size, self.rules, comp["batch_sizes"])
        saved = {env: os.environ.get(env) for env in ("TF_XLA_FLAGS", "XLA_FLAGS")}
        try:
            for env, key in (("TF_XLA_FLAGS", "tf_xla_flags"), ("XLA_FLAGS", "xla_flags")):
                flags = list(comp.get(key) or [])
                if flags:
                    os.environ[env] = " ".join(filter(None, [os.environ.get(env, ""),
                                                             *flags]))
                self.flags[env] = os.environ.get(env, "")
            self._use_cache()
            self._compile_all()
        finally:
            for env, value in saved.items():
                if value is None:
                    os.environ.pop(env, None)
                else:
                    os.environ[env] = value

    def _compile_all(self) -> None:
        """Load the SavedModel and compile (or load from the cache) each size of the rule."""
        import time

        spec = self.model.spec
        n = int(self.threads)
        try:
            tf.config.threading.set_intra_op_parallelism_threads(n)
            tf.config.threading.set_inter_op_parallelism_threads(1 if n else 0)
            self.threads_applied = True
        except RuntimeError as e:  # TensorFlow ran something already in this process
            self.threads_applied = f"not applied: {_first_line(e)}"
        if not _process_cache:  # XLA reads its flags from here on
            _process_cache.append(self.cache_dir)
        try:
            loaded = tf.saved_model.load(spec.file)
            signature = loaded.signatures[spec.serving_key]
        except Exception as e:
            raise MLProfError(f"tensorflow cannot load the SavedModel: {_first_line(e)}",
                              spec.file) from None
        self._loaded = loaded  # keeps the variables alive
        keys = [i.name for i in self.model.inputs]

        def call(*xs):
            return signature(**dict(zip(keys, xs, strict=True)))

        for size in sorted(set(self.rule.sizes)):
            specs = [tf.TensorSpec((size, *i.shape), tf.as_dtype(i.dtype), name=i.name)
                     for i in self.model.inputs]
            before = xla_entries(self.cache_dir)
            t0 = time.perf_counter()
            try:
                cf = tf.function(call, jit_compile=True).get_concrete_function(*specs)
                t1 = time.perf_counter()
                cf(*[np.zeros(s.shape, s.dtype.as_numpy_dtype) for s in specs])
            except Exception as e:
                hint = (f" (with the store's compile cache {self.cache_dir}: removing it "
                        "compiles afresh)" if self.cache_dir else "")
                raise MLProfError(f"XLA cannot compile the model for batch size {size}: "
                                  f"{_first_line(e)}{hint}", spec.file) from None
            t2 = time.perf_counter()
            self.compile_ms[size] = (t2 - t0) * 1e3
            self.trace_ms[size] = (t1 - t0) * 1e3
            self.xla_ms[size] = (t2 - t1) * 1e3
            self.functions[size] = cf
            if self.cache_dir is not None:
                self.cache_by_size[size] = ("miss" if xla_entries(self.cache_dir) - before
                                            else "hit")
        # recorded apart (compile_s): tracing, compiling (or loading the entry) and the first
        # call of each size
        states = list(self.cache_by_size.values())
        counters = {"xla_entries_loaded": states.count("hit"),
                    "xla_entries_written": states.count("miss")}
        state = "none" if self.cache_dir is None else ("miss" if "miss" in states else "hit")
        self.compile_record = Compiled(sum(self.compile_ms.values()) / 1e3, state,
                                       counters if self.cache_dir is not None else {})

    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """One call over the whole batch: split, pad, the compiled calls, concatenate."""
        assert self.rule is not None, "load() first"
        arrays = [aligned(feed[i.name]) for i in self.model.inputs]
        keys = list(self.model.outputs)
        fns = self.functions
        pieces = self.rule.pieces()
        if len(pieces) == 1 and pieces[0][1] == pieces[0][2]:
            # a compiled size: the inputs become tensors beforehand, as CMSSW hands the
            # compiled function its buffers
            fn, tensors = fns[pieces[0][1]], [tf.constant(a) for a in arrays]

            def whole():
                out = fn(*tensors)
                return [out[k].numpy() for k in keys]

            return whole, ()

        pads = {}
        for _, size, real in pieces:
            if real < size:
                pads[size - real] = [np.zeros((size - real, *a.shape[1:]), a.dtype)
                                     for a in arrays]

        def composed():
            parts = []
            for start, size, real in pieces:
                xs = [a[start:start + real] for a in arrays]
                if real < size:
                    xs = [np.concatenate([x, p]) for x, p in zip(xs, pads[size - real],
                                                                 strict=True)]
                out = fns[size](*xs)
                parts.append([out[k].numpy()[:real] for k in keys])
            return [np.concatenate([p[j] for p in parts]) for j in range(len(keys))]

        return composed, ()

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first inference."""
        return f"inference at batch size {batch_size} failed: {_first_line(exc)}"

    def info(self) -> dict[str, Any]:
        """The batch rule, compile times, XLA flags, threads and TensorFlow's build facts."""
        n = int(self.threads)
        rule = self.rule
        return {"call": "XLA-compiled (jit_compile=True) concrete function of the signature, "
                        "one per compiled batch size; split/pad/concatenate in the timed call",
                "batch_rule": rule.text() if rule else None,
                "batch_rule_padding": rule.last_padding if rule else None,
                "batch_rules_given": self.rules or None,
                "compiled_batch_sizes": (self.model.spec.compilation or {}).get("batch_sizes"),
                "compile_ms": {str(k): v for k, v in self.compile_ms.items()},
                "compile": {"compile_time_is": "compile_s", "cache_dir": self.cache_dir,
                            "cache_refused": self.cache_refused,
                            "cache_by_size": {str(k): v for k, v in self.cache_by_size.items()},
                            "trace_ms": {str(k): v for k, v in self.trace_ms.items()},
                            "xla_ms": {str(k): v for k, v in self.xla_ms.items()},
                            "counters": (self.compile_record.counters
                                         if self.compile_record else {})},
                "xla_flags": self.flags, "serving_key": self.model.spec.serving_key,
                "intra_op_parallelism_threads": n,
                "inter_op_parallelism_threads": 1 if n else 0,
                "threads_applied": self.threads_applied, **build_info()}
