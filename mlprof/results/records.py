"""Typed, versioned records: what every JSON record mlprof writes starts with, and the model a
result is about.

A store kept for years by a nightly outlives the code that wrote it (asv keeps an
``api_version`` in each result file, pyperf a ``_JSON_VERSION``). Every record written from
now on carries ``format_version`` (:data:`FORMAT_VERSION`) and ``record`` (its kind: ``branch``,
``merged``, ``profile``, ``peak``, ``interleaved``); a record without them was written before
(format 0) and is read as it is, through :func:`model_identity` for what changed meaning. A
record of a *newer* format than this code reads is refused in one line (its fields may mean
something else), never guessed at.

The model a result is about (:class:`ModelIdentity`) is the model the user named: the YAML,
ONNX file or script and its name and label. A model script measured on ONNX Runtime runs its
export, whose own spec (``provenance["model"]``) is named ``model``; a label or name taken from
there titled every script "model" on the dashboard (issue 20). Format 1 writes the identity
under ``model_identity``; format 0 records have it from ``task.model_name``/``model_file``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from mlprof.errors import CorruptResult

#: the format of the records this code writes (0: the records written before it had one)
FORMAT_VERSION = 1

#: the kinds of record (``record`` field)
KINDS = ("branch", "merged", "profile", "peak", "interleaved", "load")


def stamp(record: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """``record`` with ``format_version`` and ``record`` (its kind) first: what every record
    writer passes its dict through."""
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}")
    rest = {k: v for k, v in record.items() if k not in ("format_version", "record")}
    return {"format_version": FORMAT_VERSION, "record": kind, **rest}


def format_version(record: Mapping[str, Any], file: str | None = None) -> int:
    """The record's format (0 for a record written before formats existed); a
    :class:`~mlprof.errors.CorruptResult` for one that is no whole number or newer than
    :data:`FORMAT_VERSION`."""
    value = record.get("format_version", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CorruptResult(f"format_version is {value!r}, not a whole number", file)
    if value > FORMAT_VERSION:
        raise CorruptResult(f"format_version {value} is newer than this mlprof reads "
                            f"({FORMAT_VERSION}): update mlprof to read it", file)
    return value


@dataclass(frozen=True)
class ModelIdentity:
    """The model a result is about, as the user named it.

    ``name``: the model's one name (``--model-name``, else the YAML's or file's stem; a script
    model's ``<script>`` or ``<script>-<hash>``); ``label``: what titles and legends show (the
    YAML's ``label``, else the name); ``file``: the YAML, ONNX file or script (``::<hash>``
    selects a model in a script); ``hash``: the 8 hex digits of the store's model segment (the
    content, and a script's arguments).
    """

    name: str
    label: str
    file: str | None = None
    hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``model_identity`` of a format-1 record)."""
        return asdict(self)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def model_identity(prov: Mapping[str, Any], name: str | None = None,
                   model_hash: str | None = None) -> ModelIdentity:
    """The :class:`ModelIdentity` of a provenance record of any format.

    ``name`` and ``model_hash`` are the store path's (its model segment), used where the
    record says nothing. For format 0: the task's ``model_name`` and ``model_file``, and the
    spec's label only when the spec *is* the user's model (not an export of a script: an
    exported ``model.onnx`` is called ``model``).
    """
    ident = prov.get("model_identity")
    if isinstance(ident, Mapping) and _text(ident.get("name")):
        nm = _text(ident.get("name")) or ""
        return ModelIdentity(nm, _text(ident.get("label")) or nm, _text(ident.get("file")),
                             _text(ident.get("hash")) or model_hash)
    task = _mapping(prov.get("task"))
    spec = _mapping(prov.get("model"))
    nm = _text(task.get("model_name")) or name or _text(spec.get("name")) or "model"
    file = _text(task.get("model_file")) or _text(spec.get("spec_file"))
    own_spec = file is not None and _text(spec.get("spec_file")) == file
    label = (_text(spec.get("label")) if own_spec else None) or nm
    return ModelIdentity(nm, label, file, model_hash)
