"""The one way in for everything mlprof reads from outside: model files and directories,
experiment files, corpus scripts, input data, store records, the lock file.

Every reader goes through these functions, so that each input gets the same checks:

- **regular files only**: the file is opened with ``O_NONBLOCK`` and judged by ``fstat`` on the
  open descriptor, so a FIFO never hangs the reader, a device (``/dev/zero``) is never read
  until memory runs out, and the check cannot be raced by swapping the file after a ``stat``;
- **size limits**: a file larger than its kind can be is refused before it is read;
- **no YAML aliases**: an alias (``*name``) can expand a few hundred bytes into gigabytes
  ("billion laughs", 519 bytes ran the scheduler out of memory); no mlprof file needs them;
- **text decoded as Python decodes source** (:func:`tokenize.detect_encoding`: a BOM or a
  ``# -*- coding: latin-1 -*-`` cookie, else UTF-8) for scripts, UTF-8 for everything else;
- **one line per failure** naming the file and the field (:class:`~mlprof.errors.MLProfError`,
  exit 40), raised before anything is written.

No law import, no third-party import at module level (``yaml`` is imported when needed).
"""

from __future__ import annotations

import errno
import io
import math
import os
import re
import stat
import tokenize
import unicodedata
from typing import Any

from mlprof.errors import MLProfError

#: the largest YAML file read (model specs and experiment files are a few hundred bytes to a
#: few kB; a larger one is a mistake or worse)
MAX_YAML_BYTES = 1 << 20
#: the deepest nesting of lists and mappings in a YAML file (mlprof's files nest at most 4
#: levels). PyYAML's scanner is quadratic in the depth of flow collections: "[" * 5000, a 5 kB
#: file, took 13.7 s to refuse, and 1 MB of it would take hours; refused at depth 65 it takes
#: milliseconds
MAX_YAML_DEPTH = 64

#: the largest model script read as text (the corpus's largest script is 30 kB)
MAX_SCRIPT_BYTES = 4 << 20

#: the largest JSON record read (result records are a few kB; stats with samples < 2 MB)
MAX_RECORD_BYTES = 64 << 20


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a device", ...)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _err(message: str, path: str | os.PathLike, field: str | None,
         source: str | os.PathLike | None) -> MLProfError:
    """An error naming ``source`` and ``field`` when the path was named in another file, else
    naming the path itself."""
    if source is not None:
        return MLProfError(f"{os.fspath(path)} {message}", source, field)
    return MLProfError(message, path, field)


def check_regular(path: str | os.PathLike, *, field: str | None = None,
                  source: str | os.PathLike | None = None, follow_links: bool = True) -> int:
    """The size of ``path`` if it is a regular file (links followed unless ``follow_links`` is
    false), else a one-line :class:`MLProfError`. Never opens the file."""
    try:
        st = os.stat(path) if follow_links else os.lstat(path)
    except OSError as e:
        raise _err(f"cannot be read: {e.strerror or e}", path, field, source) from None
    if not stat.S_ISREG(st.st_mode):
        raise _err(f"is {file_kind(st.st_mode)}, not a regular file", path, field, source)
    return st.st_size


def read_bytes(path: str | os.PathLike, max_bytes: int, *, field: str | None = None,
               source: str | os.PathLike | None = None, follow_links: bool = True,
               what: str = "this file") -> bytes:
    """The content of the regular file ``path``, at most ``max_bytes`` long.

    Opened with ``O_NONBLOCK`` (and ``O_NOFOLLOW`` unless ``follow_links``) and judged on the
    open descriptor: a FIFO, device, socket or directory is one line, never a hang.
    """
    with open_regular(path, max_bytes, field=field, source=source, follow_links=follow_links,
                      what=what) as f:
        chunks = []
        total = 0
        while True:  # a file growing while read is cut at the limit, never read without end
            block = f.read(min(1 << 20, max_bytes + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
            if total > max_bytes:
                raise _err(f"grew beyond {max_bytes} bytes while read", path, field, source)
        return b"".join(chunks)


def decode_text(data: bytes, path: str | os.PathLike, *, python_source: bool = False,
                field: str | None = None) -> str:
    """``data`` as text: as Python decodes source (BOM, coding cookie, else UTF-8) with
    ``python_source``, else UTF-8 (a BOM is dropped); one line when it cannot be decoded."""
    try:
        if python_source:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        else:
            encoding = "utf-8-sig"
        return data.decode(encoding)
    except SyntaxError as e:  # an unknown coding cookie, or no cookie and not UTF-8
        raise MLProfError("not a text file: cannot be decoded as Python reads source "
                          f"({e.msg})", path, field) from None
    except (UnicodeDecodeError, LookupError) as e:
        detail = (f"byte {e.start}" if isinstance(e, UnicodeDecodeError) else str(e))
        how = "as Python reads source (coding cookie or UTF-8)" if python_source else "as UTF-8"
        raise MLProfError(f"not a text file: cannot be decoded {how} ({detail})", path,
                          field) from None


def read_text(path: str | os.PathLike, max_bytes: int, *, python_source: bool = False,
              field: str | None = None, source: str | os.PathLike | None = None,
              what: str = "this file") -> str:
    """:func:`read_bytes` then :func:`decode_text`."""
    data = read_bytes(path, max_bytes, field=field, source=source, what=what)
    return decode_text(data, path, python_source=python_source, field=field)


def read_source(path: str | os.PathLike, max_bytes: int = MAX_SCRIPT_BYTES) -> str:
    """A Python script's text, decoded as Python decodes it (a latin-1 coding cookie works)."""
    return read_text(path, max_bytes, python_source=True, what="a model script")


_LOADER: Any = None


def _strict_loader() -> Any:
    """PyYAML's safe loader with YAML 1.2's numbers: decimal integers and floats in ASCII
    digits only. YAML 1.1 (PyYAML's default) reads ``1_0`` as 10, ``1:30`` as 90 (base 60),
    ``010`` as 8 (octal) and ``0x10`` as 16: a batch size written so is taken for a number
    nobody meant; here each stays a string, which the field's check refuses in one line."""
    global _LOADER
    if _LOADER is None:
        import re

        import yaml

        class StrictLoader(yaml.SafeLoader):
            """Safe loader with YAML 1.2 core-schema numbers."""

        numeric = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
        StrictLoader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag not in numeric]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
        StrictLoader.add_implicit_resolver(
            "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))
        StrictLoader.add_implicit_resolver(
            "tag:yaml.org,2002:float",
            re.compile(r"^(?:[-+]?(?:(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?"
                       r"|[0-9]+[eE][-+]?[0-9]+)"
                       r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+.0123456789"))
        _LOADER = StrictLoader
    return _LOADER


def parse_yaml(text: str, path: str | os.PathLike, what: str = "mlprof files") -> Any:
    """YAML ``text`` with the safe loader and no aliases; errors are one line with line and
    column."""
    import yaml

    try:
        loader = _strict_loader()
        depth = 0
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                raise MLProfError(f"line {mark.line + 1}: YAML aliases (*{event.anchor}) are "
                                  f"not accepted in {what}", path)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    mark = event.start_mark
                    raise MLProfError(
                        f"line {mark.line + 1}, column {mark.column + 1}: nested deeper than "
                        f"{MAX_YAML_DEPTH} levels (mlprof's files nest a few)", path)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise MLProfError(f"malformed YAML: {where}{problem}", path) from None
    except RecursionError:
        raise MLProfError("malformed YAML: nested too deeply", path) from None


#: the directory of parsed YAML files beside law's index (:func:`yaml_cache_path`)
YAML_CACHE_DIR = "mlprof-yaml"


def _stamp(path: str | None) -> str:
    """``size:mtime_ns`` of ``path`` ("?" if it cannot be read): changes when the file does."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        st = None
    return f"{st.st_size}:{st.st_mtime_ns}" if st else "?"


def yaml_cache_path(text: str) -> str:
    """Where :func:`load_yaml` keeps the parse of ``text``: ``$LAW_HOME/mlprof-yaml/<key>.json``
    (``~/.cache/mlprof/mlprof-yaml`` without a law home), keyed by the text itself (SHA-256),
    this module's file (the loader's rules) and PyYAML's (its version), each by size and mtime.

    Why: importing PyYAML and parsing a model YAML twice (the alias/depth check, then the load)
    took 15-25 ms of every ``law run`` (cProfile of a no-op rerun of the quick start: 0.054 of
    1.37 s, 4 %), for a file that is the same from run to run. Keyed by content, so an edited
    file is parsed again; beside law's index like :func:`mlprof.model.spec.checked_marker`, not
    in the store (a parse is no result, and a command that fails writes nothing there)."""
    import hashlib
    import importlib.util

    try:
        found = importlib.util.find_spec("yaml")
    except (ImportError, ValueError):
        found = None
    key = hashlib.sha256("\0".join([text, _stamp(__file__),
                                     _stamp(found.origin if found else None)]).encode(
        "utf-8", "surrogatepass")).hexdigest()[:32]
    home = os.environ.get("LAW_HOME") or os.path.join(os.path.expanduser("~"), ".cache",
                                                      "mlprof")
    return os.path.join(home, YAML_CACHE_DIR, key + ".json")


def _json_exact(value: Any) -> bool:
    """Whether ``value`` comes back from JSON as it is: mappings with string keys, lists,
    strings, integers, finite floats, booleans and None (not dates, sets, bytes: those YAML
    files are parsed every time)."""
    if value is None or isinstance(value, (str, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_exact(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_exact(v) for k, v in value.items())
    return False


def load_yaml(path: str | os.PathLike, max_bytes: int = MAX_YAML_BYTES,
              what: str = "mlprof files", subject: str = "a YAML file") -> Any:
    """A YAML file read through the one way in: regular file, size limit, UTF-8, no aliases.

    ``what`` names the kind of file in the alias message ("not accepted in model files"),
    ``subject`` in the size message ("a model YAML has at most ...").

    The file is always read and checked; its parse comes from :func:`yaml_cache_path` when
    this text was parsed before (then PyYAML is not imported: a no-op rerun of the quick start
    needs no YAML parser). Only a successful parse that JSON keeps exactly is cached; a
    missing, unreadable or broken cache entry means parsing again.
    """
    import json

    text = read_text(path, max_bytes, what=subject)
    cache = yaml_cache_path(text)
    try:  # through the one way in too: a link, a FIFO or a huge file there is no parse
        if not os.path.islink(cache):
            return load_json(cache, 4 * max_bytes)
    except MLProfError:
        pass
    data = parse_yaml(text, path, what)
    if _json_exact(data):
        from mlprof.util import write_text_atomic

        try:
            write_text_atomic(cache, json.dumps(data, allow_nan=False))
        except (OSError, ValueError, RecursionError):
            pass  # a read-only home: parse next time again
    return data


def load_json(path: str | os.PathLike, max_bytes: int = MAX_RECORD_BYTES) -> Any:
    """A JSON file read through the one way in (regular file, size limit, UTF-8)."""
    import json

    text = read_text(path, max_bytes, what="a record")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise MLProfError(f"is not valid JSON: {str(e)[:80]}", path) from None


#: bidirectional-text controls (Trojan Source, CVE-2021-42574): they reorder what a terminal
#: shows, so two different names can look the same
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
                          "\u061c")


def clean_name(text: str, field: str, *, source: str | os.PathLike | None = None) -> str:
    """A name given from outside (a version, a model name), NFC-normalized and stripped; control
    and bidi characters are refused in one line (they make different names look alike)."""
    value = unicodedata.normalize("NFC", str(text)).strip()
    for ch in value:
        if ch in BIDI_CONTROLS or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            raise MLProfError(f"contains the control character U+{ord(ch):04X}; names are "
                              "printable text", source, field)
    return value


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control and bidi characters escaped (a directory
    name with an escape sequence must not recolour or rewrite the terminal)."""
    out = []
    for ch in str(text):
        if ch in BIDI_CONTROLS or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def ascii_int(text: str, field: str, *, source: str | os.PathLike | None = None) -> int:
    """An integer written in ASCII digits (an optional sign); ``int()`` alone also takes
    Arabic-Indic digits and ``1_0``."""
    value = str(text).strip()
    body = value[1:] if value[:1] in "+-" else value
    if not body or not body.isascii() or not body.isdigit():
        raise MLProfError(f"{value!r} is not an integer (ASCII digits)", source, field)
    return int(value)


def open_regular(path: str | os.PathLike, max_bytes: int, *, field: str | None = None,
                 source: str | os.PathLike | None = None, follow_links: bool = True,
                 what: str = "this file") -> io.BufferedReader:
    """``path`` opened for reading in binary, after the checks of :func:`read_bytes` (regular
    file judged by ``fstat`` on an ``O_NONBLOCK`` descriptor, at most ``max_bytes``).

    For readers that stream a file (a CSV of samples to ``numpy.loadtxt``) instead of taking
    its bytes: a FIFO at a result file must not hang a report, a device must not be read until
    memory runs out. The caller closes the file (``with open_regular(...) as f``).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _err("is a symbolic link; not followed" if not follow_links else
                       "is a loop of symbolic links", path, field, source) from None
        raise _err(f"cannot be read: {e.strerror or e}", path, field, source) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _err(f"is {file_kind(st.st_mode)}, not a regular file", path, field, source)
        if st.st_size > max_bytes:
            raise _err(f"is {st.st_size} bytes; {what} has at most {max_bytes}", path, field,
                       source)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_ASCII_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)",
                          re.ASCII | re.IGNORECASE)


def ascii_float(text: str, field: str, *, source: str | os.PathLike | None = None) -> float:
    """A number written in ASCII (digits, an optional sign, point and exponent, or ``inf`` and
    ``nan``, which the caller judges); ``float()`` alone also takes Arabic-Indic digits and
    ``1_0``. Added for issue 22 (numbers): a setting is read as the user sees it or refused."""
    value = str(text).strip()
    if not _ASCII_FLOAT.fullmatch(value):
        raise MLProfError(f"{value!r} is not a number (ASCII digits)", source, field)
    return float(value)
