"""Nightly experiments: YAML files that say what to measure every night.

An experiment file (``experiments/*.yaml``) looks like this::

    title: DNN latency on ONNX Runtime
    description: The 10x128 example DNN at small and large batch sizes.
    active: true            # only active experiments run (default: true)
    priority: 10            # higher runs first (default: 0); ties by file name
    model_files:            # YAML, ONNX or script.py[::HASH]; relative to this file, $VARS and
      - $MLP_BASE/examples/dnn/model_onnx_l10u128.yaml    # globs work
    exclude_files: []       # model files (globs) to leave out of model_files
    rotate: {slices: 16}    # measure one of 16 fixed slices of model_files per night (below)
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

**Generation experiments** (issue 37): a ``generation:`` section makes the experiment measure
decoders generating (one PlotGeneration per model file: MeasureGeneration's points, the
runtimes in interleaved rounds, the tokens checked) instead of MeasureRuntime; its keys are
PlotGeneration's options (:class:`mlprof.measure.generation.settings.GenerationSettings`),
each checked as the command line checks it and refused naming ``generation.<key>``::

    title: Tiny Llama generating
    model_files: [$MLP_BASE/models/generation/tiny_llama.py]
    generation: {prompt_lengths: [16], batch_sizes: [1], new_tokens: 8,
                 runtimes: [torch, onnxruntime]}

The runtimes, batch sizes and settings of such an experiment are those of its ``generation:``
section: ``runtimes``, ``batch_sizes``, ``settings``, ``device``, ``reference_runtime`` and
``script_args`` next to it are refused (they would be ignored).

Unlike Relay's ``config.json`` (where experiments were shell scripts and a broken one was
rejected silently), every field is checked up front: a bad file gives one error naming the file
and the field, and the nightly run shows it on the dashboard while the other experiments run.

**Rotating slices** (``rotate: {slices: N}``) measure a large corpus over N nights: each model
file belongs to one fixed slice, ``sha256(key) mod N`` where the key is its path relative to the
directory its ``model_files`` entry starts from (``$MLP_BASE/models/*/*.py`` gives keys like
``timm/resnet18.py``: the same in every checkout). Adding or removing a file changes no other
file's slice. The night picks the slice: the date ``YYYY-MM-DD`` in the nightly ``--version``
(``2026-11-22`` or ``nightly-2026-11-22``), slice ``date.toordinal() mod N``; so consecutive
nights measure consecutive slices, every file comes back every N nights, and re-running a past
night measures the same slice (no wall-clock time is read). The slice is recorded and shown
(``slice 3 of 16: 26 of 430 model files``).
"""

from __future__ import annotations

import datetime
import glob
import hashlib
import os
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from mlprof.errors import MLProfError
from mlprof.ingest import check_regular, clean_name, load_yaml
from mlprof.measure.settings import check_batch_sizes, check_setting, cli_settings
from mlprof.runtimes import DEFAULT_RUNTIME, canonical_runtime, check_device

FIELDS = ("title", "description", "active", "priority", "model_files", "exclude_files",
          "rotate", "runtimes", "reference_runtime", "batch_sizes", "device", "settings",
          "script_args", "notify", "generation")

#: the fields an experiment with ``generation:`` must not have: its section says them
NOT_WITH_GENERATION = ("runtimes", "batch_sizes", "settings", "device", "reference_runtime",
                       "script_args")

#: the keys of ``rotate``
ROTATE_FIELDS = ("slices",)

#: a date in a nightly version (``2026-11-22``, ``nightly-2026-11-22``)
_NIGHT_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


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
    exclude_files: tuple[str, ...] = ()   # absolute patterns, as given (expanded)
    #: the slice key of each model file (its path relative to its entry's directory)
    model_keys: tuple[str, ...] = ()
    slices: int | None = None             # rotate.slices (None: every model file every night)
    #: the ``generation:`` section, checked (PlotGeneration's options); None: MeasureRuntime
    generation: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serializable)."""
        return asdict(self)

    def slice_assignment(self) -> dict[str, int]:
        """``{model file: slice index (0-based)}`` (all in slice 0 without ``rotate``)."""
        n = self.slices or 1
        return {f: slice_of(k, n) for f, k in zip(self.model_files, self.model_keys,
                                                   strict=True)}

    def for_night(self, version: str) -> tuple[Experiment, NightSlice | None]:
        """The experiment as run on the night of ``version``: with ``rotate``, only that night's
        slice of the model files, and the :class:`NightSlice` that says which (else ``self``,
        None). Raises :class:`MLProfError` (file, ``rotate``) when ``version`` has no date."""
        if not self.slices:
            return self, None
        try:
            night = night_date(version)
        except MLProfError as e:
            raise _fail(self.file, "rotate", e.message) from None
        index = night.toordinal() % self.slices
        keep = [(f, k) for f, k in zip(self.model_files, self.model_keys, strict=True)
                if slice_of(k, self.slices) == index]
        files = tuple(f for f, _ in keep)
        part = NightSlice(night=night.isoformat(), index=index, slices=self.slices,
                          model_files=files, total=len(self.model_files))
        return replace(self, model_files=files, model_keys=tuple(k for _, k in keep)), part


@dataclass(frozen=True)
class NightSlice:
    """Which slice of a rotating experiment one night measures."""

    night: str                    # the night's date, ISO (from the version)
    index: int                    # 0-based; shown 1-based
    slices: int
    model_files: tuple[str, ...]  # this slice's model files
    total: int                    # model files in all slices

    @property
    def label(self) -> str:
        """``slice 3 of 16: 26 of 430 model files``."""
        return (f"slice {self.index + 1} of {self.slices}: {len(self.model_files)} of "
                f"{self.total} model files")

    def as_dict(self) -> dict[str, Any]:
        """What the night's ``status.json`` records (``number`` is 1-based, as shown)."""
        return {"night": self.night, "number": self.index + 1, "slices": self.slices,
                "model_files": len(self.model_files), "total": self.total,
                "label": self.label}


def slice_of(key: str, slices: int) -> int:
    """The fixed slice (0-based) of the model file with slice key ``key`` among ``slices``: a
    stable hash (not Python's salted ``hash``), so one file's slice never depends on others."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % slices


def night_date(version: str) -> datetime.date:
    """The night's date: the first valid ``YYYY-MM-DD`` in ``version``."""
    for m in _NIGHT_DATE.finditer(str(version)):
        try:
            return datetime.date(*map(int, m.groups()))
        except ValueError:
            continue
    raise MLProfError(f"picks the night's slice from the date in --version (YYYY-MM-DD, e.g. "
                      f"nightly-2026-11-22), but {version!r} has none")


def _fail(path: str, fld: str, message: str) -> MLProfError:
    return MLProfError(message, path, fld)


def _str_list(path: str, fld: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or \
            not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, fld, f"must be a non-empty list of strings, got {value!r}")
    return [v.strip() for v in value]


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[")


def _static_dir(pattern: str) -> str:
    """The directory a path or glob starts from: its longest leading part without wildcards."""
    parts = pattern.split(os.sep)
    fixed = next((i for i, p in enumerate(parts) if _is_glob(p)), len(parts) - 1)
    return os.sep.join(parts[:fixed]) or os.sep


def _model_files(path: str, values: list[str], fld_name: str = "model_files"
                 ) -> dict[str, str]:
    """``{model file: slice key}``: model files relative to the experiment file, with $VARS, ~
    and globs expanded; the key is the file relative to its entry's directory."""
    base = os.path.dirname(path)
    out: dict[str, str] = {}
    for i, raw in enumerate(values):
        fld = f"{fld_name}[{i}]"
        file_part, sep, hashes = raw.partition("::")
        expanded = os.path.expanduser(os.path.expandvars(file_part))
        if "$" in expanded:
            raise _fail(path, fld, f"undefined variable in {raw!r}")
        full = os.path.abspath(os.path.join(base, expanded))
        root = _static_dir(full)
        if _is_glob(full):
            matches = sorted(glob.glob(full))
            if not matches:
                raise _fail(path, fld, f"no file matches {raw!r}")
            for m in matches:
                out.setdefault(m, os.path.relpath(m, root).replace(os.sep, "/"))
            continue
        if not os.path.lexists(full):
            raise _fail(path, fld, f"no such file: {full}")
        check_regular(full, field=fld, source=path)  # a FIFO or a device is one line here
        suffix = sep + hashes.strip().lower()
        out.setdefault(full + suffix, os.path.basename(full) + suffix)
    return out


def _rotate(path: str, value: Any, n_files: int) -> int:
    """``rotate: {slices: N}`` checked: N an integer from 1 to the number of model files."""
    if not isinstance(value, dict):
        raise _fail(path, "rotate", f"must be a mapping like {{slices: 16}}, got {value!r}")
    unknown = sorted(set(map(str, value)) - set(ROTATE_FIELDS))
    if unknown:
        raise _fail(path, f"rotate.{unknown[0]}", "unknown; known: slices (a fixed number of "
                    "slices, so that adding a model file moves no other)")
    if "slices" not in value:
        raise _fail(path, "rotate.slices", "missing: give the number of slices (nights per "
                    "round), e.g. {slices: 16}")
    n = value["slices"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise _fail(path, "rotate.slices", f"must be an integer >= 1, got {n!r}")
    if n < 1:
        raise _fail(path, "rotate.slices", f"must be an integer >= 1, got {n}")
    if n > n_files:
        raise _fail(path, "rotate.slices", f"{n} slices for {n_files} model file(s): at most "
                    "one slice per model file")
    return n


def _not_unicode(data: Any) -> tuple[str, str] | None:
    """``(field, character)`` of the first lone surrogate in a key or string of ``data`` (a
    YAML ``"\\ud800"`` escape makes one), else None; iterative, as nesting is unbounded."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        items: list[tuple[str, Any]] = []
        if isinstance(value, dict):
            items = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
            items += [(name, k) for name, (k, _) in zip((n for n, _ in items), value.items(),
                                                        strict=True)]
        elif isinstance(value, list):
            items = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
        elif isinstance(value, str):
            ch = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
            if ch is not None:
                return where.encode("utf-8", "backslashreplace").decode("utf-8"), ch
        stack.extend(items)
    return None


class _Problems:
    """The problems found in one experiment file, reported together: a user who fixes one field
    should not discover the next one run after run."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.found: list[tuple[str, str]] = []

    def add(self, error: MLProfError, fld: str | None = None) -> None:
        """Record ``error`` (a problem of ``fld``, default: the field it names)."""
        where = fld if fld is not None else (error.field or "")
        message = f"{error.message}: {error.file}" if error.file and error.file != self.path \
            else error.message
        self.found.append((where, message))

    def check(self, fld: str, fn: Any, *args: Any) -> Any:
        """``fn(*args)``, or None with its error recorded under ``fld``."""
        try:
            return fn(*args)
        except MLProfError as e:  # a field of this file keeps its own name (model_files[2])
            self.add(e, e.field if e.file == self.path and e.field else fld)
            return None

    def fail(self, fld: str, message: str) -> None:
        """Record a problem of ``fld`` found here."""
        self.add(_fail(self.path, fld, message))

    def raise_any(self) -> None:
        """Raise one :class:`MLProfError` naming every problem (one line)."""
        if len(self.found) == 1:
            raise _fail(self.path, *self.found[0])
        if self.found:
            raise _fail(self.path, "", f"{len(self.found)} problems: " + "; ".join(
                f"{f}: {m}" if f else m for f, m in self.found))


def load_experiment(path: str | os.PathLike) -> Experiment:
    """Read and check one experiment file; raises :class:`MLProfError` naming file and field.

    Every field is checked even after one is wrong, and the error names all wrong fields at once
    (``3 problems: exclude_files: ...; rotate.slices: ...; settings.n_calls: ...``). One
    function per group of fields (texts and flags, model files, runtimes, batch sizes and
    settings, notify and generation) fills the experiment's fields: each reads ``data``, adds
    to ``kw`` what is right and to ``problems`` what is not.
    """
    path = os.path.abspath(os.fspath(path))
    # the one way in: a regular file (a FIFO, a device or a link to one is one line, never a
    # hang or a read without end), at most MAX_YAML_BYTES, UTF-8, and no YAML aliases (a
    # 519-byte alias bomb in title: ran the scheduler out of memory)
    data = load_yaml(path, what="experiment files", subject="an experiment file")
    bad = _not_unicode(data)
    if bad is not None:  # "\ud800" in a YAML string: no terminal, JSON or HTML writer takes it
        fld, ch = bad
        raise _fail(path, fld, f"contains the lone surrogate U+{ord(ch):04X}: not Unicode text")
    if not isinstance(data, dict):
        raise _fail(path, "", "must be a mapping of fields (title, model_files, ...)")
    problems = _Problems(path)
    for name in sorted(set(map(str, data)) - set(FIELDS)):
        problems.fail(name, f"unknown field; known: {', '.join(FIELDS)}")
    kw: dict[str, Any] = {"name": os.path.splitext(os.path.basename(path))[0], "file": path}
    for read in (_read_texts, _read_flags, _read_model_files, _read_runtimes,
                 _read_batch_sizes, _read_settings, _read_notify_generation):
        read(data, kw, problems)
    problems.raise_any()
    return Experiment(**kw)


def _read_texts(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``title``, ``description``, ``script_args``: strings, whitespace folded (the title
    also without control or bidi characters: terminals and dashboards show it)."""
    for fld in ("title", "description", "script_args"):
        if fld in data and data[fld] is not None:
            if not isinstance(data[fld], str):
                problems.fail(fld, f"must be a string, got {data[fld]!r}")
                continue
            kw[fld] = " ".join(data[fld].split()) if fld != "description" else data[fld].strip()
            if fld == "title":
                kw[fld] = problems.check(
                    "title", lambda t: clean_name(t, "title", source=problems.path),
                    kw[fld]) or kw["name"]
    kw.setdefault("title", kw["name"])


def _read_flags(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``active`` (a boolean) and ``priority`` (an integer, not a boolean)."""
    if "active" in data:
        if not isinstance(data["active"], bool):
            problems.fail("active", f"must be true or false, got {data['active']!r}")
        else:
            kw["active"] = data["active"]
    if "priority" in data:
        if isinstance(data["priority"], bool) or not isinstance(data["priority"], int):
            problems.fail("priority", f"must be an integer, got {data['priority']!r}")
        else:
            kw["priority"] = data["priority"]


def _read_model_files(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``model_files`` (required) less ``exclude_files``, and ``rotate`` over what is left."""
    path, check = problems.path, problems.check
    files: dict[str, str] | None = None
    if "model_files" not in data:
        problems.fail("model_files", "missing: give at least one model file")
    else:
        values = check("model_files", _str_list, path, "model_files", data["model_files"])
        if values is not None:
            files = check("model_files", _model_files, path, values)
    if data.get("exclude_files") is not None and data["exclude_files"] != []:
        patterns = check("exclude_files", _str_list, path, "exclude_files",
                         data["exclude_files"])
        excluded = None if patterns is None else check(
            "exclude_files", _model_files, path, patterns, "exclude_files")
        if excluded is not None and files is not None:
            gone = {f.partition("::")[0] for f in excluded}
            files = {f: k for f, k in files.items() if f.partition("::")[0] not in gone}
            if not files:
                problems.fail("exclude_files", "excludes every model file")
                files = None
        if patterns is not None:
            base = os.path.dirname(path)
            kw["exclude_files"] = tuple(os.path.abspath(os.path.join(
                base, os.path.expanduser(os.path.expandvars(p)))) for p in patterns)
    if files is not None:
        kw["model_files"], kw["model_keys"] = tuple(files), tuple(files.values())
        if "rotate" in data:
            kw["slices"] = check("rotate", _rotate, path, data["rotate"], len(files))


def _read_runtimes(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``runtimes`` (canonical names), ``device`` (every runtime has it) and
    ``reference_runtime`` (one of the runtimes)."""
    check = problems.check
    if "runtimes" in data:
        rts = check("runtimes", _str_list, problems.path, "runtimes", data["runtimes"])
        if rts is not None:
            names = [check("runtimes", canonical_runtime, r) for r in rts]
            if None not in names:
                kw["runtimes"] = tuple(dict.fromkeys(names))
    device = data.get("device", "cpu")
    if not isinstance(device, str):
        problems.fail("device", f"must be a string, got {device!r}")
    elif all(check("device", check_device, rt, device) is not None
             for rt in kw.get("runtimes", Experiment.runtimes)):
        kw["device"] = device
    if data.get("reference_runtime") is not None:
        ref = check("reference_runtime", canonical_runtime, str(data["reference_runtime"]))
        if ref is not None:
            if ref not in kw.get("runtimes", Experiment.runtimes):
                problems.fail("reference_runtime", f"{ref!r} is not one of the runtimes")
            else:
                kw["reference_runtime"] = ref


def _read_batch_sizes(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``batch_sizes``: one integer or a list of them, as ``--batch-sizes`` checks them."""
    if "batch_sizes" in data:
        bs = data["batch_sizes"]
        if isinstance(bs, int) and not isinstance(bs, bool):
            bs = [bs]
        if not isinstance(bs, list):
            problems.fail("batch_sizes", f"must be a list of integers >= 1, got {bs!r}")
        else:
            checked_bs = problems.check("batch_sizes", check_batch_sizes, bs)
            if checked_bs is not None:
                kw["batch_sizes"] = checked_bs


def _read_settings(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``settings``: MeasureRuntime's measurement options, each checked as its option is."""
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        problems.fail("settings", f"must be a mapping, got {settings!r}")
        settings = {}
    known = [s.name for s in cli_settings()]  # the measurement options of MeasureRuntime
    checked: dict[str, Any] = {}
    for key, value in settings.items():
        fld = f"settings.{key}"
        if key not in known:
            problems.fail(fld, f"unknown setting; known: {', '.join(known)}")
            continue
        try:
            checked[key] = check_setting(key, value)
        except MLProfError as e:  # e.g. an input data file that is not found: named
            problems.fail(fld, f"{e.message}: {e.file}" if e.file else e.message)
    kw["settings"] = checked


def _read_notify_generation(data: dict, kw: dict[str, Any], problems: _Problems) -> None:
    """``notify`` (a list of addresses) and ``generation`` (PlotGeneration's options, not
    with the fields of a runtime measurement)."""
    if "notify" in data and data["notify"] is not None:
        notify = problems.check("notify", _str_list, problems.path, "notify", data["notify"])
        if notify is not None:
            kw["notify"] = tuple(notify)
    if "generation" in data:
        gen = problems.check("generation", _generation, problems.path, data["generation"])
        for fld in NOT_WITH_GENERATION:
            if fld in data:
                problems.fail(fld, "not with generation: give it in the generation section "
                              f"(its keys: {', '.join(_generation_keys())})")
        if gen is not None:
            kw["generation"] = gen


def _generation_keys() -> list[str]:
    from mlprof.measure.generation.settings import GENERATION_FIELDS

    return list(GENERATION_FIELDS)


def _generation(path: str, value: Any) -> dict[str, Any]:
    """``generation:`` checked: a mapping of PlotGeneration's options
    (:class:`~mlprof.measure.generation.settings.GenerationSettings`' fields), each value as
    the command line checks it (``new_tokens: 0`` is refused like ``--new-tokens 0``); the
    first wrong key named ``generation.<key>``. Returns the values as the settings hold them
    (tuples for lists), which are PlotGeneration's parameters."""
    from mlprof.measure.generation.settings import GenerationSettings

    keys = _generation_keys()
    if not isinstance(value, dict) or not value:
        raise _fail(path, "generation", f"must be a mapping of {', '.join(keys)}, got "
                    f"{value!r}")
    out: dict[str, Any] = {}
    for key, v in value.items():
        fld = f"generation.{key}"
        if key not in keys:
            raise _fail(path, fld, f"unknown; known: {', '.join(keys)}")
        if isinstance(v, (int, float, str)) and key in ("prompt_lengths", "batch_sizes",
                                                        "runtimes"):
            v = [v]
        try:  # each key alone (the others' defaults are valid): the error is this key's
            checked = GenerationSettings(**{key: v})
        except MLProfError as e:
            raise _fail(path, fld, e.message.split(": ", 1)[-1]
                        if e.message.startswith("--") else e.message) from None
        except (TypeError, ValueError) as e:
            raise _fail(path, fld, f"not a valid value: {v!r} ({e})") from None
        out[key] = getattr(checked, key)
    return out


@dataclass(frozen=True)
class Plan:
    """What an experiment measures: each model file with the runtimes that can measure it."""

    pairs: tuple[tuple[str, tuple[str, ...]], ...]   # (model file, its runtimes)
    skipped: tuple[str, ...]   # one line per (model file, runtime) left out, saying why
    errors: tuple[str, ...]    # model files that cannot be read or that no runtime measures


def plan(exp: Experiment) -> Plan:
    """Pair each model file of ``exp`` with the runtimes of ``exp`` that measure its kind.

    A runtime that cannot measure one model file (``torch`` on an ONNX YAML model) skips that
    pair only, with one line saying so; the file's other runtimes still measure it and the
    experiment can be ``ok``. A file that no runtime of the experiment measures, or that cannot
    be read, is an error of that file.
    """
    from mlprof.model import read_model_file
    from mlprof.runtimes import check_model_kind, runtime_info

    pairs, skipped, errors = [], [], []
    for f in exp.model_files:
        name = os.path.basename(f)
        try:
            kind = read_model_file(f).model_kind
        except MLProfError as e:
            errors.append(f"{name}: {e}")
            continue
        keep = tuple(rt for rt in exp.runtimes if runtime_info(rt).measures(kind))
        for rt in exp.runtimes:
            if rt not in keep:
                try:
                    check_model_kind(rt, kind, name)
                except MLProfError as e:
                    skipped.append(f"skipped {rt} on {name}: {e.message}")
        if keep:
            pairs.append((f, keep))
        else:
            errors.append(f"{name}: none of the runtimes ({', '.join(exp.runtimes)}) measures "
                          "it")
    return Plan(tuple(pairs), tuple(skipped), tuple(errors))


def unexpected_error(exc: BaseException, path: str | os.PathLike) -> MLProfError:
    """An exception that is not an :class:`MLProfError` as one line naming ``path``: the
    per-experiment boundary turns any failure (a bug included) into that experiment's error,
    so that it costs that experiment alone and still says what happened."""
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:300] + " ..."
    return MLProfError(f"unexpected {type(exc).__name__}" + (f": {text}" if text else ""),
                       path)


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
    out: list[tuple[str, Experiment | None, MLProfError | None]] = []
    for path in experiment_files(directory):
        try:
            out.append((path, load_experiment(path), None))
        except MLProfError as e:
            out.append((path, None, e))
        except Exception as e:  # noqa: BLE001 -- any failure costs this file alone
            out.append((path, None, unexpected_error(e, path)))
    return sorted(out, key=lambda t: (-(t[1].priority if t[1] else 0), os.path.basename(t[0])))
