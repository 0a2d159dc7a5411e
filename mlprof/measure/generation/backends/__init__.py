"""Generation backends: one module per runtime (``torch``, ``onnxruntime``, ``openvino``), and
what they share: the export cache, the ticking progress, the tiny local tokenizer, the EOS ids.

Every backend generates greedily with a KV cache, exactly ``new_tokens`` tokens (EOS masked as
``min_new_tokens = max_new_tokens`` does in transformers), for a batch of equal-length prompts
given as token ids (attention mask of ones; no tokenization inside the timing). Exports are
cached under ``cache_dir`` in ``<runtime>/<library>-<version>/<precision>/<content_hash>``,
written into a temporary directory and renamed into place, so a second open reuses them and a
crash leaves no half export behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from mlprof.errors import MLProfError
from mlprof.progress import Progress

#: the precisions every backend builds (fp32 only: the issue's acceptance runs fp32, and the
#: token check compares against torch's fp32 logits)
PRECISIONS = ("fp32",)


def check_precision(precision: str) -> None:
    """Refuse a precision no backend builds (one line)."""
    if precision not in PRECISIONS:
        raise MLProfError(f"generation runs precision {', '.join(PRECISIONS)} only, "
                          f"got {precision!r}", field="precision")


@contextmanager
def ticking(progress: Callable[[str], None] | None, what: str) -> Iterator[Progress]:
    """A :class:`~mlprof.progress.Progress` whose watcher thread reports ``what`` to
    ``progress`` whenever the work has been silent for 1.5 s (an export or a compilation is one
    long call), so the user hears at least every 5 s."""
    send = None if progress is None else (lambda _fraction, message: progress(message))
    with Progress(send) as rep:
        rep.phase(what)
        yield rep


def export_dir(cache_dir: str, runtime: str, library: str, precision: str,
               content_hash: str) -> str:
    """Where the export of one decoder for one runtime, library version and precision lives,
    under ``cache_dir`` (the store's ``cache/generation``)."""
    return os.path.join(os.path.abspath(cache_dir), runtime, library, precision, content_hash)


def cached_export(target: str, build: Callable[[str], None],
                  progress: Callable[[str], None] | None, what: str) -> tuple[str, float | None]:
    """``target`` made once by ``build(tmp_dir)``: built in a temporary sibling directory and
    renamed into place (a concurrent builder's rename wins, ours is dropped). Returns the path
    and the export time in s (None when it was already there)."""
    if os.path.isfile(os.path.join(target, "export.json")):
        return target, None
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-", dir=parent)
    try:
        t0 = time.perf_counter()
        with ticking(progress, what):
            build(tmp)
        seconds = time.perf_counter() - t0
        with open(os.path.join(tmp, "export.json"), "w") as fh:
            json.dump({"export_s": round(seconds, 3)}, fh)
        try:
            os.rename(tmp, target)
        except OSError:  # another process got there first: use its export
            if not os.path.isfile(os.path.join(target, "export.json")):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target, seconds


def write_tokenizer(directory: str, vocab_size: int, eos_id: int | None) -> None:
    """A tiny word-level tokenizer (``t0`` .. ``t<vocab-1>``) saved as ``tokenizer.json`` into
    ``directory``, for the libraries that refuse a model without one (onnxruntime-genai's
    builder). Prompts are token ids: it is never used to time anything."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"t{i}": i for i in range(vocab_size)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t0"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    eos = f"t{eos_id}" if eos_id is not None and 0 <= eos_id < vocab_size else "t0"
    fast = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="t0", eos_token=eos,
                                   pad_token="t0")
    fast.save_pretrained(directory)


def eos_ids(hf_dir: str) -> list[int]:
    """The EOS ids of the model in ``hf_dir`` (its generation config, else its config): the
    tokens ``min_new_tokens`` masks until the last step."""
    found: Any = None
    for name in ("generation_config.json", "config.json"):
        path = os.path.join(hf_dir, name)
        if os.path.isfile(path):
            with open(path) as fh:
                found = json.load(fh).get("eos_token_id")
            if found is not None:
                break
    if found is None:
        return []
    return [int(x) for x in (found if isinstance(found, list) else [found])]


def export_seconds(path: str) -> float | None:
    """The export time recorded with the export at ``path``."""
    try:
        with open(os.path.join(path, "export.json")) as fh:
            return float(json.load(fh)["export_s"])
    except (OSError, ValueError, KeyError):
        return None


class ExportingBackend:
    """What the backends generating from an export kept in the store's cache share (ONNX
    Runtime GenAI, OpenVINO): the precision checked, the export made once per runtime, library
    version, precision and decoder (:func:`export_dir`, :func:`cached_export`) into ``path``,
    its time in ``exported_s`` (None when it was there). A subclass imports its library and
    names its version (:meth:`_library`), builds the export (:meth:`_build`) and opens it
    (:meth:`_open`)."""

    #: the progress line while the export is built (``{name}``: the decoder's)
    exporting = "exporting {name}"

    def __init__(self, decoder: Any, *, threads: int, runtime: str, cache_dir: str,
                 precision: str = "fp32",
                 progress: Callable[[str], None] | None = None) -> None:
        check_precision(precision)
        self.runtime = runtime  # its registry name
        self.decoder, self.threads = decoder, threads
        target = export_dir(cache_dir, runtime, self._library(), precision,
                            decoder.content_hash)
        self.path, self.exported_s = cached_export(
            target, lambda tmp: self._build(decoder, tmp), progress,
            self.exporting.format(name=decoder.name))
        self._open()

    def _library(self) -> str:
        """Import the library, keep its version; the export's cache segment."""
        raise NotImplementedError

    def _build(self, decoder: Any, out: str) -> None:
        """Write the export of ``decoder`` into the directory ``out``."""
        raise NotImplementedError

    def _open(self) -> None:
        """Open the export at ``self.path`` for generating."""
        raise NotImplementedError
