"""Parameter types: what a value on the command line may be, normalized and checked in one line
(paths made absolute, names cleaned, runtimes and precisions resolved, numbers in ASCII digits),
and :func:`settings_parameter`, the law parameter of one option of a settings dataclass.

The concern mixins that hold these parameters are :mod:`mlprof.tasks.framework.mixins`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import law
import luigi

from mlprof.errors import MLProfError
from mlprof.runtimes import canonical_runtime


def expand_path(value: str) -> str:
    """Expand ``~`` and variables and make the path absolute."""
    return os.path.abspath(os.path.expandvars(os.path.expanduser(str(value))))


def expand_model_file(value: str) -> str:
    """Like :func:`expand_path`, keeping a ``::HASH`` suffix (script models)."""
    path, sep, rest = str(value).partition("::")
    return expand_path(path) + sep + rest.strip().lower()


class PathParameter(luigi.Parameter):
    """A file path (``script.py::HASH`` too), made absolute so equal files give equal ids."""

    def normalize(self, x):
        return expand_model_file(x) if x not in (None, "") else x


class PathsParameter(law.CSVParameter):
    """Comma-separated file paths with brace expansion and globs, made absolute."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("brace_expand", True)
        super().__init__(*args, **kwargs)

    def normalize(self, x):
        import glob

        paths = []
        for p in super().normalize(x):
            p = expand_model_file(p)
            if any(c in p for c in "*?["):
                matches = sorted(glob.glob(p))
                if not matches:
                    raise MLProfError(f"no file matches {p!r}", field="--model-files")
                paths.extend(matches)
            else:
                paths.append(p)
        return tuple(dict.fromkeys(paths))


class NameParameter(luigi.Parameter):
    """A free-text name that becomes (part of) a directory, e.g. ``--model-name``:
    NFC-normalized and stripped, control and bidi characters refused in one line
    (:func:`mlprof.ingest.clean_name`), so that names that look alike are one name."""

    def __init__(self, *args, flag: str = "", **kwargs):
        self._flag = flag
        super().__init__(*args, **kwargs)

    def normalize(self, x):
        from mlprof.ingest import clean_name

        if not isinstance(x, str) or x == law.NO_STR:
            return x
        value = clean_name(x, self._flag or "name")
        if not value:
            raise MLProfError("must not be empty (leave the option out for the default)",
                              field=self._flag or None)
        return value


class NamesParameter(law.CSVParameter):
    """Comma-separated names that become (parts of) directories, e.g. ``--model-names``: each
    one as :class:`NameParameter` normalizes it."""

    def __init__(self, *args, flag: str = "", **kwargs):
        self._flag = flag
        super().__init__(*args, **kwargs)

    def normalize(self, x):
        from mlprof.ingest import clean_name

        return tuple(clean_name(str(n), self._flag or "names") for n in super().normalize(x))


class RuntimeParameter(luigi.Parameter):
    """A runtime name; aliases (``ort``) resolve to the canonical name."""

    def normalize(self, x):
        return canonical_runtime(x)


class RuntimesParameter(law.CSVParameter):
    """Comma-separated runtime names (aliases resolved, duplicates dropped)."""

    def normalize(self, x):
        return tuple(dict.fromkeys(canonical_runtime(r) for r in super().normalize(x)))


class AsciiIntParameter(luigi.IntParameter):
    """An integer in ASCII digits: luigi's ``int()`` also takes Arabic-Indic digits and
    ``1_0``, which a user reading the command line would not take for the same number."""

    def parse(self, x):
        from mlprof.ingest import ascii_int

        value = super().parse(x)  # words fail here, with luigi's own message
        if isinstance(x, str):
            ascii_int(x, "--" + getattr(self, "_mlprof_name", "value"))
        return value


class AsciiFloatParameter(luigi.FloatParameter):
    """A number in ASCII (see :class:`AsciiIntParameter`; ``float()`` also takes ``nan``)."""

    def parse(self, x):
        from mlprof.ingest import ascii_float

        value = super().parse(x)
        if isinstance(x, str):
            ascii_float(x, "--" + getattr(self, "_mlprof_name", "value"))
        return value


class BatchSizesParameter(law.CSVParameter):
    """Comma-separated batch sizes (>= 1), made unique and sorted."""

    def __init__(self, *args, **kwargs):
        kwargs.update(cls=AsciiIntParameter, unique=True, sort=True)
        super().__init__(*args, **kwargs)

    #: tuples of sizes that passed :meth:`normalize`, by id (the entry holds the tuple, so its
    #: id is not reused while it is here)
    _passed: dict[int, tuple] = {}

    def normalize(self, x):
        """The sizes, checked (at least one, each an integer in ``1..MAX_BATCH_SIZE``).

        Every branch of a workflow normalizes the workflow's own tuple of all N sizes again, so
        any test of the whole tuple is O(N) per branch and O(N^2) for the sweep: the type test
        in C below still took 34 us per branch at N = 1000 (3 % of scheduling's ~1.2 ms per
        branch, benchmarks/scheduling.py). A tuple that passed is immutable and holds only
        ints, so the very same object (checked by identity) passes again without a test.
        """
        if type(x) is tuple and BatchSizesParameter._passed.get(id(x)) is x:
            return x
        from mlprof.measure.settings import check_batch_size

        sizes = super().normalize(x)
        if not sizes:
            raise MLProfError("give at least one batch size", field="--batch-sizes")
        # check element-wise (and word the error) only when the cheap test fails
        from mlprof.runtimes.batching import MAX_BATCH_SIZE

        # the type test in C (set(map(type, ...))): a generator over 1,000 sizes in every
        # branch was 0.1 ms per branch at N = 1000 (benchmarks/scheduling.py)
        if set(map(type, sizes)) == {int} and sizes[0] >= 1 and sizes[-1] <= MAX_BATCH_SIZE:
            if type(sizes) is tuple:
                passed = BatchSizesParameter._passed
                if len(passed) >= 256:
                    passed.clear()
                passed[id(sizes)] = sizes
            return sizes
        return tuple(check_batch_size(b) for b in sizes)


class PrecisionParameter(luigi.Parameter):
    """A precision name (:data:`mlprof.runtimes.PRECISIONS`), checked in one line."""

    def normalize(self, x):
        from mlprof.runtimes import check_precision

        return check_precision(x) if isinstance(x, str) and x != law.NO_STR else x


class PrecisionsParameter(law.CSVParameter):
    """Comma-separated precisions (checked, duplicates dropped, in the order given)."""

    def normalize(self, x):
        from mlprof.runtimes import check_precision

        return tuple(dict.fromkeys(check_precision(p, "--precisions")
                                   for p in super().normalize(x)))


_ELEMENTS: dict[tuple[type, str], type] = {}


def _element(cls: type, flag: str) -> type:
    """``cls`` (an ASCII number parameter) naming ``--flag`` in its error (one class per flag)."""
    key = (cls, flag)
    if key not in _ELEMENTS:
        _ELEMENTS[key] = type(f"{cls.__name__}_{flag}", (cls,), {"_mlprof_name": flag})
    return _ELEMENTS[key]


class IntsParameter(law.CSVParameter):
    """Comma-separated whole numbers in ASCII digits (``1,2,4``); ``flag`` names the option in
    the error (``--streams``, ``--prompt-lengths``)."""

    def __init__(self, *args, flag: str = "value", **kwargs):
        kwargs.setdefault("cls", _element(AsciiIntParameter, flag))
        super().__init__(*args, **kwargs)


class FloatsParameter(law.CSVParameter):
    """Comma-separated numbers in ASCII digits (``1000,2000``); ``flag`` as for
    :class:`IntsParameter`."""

    def __init__(self, *args, flag: str = "value", **kwargs):
        kwargs.setdefault("cls", _element(AsciiFloatParameter, flag))
        super().__init__(*args, **kwargs)


class OptionalAsciiFloatParameter(luigi.OptionalFloatParameter):
    """A number in ASCII digits (see :class:`AsciiFloatParameter`), or nothing (None)."""

    def parse(self, x):
        from mlprof.ingest import ascii_float

        value = super().parse(x)
        if value is not None and isinstance(x, str):
            ascii_float(x, "--" + getattr(self, "_mlprof_name", "value"))
        return value


def settings_parameter(name: str, fields: Mapping[str, Any], settings_cls: type, what: str,
                       by_name: Mapping[str, type] | None = None) -> luigi.Parameter:
    """The law parameter of option ``name`` of a settings dataclass (``settings_cls``, its
    ``fields`` by name), from its one definition there: type, default, help and ``--flag``
    (``metadata``). ``by_name`` gives the parameter class of options whose type alone does not
    say it (``batch_sizes``, ``runtimes``); ``what`` names the settings in the error a new
    field's type raises. One helper for :class:`~mlprof.measure.loadgen.settings.LoadSettings`
    and :class:`~mlprof.measure.generation.settings.GenerationSettings` (two near-copies
    before)."""
    from typing import get_type_hints

    f = fields[name]
    kind = get_type_hints(settings_cls)[name]
    meta = f.metadata
    flag = meta["flag"].removeprefix("--")
    default: Any = f.default
    param: Any
    if meta["choices"]:
        param = luigi.ChoiceParameter(default=default, choices=meta["choices"],
                                      description=meta["help"])
    elif by_name and name in by_name:
        param = by_name[name](default=default, description=meta["help"])
    elif kind == tuple[int, ...]:
        param = IntsParameter(default=default, description=meta["help"], flag=flag)
    elif kind == tuple[float, ...]:
        param = FloatsParameter(default=default, description=meta["help"], flag=flag)
    elif kind == float | None:
        param = OptionalAsciiFloatParameter(default=default, description=meta["help"])
    elif kind is int:
        param = AsciiIntParameter(default=default, description=meta["help"])
    elif kind is float:
        param = AsciiFloatParameter(default=default, description=meta["help"])
    else:  # a new field's type needs its parameter here
        raise TypeError(f"no law parameter for {what} option {name} of type {kind}")
    param._mlprof_name = flag  # named in the ASCII-digits error
    return param


def runtime_version_pairs(entries: Sequence[str], runtimes: Sequence[str],
                          fld: str = "--runtime-versions") -> list[tuple[str, str]]:
    """(runtime, version or "" for the installed one) per curve: ``entries`` (``1.20.1`` for
    the one runtime of ``runtimes``, or ``onnxruntime==1.20.1``) checked in one line naming
    ``fld``, each version once, in the order of ``runtimes``."""
    if not entries:  # the installed ones: no import of the venvs' module (numpy, 0.1 s)
        return [(rt, "") for rt in runtimes]
    from mlprof.measure.venvs import parse_runtime_version

    wanted: dict[str, list[str]] = {}
    for entry in entries:
        name, sep, _ = str(entry).partition("==")
        if sep:
            rt = canonical_runtime(name.strip())
            if rt not in runtimes:
                raise MLProfError(f"{entry!r}: {rt!r} is not one of --runtimes", field=fld)
        elif len(runtimes) == 1:
            rt = runtimes[0]
        else:
            raise MLProfError(f"{entry!r}: with several runtimes, write "
                              "runtime==version", field=fld)
        version = parse_runtime_version(rt, entry, field=fld)
        if version not in wanted.setdefault(rt, []):
            wanted[rt].append(version)
    return [(rt, v) for rt in runtimes for v in (wanted.get(rt) or [""])]


_KINDS: dict[str, tuple[tuple, str]] = {}


def model_kind(model_file: object) -> str:
    """The model kind of ``model_file``, kept per file state (size, mtime) as
    :func:`~mlprof.model.read_model_file` keeps its specs, without the deep copy of the spec it
    returns: luigi asks every task's parameter values twice while it is made (0.1 ms each, per
    branch of a sweep)."""
    from mlprof.model import read_model_file

    name = str(model_file)
    path = os.path.abspath(os.path.expandvars(os.path.expanduser(name.partition("::")[0])))
    try:
        st = os.stat(path)
        key: tuple | None = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    kept = _KINDS.get(name)
    if key is not None and kept is not None and kept[0] == key:
        return kept[1]
    kind = read_model_file(name).model_kind
    if key is not None:
        _KINDS[name] = (key, kind)
    return kind
