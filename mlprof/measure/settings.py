"""The measurement settings, each defined once (no law imports).

Each field of :class:`MeasureSettings` carries everything known about one setting: its name,
type, default, bounds, command-line option and help text (in the field's ``metadata``).
:data:`SETTINGS` reads them into :class:`Setting` objects, and everyone else uses those:

- the harness: :meth:`MeasureSettings.validated`;
- the law tasks' parameters: :func:`cli_settings` (name, type, default, help);
- the ``mlprof`` command's options (:mod:`mlprof.cli`) and the Python API (:mod:`mlprof.api`);
- experiment files (:mod:`mlprof.experiments`).

:func:`check_setting` is the one check of a value, :func:`check_batch_size` the one check of a
batch size; both raise :class:`MLProfError` naming the command-line option (``--n-calls``).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, get_type_hints

from mlprof.errors import MLProfError
from mlprof.ingest import ascii_float, ascii_int, printable
from mlprof.runtimes import DEFAULT_RUNTIME, canonical_runtime, check_device
from mlprof.runtimes.batching import MAX_BATCH_SIZE, normalized_rules
from mlprof.runtimes.precisions import DEFAULT_PRECISION, listed
from mlprof.util import did_you_mean

# Bounds of the settings that are multiplied into memory or time (issue 22): a value beyond
# them is a typo or an attack, and is refused up front, in one line, before any branch runs
# (``--n-calls 99999999999`` failed in every branch with MemoryError, ``--min-duration 1e308``
# passed and failed every branch). Each bound is far above what a real use needs:

#: timed calls per event and round: the harness keeps one timing per call of a round in memory
#: (8 bytes a slot) and writes each to the samples CSV (~25 bytes a row), so 10**6 calls are
#: ~8 MB in memory and ~25 MB on disk per round; real uses: 100 (default), 2000 (benchmarks)
MAX_N_CALLS = 1_000_000
#: events: distinct inputs, all held in memory for the whole measurement (batch size x input
#: size each); real uses: 1-4
MAX_N_EVENTS = 1000
#: calls per round (n_calls x n_events): the same memory as MAX_N_CALLS, whichever multiplies it
MAX_CALLS_PER_ROUND = 1_000_000
#: untimed warm-up calls: time only (10**6 calls of 1 ms are 17 minutes per batch size);
#: real uses: 10 (default), 100000 (a test of the profiler)
MAX_WARMUP = 1_000_000
#: seconds of measuring per batch size: samples accumulate for that long, and at the fastest
#: calls measured here (~10 us) one minute is ~6 million samples (~50 MB in memory, ~150 MB of
#: samples CSV) per batch size; real uses: 0.5 s (default), 1 s
MAX_MIN_DURATION = 60.0
#: interleaved rounds when none are given (API ``interleave=True``, ``--interleave`` without a
#: number; :mod:`mlprof.measure.interleave`). Here, not there: ``law run``'s parser reads it
#: for every task with ``--interleave``, and importing the interleaving (numpy, the harness,
#: the cause record) cost a no-op rerun of the quick start 0.08 s
DEFAULT_ROUNDS = 20


def _runtime(value: str) -> str:
    return canonical_runtime(value)


def _precision(value: str) -> str:
    from mlprof.runtimes import check_precision

    return check_precision(value)


def _device(value: str) -> str:
    # which devices a runtime supports is checked with the runtime (MeasureSettings.validated)
    return value.strip().lower()


#: the generated kinds of input data (:mod:`mlprof.measure.inputs` makes them) and the file types
INPUT_KINDS = ("random", "incremental", "zeros", "ones")
INPUT_FILE_TYPES = (".npz", ".npy")


def check_input_data(value: str) -> str:
    """Validate an ``--input-data`` value; files are returned as absolute paths."""
    v = str(value).strip()
    if v.lower() in INPUT_KINDS:
        return v.lower()
    path = os.path.abspath(os.path.expandvars(os.path.expanduser(v)))
    if os.path.splitext(path)[1].lower() not in INPUT_FILE_TYPES:
        raise MLProfError(f"expected one of {', '.join(INPUT_KINDS)} or a .npz/.npy file, got "
                          f"{value!r}", field="--input-data")
    if not os.path.isfile(path):
        raise MLProfError("input data file not found", path, "--input-data")
    return path


def _input_data(value: str) -> str:
    return check_input_data(value)


def _batch_rules(value: str) -> str:
    return normalized_rules(value)


#: ``MLP_QUICK=1`` shortens the *default* measurement (for trying commands out, and for the test
#: that runs every example of the docs): fewer calls and warm-up calls, no minimum duration. The
#: values reach the output path like any other (``calls10_..._warmup1_mindur0``), so a quick result
#: is never taken for a default one; options given explicitly (``--n-calls 100``) still win.
QUICK_ENV = "MLP_QUICK"
QUICK_DEFAULTS: dict[str, Any] = {"n_calls": 10, "warmup": 1, "min_duration": 0.0}
#: the values of ``$MLP_QUICK`` that turn it on, and those that leave it off (any case)
QUICK_ON = ("1", "true", "yes", "on")
QUICK_OFF = ("", "0", "false", "no", "off")


def env_switch(name: str, on: tuple[str, ...], off: tuple[str, ...], on_does: str,
               off_does: str) -> bool:
    """Whether the environment variable ``name`` is on: a value of ``on`` (any case) is, one of
    ``off`` or empty is not, anything else is a one-line error naming ``name``, because a guess
    either way would be wrong for someone (``MLP_NO_LOCK=false`` used to turn the lock off,
    ``MLP_QUICK=off`` quick mode on). ``on_does``/``off_does`` say what the values do in it.
    :func:`quick` and :func:`mlprof.measure.lock.lock_disabled` read their switches here."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if value in off:
        return False
    if value in on:
        return True
    raise MLProfError(f"{printable(raw)!r} is not a value it takes: {', '.join(on)} {on_does}; "
                      f"{', '.join(v for v in off if v)} or empty {off_does}", field=name)


#: ``$MLP_FRESH_PROCESS``: its values that ask for a new process per measurement, and those
#: that leave it to the runtime (any other value is a one-line error)
FRESH_ON = ("1", "true", "yes", "on")
FRESH_OFF = ("", "0", "false", "no", "off")


def fresh_process() -> bool:
    """Whether ``$MLP_FRESH_PROCESS`` asks for a new measurement process for every measurement
    (a one-line error for a value it does not take)."""
    return env_switch("MLP_FRESH_PROCESS", FRESH_ON, FRESH_OFF,
                      "measure every point in a new process", "let the runtime decide")


def store_checked(settings: Any, values: Mapping[str, Any]) -> None:
    """Put the checked, normal forms ``values`` (``"1,2"`` -> ``(1, 2)``) on the frozen settings
    dataclass ``settings``: the load and generation settings check themselves in
    ``__post_init__``, so an object that exists is valid, and only ``object.__setattr__`` can
    store on a frozen instance."""
    for name, value in values.items():
        object.__setattr__(settings, name, value)


def one_per_point(values: tuple[Any, ...], what: str, flag: str) -> Any:
    """The one value of a swept list in a branch's settings (``points()`` gives each branch one
    of each; the whole sweep holds several): any other count is a one-line error "one ``what``,
    got N" naming ``flag``."""
    if len(values) != 1:
        raise MLProfError(f"one {what}, got {len(values)}", field=flag)
    return values[0]


def quick() -> bool:
    """Whether ``$MLP_QUICK`` asks for short default measurements: ``1``, ``true``, ``yes`` or
    ``on`` do; ``0``, ``false``, ``no``, ``off`` or empty do not; anything else is a one-line
    error (``off`` used to turn it on). The measurement tasks and
    :meth:`MeasureSettings.validated` call it, so a bad value is refused before anything runs."""
    return env_switch(QUICK_ENV, QUICK_ON, QUICK_OFF, "shorten the default measurements",
                      "do not")


def _default(name: str, value: Any) -> Any:
    """The default of setting ``name``: ``value``, or its :data:`QUICK_DEFAULTS` one. Read when
    this module is imported, where an error would be a traceback: a value :func:`quick` refuses
    counts as off here, and is refused when a measurement is asked for."""
    try:
        on = quick()
    except MLProfError:
        on = False
    return QUICK_DEFAULTS[name] if on and name in QUICK_DEFAULTS else value


def _setting(default: Any = MISSING, *, help: str, **spec: Any) -> Any:
    """A :class:`MeasureSettings` field; ``spec`` holds the other :class:`Setting` fields."""
    return field(default=default, metadata={"help": help, **spec})


@dataclass(frozen=True)
class MeasureSettings:
    """Everything that defines one measurement apart from the model."""

    batch_size: int = _setting(
        help="events per call (the inputs' first dimension)", flag="--batch-sizes", min=1,
        max=MAX_BATCH_SIZE, subject="batch sizes")
    runtime: str = _setting(
        DEFAULT_RUNTIME, help="inference runtime (aliases work: ort)", flag="--runtime",
        validator=_runtime)
    device: str = _setting("cpu", help="device to run on", flag="--device", validator=_device)
    threads: int = _setting(
        1, help="intra-op threads (0: the runtime's default, one per physical core)",
        flag="--threads", min=0, cli=True)
    n_calls: int = _setting(
        _default("n_calls", 100), help="timed calls per event (per round, see --min-duration)",
        flag="--n-calls", min=1, max=MAX_N_CALLS, cli=True)
    n_events: int = _setting(
        1, help="events: distinct inputs, measured in turn", flag="--n-events", min=1,
        max=MAX_N_EVENTS, cli=True)
    warmup: int = _setting(
        _default("warmup", 10), help="untimed calls after the (separately timed) first call",
        flag="--warmup", min=0, max=MAX_WARMUP, cli=True)
    min_duration: float = _setting(
        _default("min_duration", 0.5), help="keep measuring, in rounds of n-calls per event, "
        "until this many seconds of measuring are reached (0: exactly n-calls per event)",
        flag="--min-duration", min=0, max=MAX_MIN_DURATION, cli=True)
    input_data: str = _setting(
        "random", help="random, incremental, zeros, ones, or a .npz/.npy file",
        flag="--input-data", validator=_input_data, cli=True)
    precision: str = _setting(
        DEFAULT_PRECISION, help=f"the precision to measure at: {listed()}, where the runtime "
        "can (a converted model is measured as its own file, "
        "the runtime applies the others)", flag="--precision", validator=_precision, cli=True)
    seed: int = _setting(0, help="seed of random input data", min=0)
    tfaot_batch_rules: str = _setting(
        "", help="how AOT-compiled (tfaot) models compose batch sizes they were not compiled "
        "for: dash-separated target:size,size,... (e.g. 15:1,2,4,8-3:ones); default: CMSSW's",
        flag="--tfaot-batch-rules", validator=_batch_rules)

    def validated(self) -> MeasureSettings:
        """A copy with every setting checked and normalized (canonical runtime name, absolute
        input file); raises :class:`MLProfError` naming the option that is wrong."""

        quick()  # a value of $MLP_QUICK it does not take: one line
        values = check_settings(asdict(self))
        check_calls_per_round(values["n_calls"], values["n_events"])
        values["device"] = check_device(values["runtime"], values["device"])
        return MeasureSettings(**values)


@dataclass(frozen=True)
class Setting:
    """What is known about one measurement setting."""

    name: str                      # Python name: n_calls
    type: type                     # int, float or str
    default: Any                   # dataclasses.MISSING: none (batch_size)
    help: str                      # one line, without the default
    flag: str | None = None        # command-line option, named in errors: --n-calls
    min: float | None = None       # smallest allowed value
    max: float | None = None       # largest allowed value
    validator: Callable[[Any], Any] | None = None  # after the type and bounds: normalizes
    cli: bool = False              # a measurement option of the law tasks and the mlprof command
    subject: str = ""              # what the messages are about, if the option does not say it

    @property
    def required(self) -> bool:
        """Whether there is no default."""
        return self.default is MISSING

    @property
    def error_field(self) -> str:
        """The field of this setting's errors: the option, else the name."""
        return self.flag or self.name

    def error(self, message: str) -> MLProfError:
        """An error about this setting."""
        return MLProfError(f"{self.subject} {message}" if self.subject else message,
                           field=self.error_field)

    def parse(self, text: str) -> Any:
        """Command-line text as a checked value of this setting (see :meth:`check`); numbers
        in ASCII only (``int()`` alone takes Arabic-Indic digits and ``1_0``)."""
        try:
            if self.type is int:
                value: Any = ascii_int(text, self.error_field)
            elif self.type is float:
                value = ascii_float(text, self.error_field)
            else:
                value = text
        except MLProfError:
            try:  # what Python would have read: Arabic-Indic digits, 1_0, nan
                self.type(text.strip())
            except ValueError:
                raise self.error(f"must be {_TYPE_WORDS[self.type]}, got {text!r}") from None
            raise self.error(f"must be {_TYPE_WORDS[self.type]} in ASCII digits, got "
                             f"{text!r}") from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        """``value`` checked (type, finite, bounds, validator) and normalized."""
        if self.type is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise self.error(f"must be an integer, got {value!r}")
            value = int(value)
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise self.error(f"must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise self.error(f"must be a finite number, got {value!r}")
        elif not isinstance(value, self.type):
            raise self.error(f"must be {_TYPE_WORDS[self.type]}, got {value!r}")
        if self.min is not None and value < self.min:
            raise self.error(f"must be >= {_num(self.min)}, got {value!r}")
        if self.max is not None and value > self.max:
            raise self.error(f"must be <= {_num(self.max)}, got {value!r}")
        return self.validator(value) if self.validator is not None else value


_TYPE_WORDS = {int: "an integer", float: "a number", str: "a string"}


def _num(bound: float) -> str:
    """A bound as a person writes it: 1000000, 0.5."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"

#: every setting, in the order of :class:`MeasureSettings`' fields
SETTINGS: dict[str, Setting] = {
    f.name: Setting(name=f.name, type=get_type_hints(MeasureSettings)[f.name],
                    default=f.default, **f.metadata)
    for f in fields(MeasureSettings)
}


def cli_settings() -> list[Setting]:
    """The measurement options of the law tasks and the ``mlprof`` command (threads, n_calls,
    n_events, warmup, min_duration, input_data); batch size, runtime and device have options of
    their own (lists, aliases), the seed has none."""
    return [s for s in SETTINGS.values() if s.cli]


def unknown_setting_error(name: str, valid: Iterable[str],
                          field: str | None = None) -> MLProfError:
    """One line for an unknown setting ``name``: the closest valid name and all of them
    (``field``: the option it was given in, which the message then names it under)."""
    valid = list(valid)
    found = did_you_mean(name, valid)  # "; did you mean n_calls?" or ""
    hint = f"{found[2:]} " if found else ""
    what = f"unknown setting {name!r}" if field else "unknown setting"
    return MLProfError(f"{what}; {hint}valid: {', '.join(valid)}", field=field or name)


def setting(name: str) -> Setting:
    """The definition of setting ``name``; raises :class:`MLProfError` for an unknown name."""
    if name not in SETTINGS:
        raise unknown_setting_error(name, SETTINGS)
    return SETTINGS[name]


def check_setting(name: str, value: Any) -> Any:
    """``value`` of setting ``name`` checked and normalized; raises :class:`MLProfError`."""
    return setting(name).check(value)


def check_calls_per_round(n_calls: int, n_events: int) -> None:
    """``n_calls x n_events`` at most :data:`MAX_CALLS_PER_ROUND` (each is bounded alone too,
    but their product is what a round holds in memory)."""
    if n_calls * n_events > MAX_CALLS_PER_ROUND:
        raise MLProfError(f"n-calls x n-events must be <= {MAX_CALLS_PER_ROUND} calls per round,"
                          f" got {n_calls} x {n_events}", field="--n-calls")


def check_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of ``values`` (name -> value) checked and normalized."""
    return {name: check_setting(name, value) for name, value in values.items()}


#: the settings ``--compare`` varies within one plot: the measurement options of
#: :func:`cli_settings` (batch sizes are the x axis, runtimes have ``--runtimes``)
COMPARE_FIELD = "--compare"


def parse_compare(text: str) -> tuple[str, tuple[Any, ...]]:
    """``threads=1,2`` as ``("threads", (1, 2))``: one measurement setting and the values to
    put side by side on one plot, each checked as its own option checks it.

    Why one parser: a comparison of settings is a question users ask of every setting (threads,
    events, input data, ...); defining the values here, from :data:`SETTINGS`, means a new
    setting can be compared without touching the tasks. Raises :class:`MLProfError` naming
    ``--compare``: a malformed text, an unknown setting (with the closest name), a bad value,
    fewer than two distinct values.
    """
    name, sep, values = str(text).partition("=")
    name = name.strip().lstrip("-").replace("-", "_")
    if not sep or not name or not values.strip():
        raise MLProfError(f"expected setting=value,value,... (e.g. threads=1,2), got {text!r}",
                          field=COMPARE_FIELD)
    valid = [s.name for s in cli_settings()]
    if name == "precision":  # converted models and their calibration: a parameter of its own
        raise MLProfError("precisions are compared with --precisions fp32,int8-dynamic,...",
                          field=COMPARE_FIELD)
    if name not in valid:
        raise unknown_setting_error(name, valid, COMPARE_FIELD)
    out: list[Any] = []
    for v in values.split(","):
        try:
            value = SETTINGS[name].parse(v.strip())
        except MLProfError as e:
            raise MLProfError(f"{name}={v.strip()}: {e.message}", field=COMPARE_FIELD) from None
        if value not in out:
            out.append(value)
    if len(out) < 2:
        raise MLProfError(f"give at least two different values of {name}, got {values!r}",
                          field=COMPARE_FIELD)
    return name, tuple(out)


def check_threads_here(threads: int, allow_more: bool = False) -> int:
    """``threads`` checked against this machine's logical CPUs (``allow_more``: not).

    More threads than CPUs measure the operating system's scheduler, not the runtime, and a
    typo (``--threads 9999``) spends minutes creating a session; so it is refused unless asked
    for (``--oversubscribe``). Not part of :meth:`MeasureSettings.validated`: a measurement may
    run on another machine (a cluster node) than the one that checked its parameters.
    """
    cpus = os.cpu_count() or 1
    if threads > cpus and not allow_more:
        raise SETTINGS["threads"].error(f"must be <= {cpus}, the logical CPUs of this machine, "
                                        f"got {threads} (--oversubscribe allows more)")
    return threads


def check_batch_size(value: Any) -> int:
    """The one check of a batch size: an integer >= 1 and <= :data:`MAX_BATCH_SIZE`."""
    return SETTINGS["batch_size"].check(value)


def check_batch_sizes(values: Iterable[Any]) -> tuple[int, ...]:
    """Batch sizes, each checked, made unique and sorted; at least one."""
    sizes = {check_batch_size(b) for b in values}
    if not sizes:
        raise MLProfError("give at least one batch size", field=SETTINGS["batch_size"].flag)
    return tuple(sorted(sizes))
