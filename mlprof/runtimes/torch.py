"""PyTorch runtimes: eager (``torch``) and ``torch.compile`` with inductor (``torch-compile``).

The model comes from its script (:func:`mlprof.model.script.capture`): exactly the module the
script builds, called with inputs of the script's shapes, the batch dimension resized.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree

from mlprof.errors import MLProfError
from mlprof.model.script import capture, discover, positional_ok, select
from mlprof.model.spec import InputSpec, ModelSpec, canonical_dtype, read_model_file
from mlprof.runtimes import check_model_kind
from mlprof.runtimes.base import Compiled, OpEvent, OpProfiler, Runtime, compile_cache_enabled


@dataclass
class ResolvedTorchModel:
    """A script's model, captured: the module, its inputs and which carry the batch."""

    spec: ModelSpec
    module: Any
    inputs: list[InputSpec]
    #: every forward() argument in order: ("tensor", name) or ("const", value)
    arguments: list[tuple[str, Any]]
    #: the forward() parameter name of each argument, and whether they may go positionally
    names: list[str] = field(default_factory=list)
    positional: bool = True
    outputs: list[str] | None = None
    fixed_batch: int | None = None
    opset: int | None = None
    notes: list[str] = field(default_factory=list)


def resolve_script(model_file: str, script_args: tuple[str, ...] = (), *,
                   runtime: str | None = None) -> ResolvedTorchModel:
    """Capture the model of ``script.py::HASH`` (or the script's only model) for ``runtime``."""

    spec = read_model_file(model_file)
    if not spec.is_script:
        if runtime is not None:
            check_model_kind(runtime, spec.model_kind, spec.spec_file)
        raise MLProfError("the PyTorch runtimes measure Python model scripts (script.py or "
                          "script.py::HASH), not ONNX models", spec.spec_file, "--runtime")
    if len(spec.model_hashes) == 1:
        want = spec.model_hashes[0]
    else:
        manifest = discover(spec.file, script_args)
        want = select(manifest, spec.model_hashes, single=True)[0]["hash"]
    module, items, flags = capture(spec.file, want, script_args)
    inputs, arguments = [], []
    for (name, value), batched in zip(items, flags, strict=True):
        if isinstance(value, torch.Tensor):
            dtype = canonical_dtype(str(value.dtype).replace("torch.", ""), spec.file,
                                    f"input {name}")
            shape = tuple(value.shape[1:]) if batched else tuple(value.shape)
            inputs.append(InputSpec(name, shape, dtype, batched=batched))
            arguments.append(("tensor", name))
        else:
            arguments.append(("const", value))
    if len(spec.model_hashes) != 1:
        # the model it resolved is ``script.py::HASH``: that spec's name and content hash (the
        # compile cache's key and the records' ``content_hash``), so both share one package
        spec = read_model_file(f"{spec.spec_file}::{want}")

    resolved = ResolvedTorchModel(spec=spec, module=module, inputs=inputs, arguments=arguments,
                                  names=[n for n, _ in items],
                                  positional=positional_ok(module, [n for n, _ in items]))
    if not any(i.batched for i in inputs):
        resolved.notes.append("no input has a batch dimension: every batch size measures the "
                              "model's own shapes")
    return resolved


#: the process's inference-mode guard (see :func:`_process_inference_mode`)
_INFERENCE_MODE: list[Any] = []


def _process_inference_mode() -> Any:
    """Enter ``torch.inference_mode()`` once for the rest of this process.

    Why once: the guard restores the mode it found when it is garbage-collected, so a guard per
    session turned inference mode off again when an earlier session was dropped while a later
    one lived (interleaved rounds make a session per round and configuration): the later
    session's inputs, made in inference mode, then met autograd ("Inference tensors cannot be
    saved for backward")."""
    if not _INFERENCE_MODE:
        mode = torch.inference_mode()
        mode.__enter__()
        _INFERENCE_MODE.append(mode)
    return _INFERENCE_MODE[0]


class TorchRuntime(Runtime):
    """PyTorch eager mode under ``torch.inference_mode()``, model in eval mode.

    ``threads`` sets ``torch.set_num_threads`` (0 = PyTorch's default); inter-op threads are 1.

    Precisions: ``int8-dynamic`` is ``torch.ao.quantization.quantize_dynamic`` of the model's
    ``nn.Linear`` layers (qint8 weights, activations quantized per call; the API PyTorch
    documents for CPUs, deprecated in favour of torchao, which is not installed here);
    ``bf16`` is ``torch.autocast("cpu", dtype=torch.bfloat16)`` around each call (the context
    costs a few microseconds per call, as it would in the user's own loop). Measured on this
    AVX2 VM (8 x Linear(256, 256), batch 64, 1 thread): fp32 2.84 ms, int8-dynamic 0.96,
    bf16 12.3 (emulated without AVX-512 BF16).
    """

    # name, aliases, package and devices: from its registration in mlprof.runtimes

    model: ResolvedTorchModel

    @classmethod
    def resolve(cls, model_file: str, script_args: tuple[str, ...] = ()) -> ResolvedTorchModel:
        """The model of a script."""
        return resolve_script(model_file, script_args, runtime=cls.name)

    def __init__(self, model: ResolvedTorchModel, *, device: str = "cpu",
                 threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.callable: Callable[..., Any] | None = None
        self._mode: Any = None
        self.precision = "fp32"

    def configure(self, settings: Any) -> None:
        """The precision (see the class)."""
        self.precision = settings.precision

    def _prepare_threads(self) -> None:
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set or parallel work already started
            pass
        if self.threads > 0:
            torch.set_num_threads(int(self.threads))

    def _make_callable(self, module: Any) -> Callable[..., Any]:
        return module

    @classmethod
    def thread_context(cls) -> Any:
        """``torch.inference_mode()``: the mode :func:`_process_inference_mode` entered holds
        for the thread that entered it only; a stream's thread enters its own."""
        return torch.inference_mode()

    def load(self, batch_size: int) -> None:
        """Eval mode, thread settings, inference mode for the rest of this process."""
        self._prepare_threads()
        self.model.module.eval()
        self._mode = _process_inference_mode()
        module = self.model.module
        if self.precision == "int8-dynamic":
            import warnings

            with warnings.catch_warnings():  # its deprecation notice, once per process
                warnings.simplefilter("ignore")
                module = torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear},
                                                                dtype=torch.qint8)
            if not any("quantized" in type(m).__module__ for m in module.modules()):
                raise MLProfError("int8-dynamic quantizes nn.Linear layers, and this model "
                                  "has none", self.model.spec.file, "--precision")
        self.callable = self._make_callable(module)
        if self.precision == "bf16":
            self.callable = _autocast_bf16(self.callable)

    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """``module(*args)`` with the feed as tensors (converted once, here)."""
        assert self.callable is not None, "load() first"
        args = tuple(torch.from_numpy(np.ascontiguousarray(feed[v])) if kind == "tensor" else v
                     for kind, v in self.model.arguments)
        if self.model.positional:
            return self.callable, args
        # by keyword (e.g. GPT-2's attention_mask is not its second parameter)
        return functools.partial(self.callable, **dict(zip(self.model.names, args,
                                                           strict=True))), ()

    def op_profiler(self) -> OpProfiler:
        """``torch.profiler`` (CPU activity) around the profiled calls."""
        return _TorchProfiler()

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first call."""
        text = " ".join(str(exc).split())[:400]
        return f"the model failed at batch size {batch_size}: {type(exc).__name__}: {text}"

    def info(self) -> dict[str, Any]:
        """Threads and modes applied."""
        info: dict[str, Any] = {
            "torch_version": str(torch.__version__),
            "num_threads": torch.get_num_threads(),
            "num_interop_threads": torch.get_num_interop_threads(),
            "inference_mode": True,
            "eval_mode": True,
        }
        if self.precision == "int8-dynamic":
            info["quantization"] = {"api": "torch.ao.quantization.quantize_dynamic",
                                    "modules": "nn.Linear", "dtype": "qint8",
                                    "engine": torch.backends.quantized.engine}
        elif self.precision == "bf16":
            info["autocast"] = {"device_type": "cpu", "dtype": "bfloat16", "per_call": True}
        return info


def _autocast_bf16(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called under ``torch.autocast("cpu", dtype=torch.bfloat16)``."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fn(*args, **kwargs)
    return call


class _TorchProfiler(OpProfiler):
    """The outermost aten operators (no parent operator) with their whole CPU time: these
    never overlap, and their sum is the sum of every operator's self time."""

    def __init__(self) -> None:
        self._prof: Any = None

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self._prof = profile(activities=[ProfilerActivity.CPU])
        self._prof.__enter__()

    def stop(self, n_calls: int) -> list[OpEvent]:
        """The events without their call (torch.profiler's clock is not the calls' one): the
        profile's per-operator figures are means over the calls."""
        assert self._prof is not None, "start() first"
        self._prof.__exit__(None, None, None)
        return [(e.name, e.cpu_time_total / 1e3) for e in self._prof.events()
                if e.cpu_parent is None]


#: inductor's and AOTAutograd's cache counters (``torch._dynamo.utils.counters``) recorded for
#: each compile: a run whose compile reads ``fxgraph_cache_hit`` and no ``fxgraph_cache_miss``
#: generated and built no code
_CACHE_COUNTERS = (("inductor", "fxgraph_cache_hit"), ("inductor", "fxgraph_cache_miss"),
                   ("inductor", "fxgraph_cache_bypass"), ("aot_autograd", "autograd_cache_hit"),
                   ("aot_autograd", "autograd_cache_miss"))


def use_inductor_cache(directory: str) -> None:
    """Point inductor's on-disk caches (FX graph cache, AOTAutograd cache, the built kernels)
    at ``directory`` for the rest of this process.

    ``TORCHINDUCTOR_CACHE_DIR`` is read each time inductor needs its directory, but some
    paths derived from it are cached per process: ``clear_caches`` drops them (what torch's own
    ``temporary_cache_dir`` does), so a measurement process forked from a server that already
    compiled uses this model's directory."""
    from torch._inductor.utils import clear_caches

    os.makedirs(directory, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = directory
    torch._inductor.config.fx_graph_cache = True
    clear_caches()


#: the precisions compiled ahead of time (AOTInductor); the others use torch.compile's JIT
#: (``quantize_dynamic``'s modules and the per-call autocast context are not exported as such)
AOT_PRECISIONS = ("fp32",)


class _AOTICall:
    """The call of an AOTInductor package (``torch._C._aoti.AOTIModelPackageLoader``): the
    tensors of the call's arguments in the exported order, the package's outputs rebuilt in
    the model's output structure.

    Why not ``torch._inductor.aoti_load_package``: importing it imports Dynamo and inductor
    (1.3-2.6 s here, the whole compile stack, in a process that compiles nothing), and its
    call parses the call spec again on every call (``AOTICompiledModel``: 10.3 us a warm call
    of linear.py against 1.4 us for the loader's ``boxed_run``). The loader is set by
    :meth:`TorchCompileRuntime.compile`, after ``bind()`` handed this object out."""

    def __init__(self) -> None:
        self.loader: Any = None
        self.out_spec: Any = None
        self.keys: list[str] = []

    def attach(self, loader: Any, keys: list[str], plain: bool = False) -> None:
        """Use ``loader``; ``keys`` are the keyword arguments' names in the exported order.
        ``plain``: the calls pass tensors only, by position; with one output, the call
        becomes :class:`_AOTIPlainCall`."""
        self.loader = loader
        self.out_spec = _pytree.treespec_loads(loader.get_call_spec()[1])
        self.keys = keys
        if plain and not keys and self.out_spec.is_leaf():
            self.__class__ = _AOTIPlainCall
            self.run = loader.boxed_run

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat = [a for a in args if isinstance(a, torch.Tensor)]
        flat += [kwargs[k] for k in self.keys if isinstance(kwargs[k], torch.Tensor)]
        return _pytree.tree_unflatten(self.loader.boxed_run(flat), self.out_spec)


class _AOTIPlainCall(_AOTICall):
    """:class:`_AOTICall` for tensors in by position and one tensor out, the commonest model:
    the package's call and nothing around it. Why: the pytree rebuilding of the general call
    was a third of a warm call of linear.py (2.26-2.30 us against 1.48 us here), mlprof's
    time, not the model's."""

    run: Any

    def __call__(self, *args: Any) -> Any:
        return self.run(list(args))[0]


def aot_package_key(module: Any, args: tuple, kwargs: dict) -> str:
    """16 hex digits naming the AOTInductor package of ``module`` called with ``args`` and
    ``kwargs``: its architecture and input shapes (:func:`mlprof.model.script.model_hash`),
    its parameters' and buffers' names, shapes, dtypes and values, and the non-tensor
    arguments (which ``torch.export`` bakes into the graph).

    Why the values: the package holds the weights it was compiled with, and loading the
    module's own into it (``load_constants``) is not whole: the package of ``Linear(10, 5)``
    names ``weight`` among its constants, not ``bias``. Hashing them took 0.46 s for 256 MB
    here (under load); a script without a seed makes other weights in every process and
    compiles every time."""
    import hashlib

    from mlprof.model.script import model_hash

    h = hashlib.sha256(model_hash(module, args, kwargs).encode())
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        h.update(f"\n{name}:{tuple(t.shape)}:{t.dtype}:".encode())
        data = t.detach().contiguous()
        h.update(data.view(torch.uint8).reshape(-1).numpy() if data.numel() else b"")
    for value in [*args, *kwargs.items()]:
        h.update(f"\n{value if not isinstance(value, torch.Tensor) else 'T'!r}".encode())
    h.update(f"\nkw:{list(kwargs)}".encode())
    return h.hexdigest()[:16]


def load_aot_package(path: str) -> Any:
    """The AOTInductor package at ``path`` (its loader: the compiled code and its weights)."""
    return torch._C._aoti.AOTIModelPackageLoader(path, "model", False, 1, -1)


def build_aot_package(path: str, module: Any, args: tuple, kwargs: dict) -> None:
    """``torch.export`` of ``module`` with these inputs (static shapes), compiled and packaged by
    AOTInductor into ``path`` (written beside it, then renamed: a reader never sees half a
    package, and two processes compiling the same package both leave a whole one)."""
    import tempfile

    from torch._inductor import aoti_compile_and_package

    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=".partial-", suffix=".pt2", dir=directory)
    os.close(fd)
    try:
        exported = torch.export.export(module, args, kwargs=kwargs or None)
        aoti_compile_and_package(exported, package_path=scratch)
        os.replace(scratch, path)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


class TorchCompileRuntime(TorchRuntime):
    """Inductor's compiled code for the model, compiled once per model, torch version and
    settings and kept in the store: ahead of time (``torch.export`` + AOTInductor, a ``.pt2``
    package) for fp32, ``torch.compile(model, backend="inductor", dynamic=False)`` otherwise.

    Why ahead of time: a ``torch.compile`` process traces the model with Dynamo again in every
    new process even when inductor's caches hold every compiled graph. linear.py at batch size
    1, one process each, measured here in one session (load 0.2-8 on 2 vCPUs): torch.compile
    with inductor's cache in the store took 20.0 s (empty cache) then 6.1 s (hit), its first
    call 8.8x a warm one (0.034 ms); ``torch.compiler.save_cache_artifacts`` /
    ``load_cache_artifacts`` (the "mega-cache") 16.9 s then 4.5 s, first call 5.0x; the
    AOTInductor package is built once (44-134 s under that load) and then loaded in 8-15 ms
    (no tracing, no import of the compiler). In ``law run PlotSpeedup`` (load 8): the second
    ``--version`` compiled in 0.008 s (``hit``), its first call 0.036 ms against a warm median
    of 0.0024 ms (15x; eager torch's first call is 120-170x its warm call, ONNX Runtime's
    115-126x: the first call of a microsecond model is cold caches, not compilation). Outside
    the harness (one process each, 2026-12-01) the package's first call took 37-69 us against
    a warm 1.6-3.4 us, and a call after one on other data 6-9 us (2.5-3.6x): the package's
    own first run, which a parallel torch op, ``set_num_threads`` or ``LD_BIND_NOW=1`` before
    it does not shorten. :meth:`compile` makes that run (its check that the package runs), so
    the harness's timed first call is the package's second. A warm
    call of the package has no Dynamo guards (0.0024 ms, torch.compile's 0.034 ms; 0.0016 ms
    since :class:`_AOTIPlainCall`): what a deployment of inductor's code costs.

    Compilation happens in :meth:`compile`, on the first event's call, before the timed first
    call (the harness records its time as ``compile_s``, apart from the measurement, with
    ``compile_cache`` hit or miss). The package is
    ``<compile_cache_dir>/aoti_<key>.pt2`` (:func:`mlprof.results.layout.compile_cache_dir`:
    the model's content hash, the torch version, the precision and the threads; the key
    :func:`aot_package_key`: architecture, input shapes and dtypes, weights, non-tensor
    arguments), so
    a second run, of any ``--version``, loads it and compiles nothing. A model that
    ``torch.export`` cannot capture whole (a graph break) and the precisions outside
    :data:`AOT_PRECISIONS` use torch.compile, with inductor's caches in the same directory
    (``runtime_settings.compile.mode`` says which, and why). ``MLP_COMPILE_CACHE=0`` compiles
    from scratch in a temporary directory (``compile_cache`` ``none``).
    """

    # name and aliases: from its registration in mlprof.runtimes

    #: :meth:`compile` says which compile it does (AOTInductor, its package's load, or
    #: torch.compile)
    announces_compile = True

    def __init__(self, model: ResolvedTorchModel, *, device: str = "cpu",
                 threads: int = 1) -> None:
        super().__init__(model, device=device, threads=threads)
        self.cache_dir: str | None = None
        self.cache_refused: str | None = None
        self.work_dir: str | None = None
        self.mode = "aot"
        self.why_jit: str | None = None
        self.aot_package: str | None = None
        self._aoti: _AOTICall | None = None
        self._module: Any = None

    def op_profiler(self) -> OpProfiler:
        """Refused: inductor fuses the model into kernels that torch.profiler does not name
        as operators."""
        return Runtime.op_profiler(self)

    def cache_settings(self) -> str:
        """The settings that change the compiled code, as the cache directory's last segment
        (``fp32_threads1``)."""
        return f"{self.precision}_threads{int(self.threads)}"

    def load(self, batch_size: int) -> None:
        """As :class:`TorchRuntime`, with the compiled code in the store (or, with
        ``MLP_COMPILE_CACHE=0`` or a store's cache it must not use, in a new temporary
        directory: :func:`mlprof.results.layout.compile_cache_problem`)."""
        from mlprof.results import layout

        spec = self.model.spec
        if compile_cache_enabled():
            directory = layout.compile_cache_dir(spec.name, spec.content_hash, self.name,
                                                 self.version(), self.cache_settings())
            self.cache_refused = layout.compile_cache_problem(directory)
            if self.cache_refused is None:
                self.cache_dir = self.work_dir = directory
        if self.work_dir is None:
            import atexit
            import shutil
            import tempfile

            self.work_dir = tempfile.mkdtemp(prefix="mlprof-inductor-")
            atexit.register(shutil.rmtree, self.work_dir, True)
        if self.precision not in AOT_PRECISIONS:
            self.mode = "jit"
            self.why_jit = f"precision {self.precision} is compiled by torch.compile"
        if self.mode == "jit":
            use_inductor_cache(self.work_dir)
        super().load(batch_size)

    def _make_callable(self, module: Any) -> Callable[..., Any]:
        self._module = module
        if self.mode == "aot":
            self._aoti = _AOTICall()
            return self._aoti
        return self._jit(module)

    def _jit(self, module: Any) -> Callable[..., Any]:
        try:
            return torch.compile(module, backend="inductor", dynamic=False)
        except Exception as e:
            raise MLProfError(f"torch.compile failed: {type(e).__name__}: {e}",
                              self.model.spec.file) from None

    def compile(self, fn: Callable[..., Any], args: tuple,
                phase: Callable[[str], None] | None = None) -> Compiled:
        """Compile with the first event's call and run it once: ahead of time, the package
        loaded from the store (``hit``) or exported, compiled and kept there (``miss``); with
        torch.compile, Dynamo traces and inductor generates and builds the kernels or loads
        them from its cache (``hit`` when inductor read every graph from it). ``phase`` hears
        which of these happens: the progress line of a 17 s package build must not say
        torch.compile, nor that of a 10 ms load say compiling. Once per session
        (:meth:`Runtime.compile <mlprof.runtimes.base.Runtime.compile>`)."""
        import time

        from torch._dynamo.utils import counters

        if self.compile_record is not None:  # this session is compiled
            return self.compile_record
        t0 = time.perf_counter()
        fell_back = False  # from AOT to torch.compile (and said so)
        if self.mode == "aot":
            assert self._aoti is not None and self.work_dir is not None
            kwargs = dict(getattr(fn, "keywords", None) or {})
            key = aot_package_key(self._module, args, kwargs)
            self.aot_package = os.path.join(self.work_dir, f"aoti_{key}.pt2")
            hit = os.path.exists(self.aot_package)
            if phase is not None:
                phase("loading the AOTInductor package from the store" if hit else
                      "compiling with torch.export + AOTInductor" +
                      (" (once per store)" if self.cache_dir is not None else ""))
            try:
                if not hit:
                    use_inductor_cache(os.path.join(self.work_dir, "inductor"))
                    build_aot_package(self.aot_package, self._module, args, kwargs)
                self._aoti.attach(load_aot_package(self.aot_package), list(kwargs),
                                  plain=all(isinstance(a, torch.Tensor) for a in args))
                fn(*args)
            except MLProfError:
                raise
            except Exception as e:  # not exportable whole: torch.compile, reason recorded
                self.mode = "jit"
                self.aot_package = None
                self.why_jit = ("torch.export failed: "
                                + " ".join(f"{type(e).__name__}: {e}".split())[:300])
                use_inductor_cache(self.work_dir)
                fell_back = True
                if phase is not None:
                    phase("compiling with torch.compile (torch.export failed)")
                jit = self._jit(self._module)
                self._aoti.loader = None
                self._aoti.__class__ = _Forward
                self._aoti.target = jit  # type: ignore[attr-defined]
            else:
                seconds = time.perf_counter() - t0
                state = "none" if self.cache_dir is None else ("hit" if hit else "miss")
                self.compile_record = Compiled(seconds, state, {"aoti_package_hit": int(hit),
                                                                "aoti_package_miss": int(not hit)})
                return self.compile_record
        if phase is not None and not fell_back:  # a precision that AOT does not take
            phase("compiling with torch.compile")
        before = {name: counters[group][name] for group, name in _CACHE_COUNTERS}
        fn(*args)
        seconds = time.perf_counter() - t0
        delta = {name: counters[group][name] - before[name] for group, name in _CACHE_COUNTERS}
        if self.cache_dir is None:
            state = "none"
        elif delta["fxgraph_cache_miss"] or delta["fxgraph_cache_bypass"]:
            state = "miss"
        else:
            state = "hit"
        self.compile_record = Compiled(seconds, state, delta)
        return self.compile_record

    def explain_failure(self, exc: BaseException, batch_size: int) -> str:
        """A message for a failed first call (which is where compilation happens)."""
        text = " ".join(str(exc).split())[:400]
        what = "AOTInductor" if self.mode == "aot" else "torch.compile (inductor)"
        return f"{what} failed at batch size {batch_size}: {type(exc).__name__}: {text}"

    def info(self) -> dict[str, Any]:
        """Threads, modes and compile settings, with the cache and its counters."""
        compile_info: dict[str, Any] = {
            "backend": "inductor", "dynamic": False, "compile_time_is": "compile_s",
            # ", bare call": the package's call alone (_AOTIPlainCall), 0.0016 ms a warm call of
            # linear.py where the general call took 0.0024 ms: named, so that the step in a
            # history is an event (mlprof.results.identity.EVENT_FIELDS)
            "mode": ("aot (torch.export + AOTInductor package"
                     + (", bare call)" if isinstance(self._aoti, _AOTIPlainCall) else ")")
                     if self.mode == "aot" else "jit (torch.compile)"),
            "cache_dir": self.cache_dir, "cache_refused": self.cache_refused}
        if self.aot_package is not None:
            compile_info["package"] = self.aot_package
        if self.why_jit is not None:
            compile_info["jit_because"] = self.why_jit
        if self.compile_record is not None:
            compile_info.update(cache=self.compile_record.cache,
                                counters=self.compile_record.counters)
        return {**super().info(), "compile": compile_info}


class _Forward(_AOTICall):
    """What a handed-out :class:`_AOTICall` becomes when the model falls back to torch.compile:
    a call of the compiled module (``target``)."""

    target: Any

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.target(*args, **kwargs)
