"""One declaration per task family (issue 20): every task family in luigi's registry has one,
its ``output()`` names exactly the declared files, and ``mlprof store`` judges a directory of
them by it: ``ok`` with all files, ``partial`` with one missing, ``corrupt`` with one damaged.

Nothing runs: the tasks are only constructed, and their output files are written here with
valid (or damaged) contents of their kind.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlprof.results import families as decl
from mlprof.results import store as st
from tests.test_accounting import _construct, base_kwargs, families, outputs

#: valid contents by file type (what a check accepts)
VALID = {
    ".json": b'{"format_version": 1}', ".csv": b"batch_size,median_ms\n1,0.5\n",
    ".txt": b"summary\n", ".parquet": b"PAR1" + b"\0" * 16 + b"PAR1",
    ".png": b"\x89PNG\r\n\x1a\n" + b"\0" * 16 + b"IEND\xaeB`\x82",
    ".pdf": b"%PDF-1.4\n%%EOF\n", ".svg": b"<svg xmlns='http://www.w3.org/2000/svg'></svg>",
    ".onnx": b"\x08\x08\x12\x04test",
}
#: a load record is checked field by field (mlprof.results.records.LoadRecord): the least that
#: reads
VALID_LOAD = (b'{"format_version": 1, "record": "load", "load": {"scenario": "streams"}, '
              b'"points": []}')
#: likewise a generation record (mlprof.results.records.GenerationRecord): the least that reads
VALID_GENERATION = (b'{"format_version": 2, "record": "generation", "point": {"prompt_length": '
                    b'16, "batch_size": 1, "new_tokens": 8}, "reference": "torch", "rounds": 1, '
                    b'"runtimes": [{"runtime": "torch", "metrics": {"ttft": 1.0, "tpot": '
                    b'0.5}, "calls": 1}], "speedups": []}')
#: damaged contents by file type (an interrupted copy, a file of another kind)
DAMAGED = {".json": b'{"format_version": ', ".csv": b"", ".txt": b"\0\0",
           ".parquet": b"PAR1 cut", ".png": b"\x89PNG\r\n", ".pdf": b"%PDF-1.4\n",
           ".svg": b"<svg", ".onnx": b"not a model"}

CASES = [cls for cls in families()]


def _task(cls):
    for kind in ("yaml", "script", "decoder"):
        task = _construct(cls, base_kwargs(cls, kind))
        if task is not None:
            return task
    pytest.fail(f"{cls.__name__} cannot be constructed")


def _write(paths: set[str], dir_keys: set[str]) -> None:
    for p in paths:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if os.path.basename(p) in dir_keys:
            os.makedirs(p, exist_ok=True)
            Path(p, "index.html").write_text("<html></html>")
        else:
            name = os.path.basename(p)
            load = name.startswith("load_") and name.endswith(".json")
            gen = name.startswith("generation_") and name.endswith(".json")
            Path(p).write_bytes(VALID_LOAD if load else VALID_GENERATION if gen else
                                VALID.get(os.path.splitext(p)[1], b"text\n"))


def _entry(store: Path, directory: str) -> st.StoreEntry:
    found = [e for e in st.scan(store).entries if e.path == directory]
    assert len(found) == 1, [e.path for e in st.scan(store).entries]
    return found[0]


def test_every_registered_family_is_declared():
    missing = [c.__name__ for c in CASES if decl.family(c.__name__) is None]
    assert not missing, f"task families without a declaration: {missing}"
    stale = set(decl.FAMILIES) - {c.__name__ for c in CASES}
    assert not stale, f"declarations of no task family: {sorted(stale)}"


@pytest.mark.parametrize("cls", CASES, ids=[c.__name__ for c in CASES])
def test_outputs_are_the_declared_files_and_scan_by_them(cls, store):
    task = _task(cls)
    fam = decl.FAMILIES[cls.__name__]
    paths = outputs(task)
    dirs = {os.path.dirname(p) for p in paths}
    assert len(dirs) == 1, f"{cls.__name__} writes into several directories: {dirs}"
    directory = dirs.pop()
    names = {os.path.basename(p) for p in paths}
    # every output is declared (no file the store cannot judge)
    units, undeclared = fam.units(names)
    assert not undeclared, f"{cls.__name__} writes undeclared files: {undeclared}"
    dir_names = {n for n in names if any(s.is_dir and s.match(n) is not None
                                         for s in fam.specs)}
    _write(paths, dir_names)
    entry = _entry(store, directory)
    assert entry.status == "ok", (cls.__name__, entry.status, entry.problem, sorted(names))

    # one file damaged: corrupt, naming the file
    victim = sorted(n for n in names if n not in dir_names)
    if victim:
        path = os.path.join(directory, victim[0])
        good = Path(path).read_bytes()
        Path(path).write_bytes(DAMAGED.get(os.path.splitext(path)[1], b"\0"))
        entry = _entry(store, directory)
        assert entry.status == "corrupt", (cls.__name__, victim[0], entry.status)
        assert entry.problem and entry.problem.startswith(victim[0])
        Path(path).write_bytes(good)

    # one file missing: partial (empty when it was the only one)
    for name in sorted(names):
        gone = os.path.join(directory, name)
        moved = os.path.join(os.path.dirname(directory), "." + name + ".moved")
        os.rename(gone, moved)
        entry = _entry(store, directory)
        expected = "partial" if len(names) > 1 or os.listdir(directory) else "empty"
        if len(units) > 1 and len(fam.specs) == 1:
            expected = "ok"  # several complete units (plot types): one less is still complete
        if any(s.key in fam.cleanable and s.match(name) is not None for s in fam.specs):
            expected = "cleaned"  # ExportOnnx without its model.onnx
        if any(s.key in fam.optional and s.match(name) is not None for s in fam.specs):
            expected = "ok"  # QuantizeModel's model.yaml, which only a YAML model has
        assert entry.status == expected, (cls.__name__, name, entry.status)
        os.rename(moved, gone)


def test_a_fifo_at_a_result_name_is_damage_not_a_hang(store):
    d = store / "Report" / "stores_0123abcd" / "v1"
    d.mkdir(parents=True)
    for name in ("report.csv", "summary.txt"):
        (d / name).write_bytes(VALID[os.path.splitext(name)[1]])
    os.mkfifo(d / "report.parquet")
    entry = _entry(store, str(d))
    assert entry.status == "corrupt"
    assert entry.problem == "report.parquet is not a regular file"


def test_store_list_names_the_damaged_file(store):
    d = store / "MeasurePeak" / "host" / "onnxruntime-1.0__cpu" / "threads1" / "v1"
    d.mkdir(parents=True)
    (d / "peak.json").write_text("[1, 2]")
    text = st.format_entries(st.scan(store).entries, str(store))
    assert "corrupt" in text
    assert "corrupt: MeasurePeak/host/onnxruntime-1.0__cpu/threads1/v1/peak.json is not a " \
           "JSON object" in text
