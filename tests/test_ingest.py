"""The one way in (mlprof/ingest.py): every kind of hostile file is one line, never a hang."""

from __future__ import annotations

import os

import pytest

from mlprof import ingest
from mlprof.errors import MLProfError
from tests.helpers import bounded


def test_fifo_device_directory_are_one_line(tmp_path):
    fifo = tmp_path / "x.yaml"
    os.mkfifo(fifo)
    with pytest.raises(MLProfError, match="is a FIFO, not a regular file"):
        bounded(lambda: ingest.load_yaml(fifo), 20)
    with pytest.raises(MLProfError, match="is a device, not a regular file"):
        bounded(lambda: ingest.read_bytes("/dev/zero", 100), 20)
    (tmp_path / "d.py").mkdir()
    with pytest.raises(MLProfError, match="is a directory"):
        ingest.read_source(tmp_path / "d.py")
    link = tmp_path / "zero.py"
    link.symlink_to("/dev/zero")
    with pytest.raises(MLProfError, match="device"):
        bounded(lambda: ingest.read_source(link), 20)
    with pytest.raises(MLProfError, match="symbolic link; not followed"):
        ingest.read_bytes(link, 10, follow_links=False)


def test_size_limit_and_aliases(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 1000)
    with pytest.raises(MLProfError, match="at most 100"):
        ingest.load_yaml(big, max_bytes=100)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x, x]\nb: &b [*a, *a]\ntitle: [*b, *b]\n")
    with pytest.raises(MLProfError, match=r"line 2: YAML aliases \(\*a\)"):
        ingest.load_yaml(bomb, what="experiment files")
    # PyYAML's scanner is quadratic in flow depth ("[" * 5000 took 13.7 s): refused at 65
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 5000)
    with pytest.raises(MLProfError, match="line 1, column 65: nested deeper than 64") as err:
        ingest.load_yaml(deep)
    assert "\n" not in str(err.value)
    nested = tmp_path / "nested.yaml"
    nested.write_text("a:\n" + "".join(" " * i + f"b{i}:\n" for i in range(1, 70)))
    with pytest.raises(MLProfError, match="line 65, column 65: nested deeper than 64"):
        ingest.load_yaml(nested)
    ok = tmp_path / "ok.yaml"
    ok.write_text("a: " + "[" * 63 + "]" * 63 + "\n")  # 64 levels: the mapping and 63 lists
    value = ingest.load_yaml(ok)["a"]
    for _ in range(62):
        (value,) = value
    assert value == []


def test_python_source_decoding(tmp_path):
    script = tmp_path / "latin.py"
    script.write_bytes(b"# -*- coding: latin-1 -*-\nNAME = '\xe9t\xe9'\n")
    assert "NAME = 'été'" in ingest.read_source(script)
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"NAME = '\xe9'\n")
    with pytest.raises(MLProfError, match="cannot be decoded as Python reads source"):
        ingest.read_source(bad)
    with pytest.raises(MLProfError, match="not a text file"):
        ingest.read_text(bad, 100)


def test_names_and_numbers():
    assert ingest.clean_name(" v1 ", "--version") == "v1"
    assert ingest.clean_name("e\u0301", "--version") == "\u00e9"  # NFC
    with pytest.raises(MLProfError, match=r"U\+202E"):
        ingest.clean_name("v1\u202e", "--version")
    with pytest.raises(MLProfError, match=r"U\+001B"):
        ingest.clean_name("v\x1b[31m", "--version")
    assert ingest.printable("a\x1b[31mb\u202e") == "a\\x1b[31mb\\u202e"
    assert ingest.ascii_int(" 16 ", "--batch-sizes") == 16
    for bad in ("\u0661\u0660", "1_0", "", "1.0", "+"):
        with pytest.raises(MLProfError, match="--batch-sizes"):
            ingest.ascii_int(bad, "--batch-sizes")


def test_yaml_numbers_are_yaml_1_2(tmp_path):
    """PyYAML reads ``1_0`` as 10, ``1:30`` as 90 and ``010`` as 8 (YAML 1.1); mlprof reads them
    as the strings they are, so a field's own check refuses them."""
    data = ingest.parse_yaml("a: [1_0, 1:30, 010, 0x10, \u0661\u0660, 10, -3, 1.5, 1e5, .inf]",
                             tmp_path / "x.yaml")
    assert data["a"][:5] == ["1_0", "1:30", "010", "0x10", "\u0661\u0660"]
    assert data["a"][5:9] == [10, -3, 1.5, 100000.0]
    assert data["a"][9] == float("inf")


def test_experiment_batch_size_written_with_underscore_is_refused(tmp_path):
    from mlprof.experiments import load_experiment

    model = os.path.join(os.path.dirname(__file__), "..", "examples", "dnn",
                         "model_onnx_l10u128.yaml")
    exp = tmp_path / "e.yaml"
    exp.write_text(f"title: t\nmodel_files: [{os.path.abspath(model)}]\n"
                   "runtimes: [onnxruntime]\nbatch_sizes: [1_0, 8]\n")
    with pytest.raises(MLProfError, match="batch_sizes: .*'1_0'"):
        load_experiment(str(exp))


def test_a_yaml_parse_is_kept_by_content(tmp_path, monkeypatch):
    """The parse cache (issue 38: a no-op rerun imports no YAML parser) gives what the parser
    gives, parses an edited file again, keeps nothing JSON would change, and survives a broken
    entry."""
    monkeypatch.setenv("LAW_HOME", str(tmp_path / "home"))
    spec = tmp_path / "m.yaml"
    spec.write_text("model:\n  name: a\n  shape: [1, 2.5, -3]\n  flag: true\n  none: ~\n")
    first = ingest.load_yaml(spec)
    cache = ingest.yaml_cache_path(spec.read_text())
    assert os.path.isfile(cache)
    assert ingest.load_yaml(spec) == first == ingest.parse_yaml(spec.read_text(), spec)
    assert first["model"]["shape"] == [1, 2.5, -3] and isinstance(first["model"]["shape"][0], int)
    spec.write_text("model:\n  name: b\n")  # edited: parsed again
    assert ingest.load_yaml(spec) == {"model": {"name": "b"}}
    with open(ingest.yaml_cache_path(spec.read_text()), "w") as f:
        f.write("{broken")
    assert ingest.load_yaml(spec) == {"model": {"name": "b"}}  # a broken entry: parsed again
    dated = tmp_path / "d.yaml"
    dated.write_text("when: 2026-11-28\n1: one\n")  # a date and an integer key: not cached
    assert ingest.load_yaml(dated) == ingest.parse_yaml(dated.read_text(), dated)
    assert not os.path.exists(ingest.yaml_cache_path(dated.read_text()))
    bomb = tmp_path / "bomb.yaml"  # errors are never cached: the same line every time
    bomb.write_text("a: &a [x]\nb: *a\n")
    for _ in range(2):
        with pytest.raises(MLProfError, match="YAML aliases"):
            ingest.load_yaml(bomb)


def test_a_yaml_parse_cache_entry_is_read_through_the_one_way_in(tmp_path, monkeypatch):
    """A link or a FIFO where the parse cache entry would be is not read (no planted parse, no
    hang): the file is parsed again and the entry written over it."""
    monkeypatch.setenv("LAW_HOME", str(tmp_path / "home"))
    spec = tmp_path / "m.yaml"
    spec.write_text("model:\n  name: a\n")
    cache = ingest.yaml_cache_path(spec.read_text())
    os.makedirs(os.path.dirname(cache))
    planted = tmp_path / "planted.json"
    planted.write_text('{"model": {"name": "planted"}}')
    os.symlink(planted, cache)
    assert ingest.load_yaml(spec) == {"model": {"name": "a"}}
    assert not os.path.islink(cache)
    os.remove(cache)
    os.mkfifo(cache)
    assert ingest.load_yaml(spec) == {"model": {"name": "a"}}
    assert os.path.isfile(cache) and not os.path.islink(cache)
