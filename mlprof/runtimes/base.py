"""The one small interface every runtime implements."""

from __future__ import annotations

import contextlib
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mlprof.errors import MLProfError
from mlprof.runtimes import COMPILE_CACHE_STATES, registration_of
from mlprof.util import dist_version

if TYPE_CHECKING:
    from mlprof.runtimes import RuntimeInfo


#: the pseudo operator type of the time inside a runtime's own call that no operator accounts
#: for (its executor: scheduling, allocation, the profiler's own bookkeeping): reported by a
#: profiler that records the call itself (ONNX Runtime's ``model_run``), so that a profile adds
#: up to the call where per-call costs are as large as the operators (the example CNN at batch
#: size 1: 30 of 63 µs profiled)
RUNTIME_OVERHEAD = "(runtime overhead)"

#: one operator run of a profile: ``(operator type, milliseconds)``, or with the index of the
#: profiled call it belongs to (0 to n_calls - 1), from which the per-call median of each
#: operator type is computed (one stalled call moves a mean, never a median)
OpEvent = tuple[str, float] | tuple[str, float, int]


def import_openvino() -> Any:
    """``import openvino``, without its telemetry: ``openvino_telemetry`` is marked absent in
    ``sys.modules`` first (unless this process has it already), so OpenVINO takes the stub it
    ships for when that package is not installed (``openvino.tools.ovc.telemetry_stub``).

    Why: OpenVINO's telemetry is on unless the user opted out (a file in ``~/intel``), and
    every ``import openvino`` sends an event (the ``usage_count`` it sent here was 541) from a
    thread it starts then, in each measurement process: network traffic at run time, a thread
    that runs while the model loads and is then left behind (a process with it cannot be kept
    for the next point: :func:`mlprof.measure.isolate._stays`), and a counter rewritten in the
    user's ``~/intel/stats`` at every point. The user's own choice in ``~/intel`` is left as it
    is; only mlprof's processes send nothing. An ``ImportError`` of OpenVINO itself is the
    caller's to answer."""
    import sys

    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    import openvino

    return openvino


def compile_cache_enabled() -> bool:
    """Whether compiling runtimes keep their compiled artifacts in the store
    (:func:`mlprof.results.layout.compile_cache_dir`): ``MLP_COMPILE_CACHE`` is not ``0``."""
    return os.environ.get("MLP_COMPILE_CACHE", "1").strip() != "0"


@dataclass(frozen=True)
class Compiled:
    """What compiling a model took, reported by a compiling runtime (:meth:`Runtime.compile`)
    and recorded apart from the measurement (``compile_s`` and ``compile_cache`` in the
    branch record, the counters in ``runtime_settings.compile``).

    Why apart: torch.compile's first call of linear.py took 18.2 s here with an empty inductor
    cache, against 0.04 ms for a warm call; recorded as the first call, it hid whether a
    second run compiled again."""

    #: seconds spent compiling (or loading the compiled artifact from the cache)
    seconds: float
    #: one of :data:`COMPILE_CACHE_STATES`
    cache: str
    #: the compiler's own cache counters for this compile (e.g. inductor's
    #: ``fxgraph_cache_hit``/``fxgraph_cache_miss``): what shows that nothing was compiled
    counters: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cache not in COMPILE_CACHE_STATES:
            raise ValueError(f"compile cache state {self.cache!r} is not one of "
                             f"{COMPILE_CACHE_STATES}")


def compiled_fields(compiles: Sequence[Compiled | None]) -> dict[str, Any]:
    """``compile_s`` (the sessions' compiles, summed) and ``compile_cache`` (``miss`` when one
    compiled afresh, ``hit`` when all came from the store's cache, ``none`` without a cache)
    of the sessions' :class:`mlprof.runtimes.base.Compiled` (None: a runtime that does not
    compile); empty for runtimes that do not. What a record of several sessions (a load point,
    an interleaved configuration) keeps apart from its timing, as a sweep's branch does."""
    done = [c for c in compiles if c is not None]
    if not done:
        return {}
    states = {c.cache for c in done}
    cache = "miss" if "miss" in states else ("hit" if states == {"hit"} else "none")
    return {"compile_s": sum(c.seconds for c in done), "compile_cache": cache}


class OpProfiler(ABC):
    """A runtime's own per-operator profiler, driven by :func:`mlprof.measure.profile.profile`:
    made by :meth:`Runtime.op_profiler` before ``load()``, :meth:`start` after the warm-up,
    :meth:`stop` after the profiled calls."""

    def start(self) -> None:
        """Begin recording (a profiler that records from session creation on does nothing)."""
        return None

    @abstractmethod
    def stop(self, n_calls: int) -> list[OpEvent]:
        """Stop; ``(operator type, milliseconds)`` of every operator run by the last
        ``n_calls`` calls, outermost operators only (their times never overlap), plus, where
        the profiler records the runtime's call itself, one :data:`RUNTIME_OVERHEAD` event per
        call: the call's time outside its operators. A profiler that knows which call an
        event belongs to adds its index (:data:`OpEvent`)."""


class Runtime(ABC):
    """An inference runtime, loaded with one model for one batch size.

    Life cycle, driven by :func:`mlprof.measure.harness.measure`::

        rt = RuntimeClass(resolved_model, device="cpu", threads=1)
        rt.load(batch_size)              # build the session (timed as session creation)
        fn, args = rt.bind(feed)         # prepare one call; nothing is copied per call
        fn(*args)                        # one timed call = one inference
        rt.info()                        # provenance: library settings actually applied

    ``bind`` returns a callable and its arguments so that the timed loop adds nothing to the
    runtime's own call (no wrapper function, no dict building).
    """

    # Set from the class's registration in :mod:`mlprof.runtimes` (found by its
    # ``module:Class`` target when the class is defined), so that these facts live in one place.
    #: the registration
    runtime_info: ClassVar[RuntimeInfo]
    #: canonical name, used in output paths
    name: ClassVar[str]
    #: other names accepted on the command line
    aliases: ClassVar[tuple[str, ...]] = ()
    #: the distribution whose version is recorded (and part of the output path)
    package: ClassVar[str]
    devices: ClassVar[tuple[str, ...]] = ("cpu",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)

        info = registration_of(f"{cls.__module__}:{cls.__qualname__}")
        if info is None:  # an abstract intermediate class or a test double: nothing to read
            return
        for attr in ("name", "aliases", "package", "devices"):
            if attr in vars(cls):
                raise TypeError(f"{cls.__qualname__}.{attr} is set by its registration in "
                                "mlprof.runtimes; do not set it in the class")
        cls.runtime_info = info
        cls.name, cls.aliases, cls.package, cls.devices = (info.name, info.aliases,
                                                           info.package, info.devices)

    def __init__(self, model: Any, *, device: str = "cpu", threads: int = 1) -> None:
        self.model = model
        self.device = device
        self.threads = threads

    @classmethod
    @abstractmethod
    def resolve(cls, model_file: str, script_args: tuple[str, ...] = ()) -> Any:
        """Load what the runtime needs to know about ``model_file`` (inputs, batch, ...).

        The result has ``spec`` (a :class:`mlprof.model.ModelSpec`), ``inputs`` (a list of
        :class:`mlprof.model.InputSpec`), ``outputs``, ``fixed_batch``, ``opset`` and ``notes``.
        """

    @classmethod
    def version(cls) -> str:
        """The installed version of the runtime library (without importing it)."""
        return dist_version(cls.package) or "unknown"

    def configure(self, settings: Any) -> None:
        """Read runtime-specific measurement settings (a
        :class:`~mlprof.measure.settings.MeasureSettings`) before :meth:`load`; most runtimes
        need none beyond device and threads."""
        return None

    @abstractmethod
    def load(self, batch_size: int) -> None:
        """Create the inference session for ``batch_size``."""

    @abstractmethod
    def bind(self, feed: dict[str, np.ndarray]) -> tuple[Callable[..., Any], tuple]:
        """Return ``(fn, args)`` such that ``fn(*args)`` runs one inference on ``feed``."""

    def compile(self, fn: Callable[..., Any], args: tuple,
                phase: Callable[[str], None] | None = None) -> Compiled | None:
        """After :meth:`bind`, before the timed first call: compile the model for the call
        ``fn(*args)`` (the first event's), so that the first call times a compiled model.
        ``phase`` (the progress reporter's) is told what the compile does once the runtime
        knows it (building a package, or loading it from the store's cache).

        Once per session: a later call returns the first's record and compiles nothing (a
        shared session serves several calls, each of which must be ready). A runtime that
        compiles in :meth:`load` (OpenVINO's ``compile_model``) returns what that took
        (:attr:`compile_record`); one that does not compile returns None (the default)."""
        return self.compile_record

    #: set by a runtime that compiles in :meth:`load` (see :meth:`compile`)
    compile_record: Compiled | None = None
    #: whether :meth:`compile` says itself, through ``phase``, what it does (else the harness
    #: says ``compiling with <compiler>``)
    announces_compile: ClassVar[bool] = False

    def info(self) -> dict[str, Any]:
        """Settings the runtime actually applied, for the provenance record."""
        return {}

    @classmethod
    def thread_context(cls) -> AbstractContextManager[Any]:
        """What a thread other than the one that loaded the session enters before calling it
        (the load scenarios' streams and server workers): a mode the runtime set for its
        thread only (PyTorch's inference mode is per thread)."""
        return contextlib.nullcontext()

    def op_profiler(self) -> OpProfiler:
        """Before :meth:`load`: the runtime's own per-operator profiler (runtimes registered
        with a ``profiler`` implement it)."""

        raise MLProfError(f"runtime {self.name} has no per-operator profiler", field="--runtime")
