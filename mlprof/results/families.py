"""One declaration per task family: its path segments, its files, when it is complete, how a
damaged file is told, and its failure records.

Every task's ``output()`` names its files through its family's :meth:`Family.files`, and
``mlprof store`` judges a version directory with :meth:`Family.status`, so the two cannot
drift apart (``tests/test_families.py`` takes every task family from luigi's registry, builds a
directory from the task's own ``output()`` and requires it to scan ``ok``, ``partial`` with a
file missing and ``corrupt`` with one damaged).

A directory may hold several *units* of one family: the batch sizes of a MeasureRuntime, the
batch-size sets of a MergeRuntimes, the plot variants of a PlotRuntimes. A unit is complete
when it has every required file; the directory is ``ok`` when it has at least one unit and all
of its units are complete, ``partial`` when a file is missing, ``corrupt`` when a file fails
its check, ``failed`` when it holds a failure record.

The checks read at most :data:`CHECK_BYTES` of a file and never open anything but a regular
file (a FIFO or a device at a result's name is damage, not something to wait on). They answer
"is this file what its name says" (a JSON object, a CSV with a header, a PNG, a PDF, ...), not
"are its numbers right": that is :mod:`mlprof.measure.results`' job when a record is read.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mlprof.results import layout

#: the most a check reads of one file (result JSON records are a few kB; a larger file is
#: judged by its beginning and end)
CHECK_BYTES = 8 * 1024 * 1024

#: plot file types the plot tasks write
PLOT_TYPES = ("pdf", "png", "svg")

# --- checks -------------------------------------------------------------------------------------


def _read_head_tail(path: str, n: int = 4096, whole: bool = False) -> tuple[bytes, bytes, int]:
    """The first and last ``n`` bytes of a regular file (the whole file with ``whole``, up to
    :data:`CHECK_BYTES`) and its size; ``ValueError`` for anything else (never blocks on a
    FIFO, never follows a link)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise ValueError(f"cannot be read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file")
        if whole:
            if st.st_size > CHECK_BYTES:
                raise ValueError(f"is {st.st_size} bytes, more than a record can be "
                                 f"({CHECK_BYTES})")
            n = st.st_size
        head = os.pread(fd, n, 0)
        tail = os.pread(fd, n, max(st.st_size - n, 0)) if st.st_size > n else head
        return head, tail, st.st_size
    finally:
        os.close(fd)


def _json_object(path: str) -> dict:
    data, _, _ = _read_head_tail(path, whole=True)
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"is not valid JSON: {str(e)[:80]}") from None
    if not isinstance(value, dict):
        raise ValueError("is not a JSON object")
    return value


def check_json(path: str) -> None:
    """A JSON object (every record mlprof writes is one)."""
    _json_object(path)


def check_load_json(path: str) -> None:
    """A load record whose every field reads (:class:`mlprof.results.records.LoadRecord`)."""
    from mlprof.errors import CorruptResult
    from mlprof.results.records import LoadRecord

    try:
        LoadRecord.from_json(_json_object(path), path)
    except CorruptResult as e:
        raise ValueError(f"{e.field}: {e.message}" if e.field else e.message) from None


def check_generation_json(path: str) -> None:
    """A generation record whose every field reads
    (:class:`mlprof.results.records.GenerationRecord`)."""
    from mlprof.errors import CorruptResult
    from mlprof.results.records import GenerationRecord

    try:
        GenerationRecord.from_json(_json_object(path), path)
    except CorruptResult as e:
        raise ValueError(f"{e.field}: {e.message}" if e.field else e.message) from None


def check_csv(path: str) -> None:
    """Text with a header line of comma-separated names."""
    head, _, size = _read_head_tail(path)
    if size == 0:
        raise ValueError("is empty")
    try:
        text = head.decode("utf-8", errors="strict" if size <= len(head) else "ignore")
    except UnicodeDecodeError:
        raise ValueError("is not text") from None
    if "\0" in text or not text.split("\n", 1)[0].strip():
        raise ValueError("has no header line")


def check_text(path: str) -> None:
    """UTF-8 text (may be empty: a summary of nothing)."""
    head, _, size = _read_head_tail(path)
    if b"\0" in head:
        raise ValueError("is not text")


def _magic(prefix: bytes, suffix: bytes = b"", what: str = "") -> Callable[[str], None]:
    def check(path: str) -> None:
        head, tail, size = _read_head_tail(path)
        if size == 0 or not head.startswith(prefix) or (suffix and suffix not in tail):
            raise ValueError(f"is not a complete {what} file")
    check.__doc__ = f"A {what} file (its signature{' and end' if suffix else ''})."
    return check


check_png = _magic(b"\x89PNG\r\n\x1a\n", b"IEND", "PNG")
check_pdf = _magic(b"%PDF", b"%%EOF", "PDF")
check_parquet = _magic(b"PAR1", b"PAR1", "Parquet")


def check_svg(path: str) -> None:
    """An SVG document (``<svg`` at its start, ``</svg>`` at its end)."""
    head, tail, size = _read_head_tail(path)
    if b"<svg" not in head or b"</svg>" not in tail:
        raise ValueError("is not a complete SVG file")


def check_onnx(path: str) -> None:
    """An ONNX model: a protobuf ``ModelProto`` starts with its ``ir_version`` (field 1)."""
    head, _, size = _read_head_tail(path, 16)
    if size == 0 or head[:1] != b"\x08":
        raise ValueError("is not an ONNX model")


def check_dir(path: str) -> None:
    """A directory with something in it."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError("is not a directory")
    if not any(True for e in os.scandir(path) if not e.name.startswith(".")):
        raise ValueError("is an empty directory")


_CHECKS: dict[str, Callable[[str], None]] = {
    ".json": check_json, ".csv": check_csv, ".txt": check_text, ".parquet": check_parquet,
    ".onnx": check_onnx, ".png": check_png, ".pdf": check_pdf, ".svg": check_svg,
}


def check_file(path: str, is_dir: bool = False,
               check: Callable[[str], None] | None = None) -> str | None:
    """Why ``path`` is not what its name says (one line), or None when it is; ``check``: the
    file's own check (else the one of its kind: a directory, its extension)."""
    if check is None and is_dir:
        check = check_dir
    elif check is None:
        check = _CHECKS.get(os.path.splitext(path)[1], check_text)
    try:
        check(path)
    except (ValueError, OSError) as e:
        return f"{os.path.basename(path)} {e}"
    return None


# --- declarations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileSpec:
    """One output of a family, recognised by a regular expression on its name.

    The group ``unit`` (when present) tells which unit of the directory the file belongs to;
    files of one unit share it. ``is_dir``: an output directory (a dashboard site, a folder of
    history plots).
    """

    key: str
    pattern: str
    is_dir: bool = False
    #: the file's own check (else that of its extension: :func:`check_file`)
    check: Callable[[str], None] | None = None

    def match(self, name: str) -> str | None:
        """The file's unit (``""`` without a ``unit`` group), or None for another name."""
        m = re.fullmatch(self.pattern, name)
        if not m:
            return None
        return m.groupdict().get("unit") or ""


@dataclass(frozen=True)
class Family:
    """A task family's declaration.

    ``files`` builds the output names from the task's naming values (what ``output()`` calls);
    ``specs`` recognise them in a directory; a unit is complete with every spec's key present
    (the plot specs of one unit count once: any file type completes it).
    """

    name: str
    files: Callable[..., dict[str, str]]
    specs: tuple[FileSpec, ...]
    #: ExportOnnx keeps its record after ``mlprof store clean`` removed the model: ``cleaned``
    cleanable: tuple[str, ...] = ()
    #: files that only some directories of the family have (QuantizeModel's ``model.yaml``,
    #: written only for a YAML model): checked where present, never required
    optional: tuple[str, ...] = ()

    @property
    def dir_keys(self) -> frozenset[str]:
        """The keys of the output directories (``is_dir`` specs): targets of directories."""
        return frozenset(s.key for s in self.specs if s.is_dir)

    @property
    def segments(self) -> tuple[str, ...]:
        """The path segments between ``<store>/<Task>/`` and the version (the store layout)."""
        return layout.LAYOUTS.get(self.name, ())

    def units(self, names: Iterable[str]) -> tuple[dict[str, set[str]], list[str]]:
        """``{unit: keys present}`` of the output names among ``names``, and the names that
        are no output of this family (ignored by the status)."""
        units: dict[str, set[str]] = {}
        other = []
        for name in names:
            for spec in self.specs:
                unit = spec.match(name)
                if unit is not None:
                    units.setdefault(unit, set()).add(spec.key)
                    break
            else:
                other.append(name)
        return units, other

    def status(self, path: str, files: Iterable[str], dirs: Iterable[str] = (),
               check: bool = True) -> tuple[str, int, str | None]:
        """``(status, failures, problem)`` of the version directory ``path`` holding the
        top-level ``files`` and ``dirs`` (temporary and hidden names already left out).

        Statuses: ``failed`` (failure records), ``corrupt`` (an output fails its check:
        ``problem`` says which and why), ``ok``, ``cleaned``, ``partial``, ``empty``.
        """
        files, dirs = set(files), set(dirs)
        failures = sum(1 for f in files if is_failure_record(f))
        outputs = {f for f in files if not f.startswith("_failure")}
        file_units, _ = self.units(sorted(outputs))
        dir_units, _ = self.units(sorted(dirs))
        units: dict[str, set[str]] = {}
        for u, keys in [*file_units.items(), *dir_units.items()]:
            units.setdefault(u, set()).update(keys)
        if check:
            for name in sorted(outputs | dirs):
                spec = next((s for s in self.specs if s.match(name) is not None), None)
                if spec is not None:
                    problem = check_file(os.path.join(path, name), is_dir=name in dirs,
                                         check=spec.check)
                    if problem:
                        return "corrupt", failures, problem
        if failures:
            return "failed", failures, None
        required = {s.key for s in self.specs} - set(self.optional)
        if units and all(keys >= required for keys in units.values()):
            return "ok", 0, None
        if self.cleanable and units and all(
                keys >= required - set(self.cleanable) for keys in units.values()):
            return "cleaned", 0, None
        return ("partial" if outputs or dirs else "empty"), 0, None


def is_failure_record(name: str) -> bool:
    """A failure record (``_failure.json``, ``_failure_bs_<N>.json``, ``_failure_<load
    point>.json``): why a task failed."""
    return (name == layout.FAILURE_FILE or layout.parse_branch_failure(name) is not None
            or layout.parse_load_failure(name) is not None
            or layout.parse_generation_failure(name) is not None)


def _plot_spec(stem_pattern: str) -> FileSpec:
    """The plots of a unit: ``<stem>[__<options tag>].<pdf|png|svg>``."""
    return FileSpec("plot", rf"(?P<unit>{stem_pattern})(?:__[^.]+)?\.(?:pdf|png|svg)")


def _plots(stem: str, tag: str = "", file_types: Iterable[str] = ("pdf",)) -> dict[str, str]:
    return {ext: f"{stem}{tag}.{ext}" for ext in file_types}


def _plots_and_tables(stem: str, tag: str = "", file_types: Iterable[str] = ("pdf",)
                      ) -> dict[str, str]:
    """A plot task's files with its table beside the plots (PlotProfile, PlotLoad,
    PlotGeneration): the plots, ``<stem>.csv`` and ``<stem>.txt``."""
    return {**_plots(stem, tag, file_types), "csv": f"{stem}.csv", "text": f"{stem}.txt"}


def _table_and_record(prefix: str, unit_pattern: str,
                      check: Callable[[str], None] | None = None
                      ) -> tuple[FileSpec, ...]:
    """A measuring family's unit: ``<prefix><unit>.csv`` (its table) and ``<prefix><unit>.json``
    (its record, read back by ``check`` when given) (ProfileRuntime, MeasureLoad,
    MeasureGeneration)."""
    return (FileSpec("csv", rf"{prefix}(?P<unit>{unit_pattern})\.csv"),
            FileSpec("json", rf"{prefix}(?P<unit>{unit_pattern})\.json", check=check))


def _plot_table_specs(stem_pattern: str) -> tuple[FileSpec, ...]:
    """The outputs of :func:`_plots_and_tables` for a unit named by ``stem_pattern``: the plots,
    the CSV and the text (matched whole, so a lazy pattern takes the unit up to the dot)."""
    return (_plot_spec(stem_pattern),
            FileSpec("csv", rf"(?P<unit>{stem_pattern})\.csv"),
            FileSpec("text", rf"(?P<unit>{stem_pattern})\.txt"))


_BS = r"bs_[0-9A-Za-z_-]+?"
#: a profile's time budget (mlprof.results.layout.budget_tag)
#: a profile's time budget in its file names; files written before the budget existed (format
#: 0: every --n-calls call profiled) have none
_BUDGET = r"(?:_(?:budget\d+s|nobudget))?"

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("DiscoverModels", lambda: {"manifest": "manifest.json"},
           (FileSpec("manifest", r"manifest\.json"),)),
    Family("ExportOnnx", lambda: {"onnx": "model.onnx", "json": "export.json"},
           (FileSpec("onnx", r"model\.onnx"), FileSpec("json", r"export\.json")),
           cleanable=("onnx",)),
    Family("QuantizeModel", lambda yaml=False: {"onnx": "model.onnx", "json": "quantize.json",
                                                **({"yaml": "model.yaml"} if yaml else {})},
           (FileSpec("onnx", r"model\.onnx"), FileSpec("yaml", r"model\.yaml"),
            FileSpec("json", r"quantize\.json")), optional=("yaml",)),
    Family("MeasureRuntime", layout.branch_files,
           (FileSpec("csv", r"runtime_bs_(?P<unit>\d+)\.csv"),
            FileSpec("json", r"runtime_bs_(?P<unit>\d+)\.json"))),
    Family("MergeRuntimes", layout.merged_files,
           (FileSpec("raw", rf"runtimes_(?P<unit>{_BS})\.csv"),
            FileSpec("stats", rf"stats_(?P<unit>{_BS})\.csv"),
            FileSpec("provenance", rf"provenance_(?P<unit>{_BS})\.json"))),
    Family("CompareInterleaved", layout.interleaved_files,
           (FileSpec("table", rf"speedup_(?P<unit>{_BS}_il\d+)\.csv"),
            FileSpec("rounds", rf"rounds_(?P<unit>{_BS}_il\d+)\.csv"),
            FileSpec("provenance", rf"provenance_(?P<unit>{_BS}_il\d+)\.json"))),
    Family("ComparePrecisions", layout.precision_files,
           (FileSpec("csv", rf"precisions_(?P<unit>{_BS}_il\d+{_BUDGET})\.csv"),
            FileSpec("text", rf"precisions_(?P<unit>{_BS}_il\d+{_BUDGET})\.txt"))),
    Family("ProfileRuntime", layout.profile_files,
           _table_and_record("profile_bs_", rf"\d+{_BUDGET}")),
    Family("PlotProfile", _plots_and_tables,
           _plot_table_specs(rf"profile_{_BS}_top\d+{_BUDGET}")),
    Family("MeasureLoad", layout.load_files,
           _table_and_record("load_", r"(?:streams|server)_[0-9A-Za-z_]+", check_load_json)),
    Family("PlotLoad", _plots_and_tables,
           _plot_table_specs(r"load_(?:streams|server)_[0-9A-Za-z_]+?")),
    Family("MeasureGeneration", layout.generation_files,
           _table_and_record("generation_", r"p\d+_bs\d+", check_generation_json)),
    Family("PlotGeneration", _plots_and_tables,
           _plot_table_specs(r"generation_p[0-9x-]+_bs[0-9x-]+(?:_[0-9a-f]{8})?")),
    Family("PlotRuntimes", _plots, (_plot_spec(r"runtimes_[^.]+?"),)),
    Family("PlotMultiRuntimes", _plots, (_plot_spec(r"(?:runtimes|speedup)_[^.]+?"),)),
    Family("PlotThroughput", _plots, (_plot_spec(r"throughput_[^.]+?"),)),
    Family("PlotSpeedup", _plots, (_plot_spec(r"speedup_vs-[^.]+?"),)),
    Family("MeasurePeak", lambda: {"peak": layout.PEAK_FILE},
           (FileSpec("peak", re.escape(layout.PEAK_FILE)),)),
    Family("CalibrateNoise", lambda: {"noise": layout.NOISE_FILE},
           (FileSpec("noise", re.escape(layout.NOISE_FILE)),)),
    Family("Report", lambda: {"csv": "report.csv", "parquet": "report.parquet",
                              "load": "load.csv", "generation": "generation.csv",
                              "summary": "summary.txt"},
           (FileSpec("csv", r"report\.csv"), FileSpec("parquet", r"report\.parquet"),
            FileSpec("load", r"load\.csv"), FileSpec("generation", r"generation\.csv"),
            FileSpec("summary", r"summary\.txt")),
           # a Report written before load results (issue 25) has no load.csv, one before
           # generation results (issue 37) no generation.csv: still whole
           optional=("load", "generation")),
    Family("PlotHistory", lambda statistic, view="panels": {
               "alerts": f"alerts_{statistic}.csv",
               "plots": f"history_{statistic}" + ("" if view == "panels" else f"__{view}")},
           (FileSpec("alerts", r"alerts_(?P<unit>[a-z0-9_]+)\.csv"),
            FileSpec("plots", r"history_(?P<unit>[a-z0-9_]+?)(?:__[a-z0-9_-]+)?", is_dir=True))),
    Family("Dashboard", lambda: {"dashboard": "dashboard"},
           (FileSpec("dashboard", r"dashboard", is_dir=True),)),
    Family("RunExperiment", lambda: {"status": "status.json"},
           (FileSpec("status", r"status\.json"),)),
    Family("ConfirmResults", lambda: {"confirm": "confirm.json"},
           (FileSpec("confirm", r"confirm\.json"),)),
    Family("Nightly", lambda confirm=True: {
               "nightly": "nightly.json" if confirm else "nightly_noconfirm.json"},
           (FileSpec("nightly", r"nightly(?P<unit>_noconfirm)?\.json"),)),
)}


def family(task: str) -> Family | None:
    """The declaration of ``task`` (a task family's name), None for an unknown one."""
    return FAMILIES.get(task)
