"""Decoder models for generation (issue 37): a causal language model from a script or a directory.

A decoder is given as a Python script that builds a Hugging Face model (the corpus's
``models/transformers/*.py`` decoders, which build the base model from a config, and the bundled
``models/generation/tiny_llama.py``) or as a directory written by ``save_pretrained``. Either way
it becomes one :class:`Decoder`: a ``save_pretrained`` directory of the causal LM (config and
random weights, seeded) cached by content hash, which every generation runtime loads or exports
from, so torch, ONNX Runtime and OpenVINO run the same weights.

How a script becomes a causal LM: the script runs as mlprof runs model scripts (the discovery
hooks of :mod:`mlprof.model.script` in :func:`~mlprof.model.sandbox.script_sandbox`: no network,
TurnkeyML's parser); the Hugging Face model it calls is taken. A ``*ForCausalLM`` (or another
model of transformers' causal-LM mapping, e.g. ``GPT2LMHeadModel``) is used as it is; a base
model (the corpus's ``GemmaModel``, ``GPT2Model``, built with ``use_cache=False``) becomes
``AutoModelForCausalLM.from_config`` of its config (seeded, ``use_cache=True``) with the base
model's own weights copied in, so only the output head is new. An encoder (BERT: transformers
has a ``BertLMHeadModel``, but BERT attends both ways unless built with ``is_decoder=True``) or an
encoder-decoder is refused in one line: ``<file>: is not a decoder (...)``, exit 40.

How a directory is read: its ``config.json`` through :mod:`mlprof.ingest` (a regular file, not
a link, of at most 1 MiB, UTF-8), checked before any weight is loaded: a known ``model_type``
with a causal LM class, and the sizes that multiply memory and time bounded
(:data:`CONFIG_BOUNDS`, and the parameters they imply, :data:`MAX_PARAMS`); its weights must be
safetensors files (no pickle), regular files (not links) of bounded size.

The cache: ``<cache_dir>/<name>__<hash12>/`` with ``config.json``, ``model.safetensors``,
``generation_config.json`` (greedy, no sampling), a tiny tokenizer (:func:`build_tokenizer`:
some generation libraries, openvino-genai and onnxruntime-genai, want one beside the model;
prompts are token ids) and ``decoder.json`` (the :class:`Decoder`'s fields). Written to a
temporary directory and renamed into place, so a directory that exists is complete; the next
call with the same config and weights finds it and saves nothing. Default ``cache_dir``:
``<store>/cache/decoders`` (:func:`default_cache_dir`; the store's scan ignores lower-case
top-level directories).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from mlprof import ingest
from mlprof.errors import MLProfError

#: the largest config.json read (real ones are 1-10 kB)
MAX_CONFIG_BYTES = 1 << 20
#: the largest total size of a directory's safetensors weights (2e9 fp32 parameters)
MAX_WEIGHTS_BYTES = 8 << 30
#: the most parameters a decoder may have, estimated from its config before anything is
#: allocated: 2e9 fp32 parameters are 8 GB, held twice while the causal LM is saved
MAX_PARAMS = 2_000_000_000

#: config fields that multiply memory and time, with their bounds (a few times the largest real
#: model's: vocabularies up to Gemma 3's 262,144, hidden sizes up to Llama 3.1 405B's 16,384
#: with 53,248 intermediate, 126 layers and 128 heads, contexts up to Llama 4 Scout's
#: 10,485,760 positions); the first name of each row is the usual one, the others are aliases
CONFIG_BOUNDS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("vocab_size",), 1 << 20),
    (("hidden_size", "n_embd", "d_model"), 1 << 16),
    (("intermediate_size", "n_inner", "ffn_dim", "d_ff"), 1 << 18),
    (("num_hidden_layers", "n_layer", "num_layers"), 1024),
    (("num_attention_heads", "n_head", "num_heads"), 1024),
    (("num_key_value_heads", "num_kv_heads"), 1024),
    (("head_dim",), 1 << 14),
    (("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length",
      "seq_length"), 1 << 24),
)

#: config fields naming the longest sequence, in the order they are looked for
CONTEXT_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length",
                  "seq_length")
#: the context of a model whose config names none (state-space models such as Mamba have no
#: position limit): long enough for any measurement here, and a bound on what is asked
UNBOUNDED_CONTEXT = 1 << 16

#: the metadata file of a cached decoder directory
DECODER_FILE = "decoder.json"

ProgressFn = Callable[[float, str], None]


@dataclass(frozen=True)
class Decoder:
    """One causal LM, ready for every generation runtime.

    ``name``: its label (the script's or directory's stem); ``source``: the absolute path the user
    named; ``hf_dir``: a ``save_pretrained`` directory (config.json, weights, generation config)
    holding exactly this model; ``content_hash``: hex digest of its config and weights (identity
    in the store); ``architecture``: e.g. ``LlamaForCausalLM``; ``n_params``; ``vocab_size``;
    ``max_context``: the longest sequence it accepts (prompt + new tokens), from its config;
    ``special_ids``: the token ids of its config's padding, beginning and end of sequence (which
    prompts avoid: :func:`mlprof.measure.generation.prompts.prompt_ids`)."""

    name: str
    source: str
    hf_dir: str
    content_hash: str
    architecture: str
    n_params: int
    vocab_size: int
    max_context: int
    special_ids: tuple[int, ...] = field(default=())


def default_cache_dir() -> str:
    """``<store>/cache/decoders``: store-wide, beside the store's results (``$MLP_STORE``)."""
    from mlprof.results.layout import store_base

    return os.path.join(store_base(), "cache", "decoders")


def load_decoder(path: str, cache_dir: str | None = None, *,
                 progress: ProgressFn | None = None,
                 check: Callable[[Decoder], None] | None = None) -> Decoder:
    """The :class:`Decoder` of a script or ``save_pretrained`` directory ``path``; its
    ``hf_dir`` is made once under ``cache_dir`` (default: the store's cache). A path that is not
    a decoder raises a one-line :class:`~mlprof.errors.MLProfError` naming the file.

    Runs the script in this process (call it in a measurement child,
    :func:`~mlprof.measure.isolate.run_isolated`, as discovery is called); ``progress`` gets
    ``(fraction, message)`` reports at least every 1.5 s (running the script, hashing, saving).
    Measured on the 2-vCPU machine: ``models/generation/tiny_llama.py`` (7.4 M parameters) took
    4.2 s the first time in a fresh process (mostly importing transformers and running the
    script; saving ~0.2 s) and 0.34 s the second (the script runs again to hash what it builds;
    nothing is saved); the corpus's ``gpt2.py`` (124 M) 6.9 s.

    ``check`` sees the :class:`Decoder` before anything is saved (and before a cached one is
    returned): what it raises (a prompt longer than the context) leaves the cache untouched.
    """
    from mlprof.progress import Progress  # the discovery's reporter (a lower layer)

    src = os.path.abspath(os.fspath(path))
    with Progress(progress) as rep:
        if os.path.isdir(src):
            rep.phase(f"reading {os.path.basename(src)}/config.json")
            model = _model_from_directory(src)
        elif src.lower().endswith(".py"):
            rep.phase(f"running {os.path.basename(src)}")
            model = _model_from_script(src)
        else:
            ingest.check_regular(src)  # a missing path or a FIFO: one line
            raise MLProfError("is not a decoder: give a Python script that builds a Hugging "
                              "Face causal LM or a directory written by save_pretrained", src)
        rep.phase("hashing the config and the weights")
        digest = content_hash(model)
        name = os.path.splitext(os.path.basename(src.rstrip(os.sep)))[0] or "decoder"
        root = os.path.abspath(cache_dir or default_cache_dir())
        hf_dir = os.path.join(root, f"{_safe(name)}__{digest[:12]}")
        found = _read_cached(hf_dir, digest)
        if found is not None:
            decoder = Decoder(**{**found, "name": name, "source": src})
            if check is not None:
                check(decoder)
            return decoder
        rep.phase(f"saving the causal LM to {hf_dir}")
        decoder = Decoder(name=name, source=src, hf_dir=hf_dir, content_hash=digest,
                          architecture=type(model).__name__,
                          n_params=int(sum(p.numel() for p in model.parameters())),
                          vocab_size=int(_text_config(model.config).vocab_size),
                          max_context=max_context(model.config),
                          special_ids=special_ids(model.config))
        if check is not None:
            check(decoder)
        _save(model, decoder, root)
        return decoder


# --- scripts ----------------------------------------------------------------------------------


def _model_from_script(src: str) -> Any:
    """Run the script as discovery does and make the Hugging Face model it calls a causal LM."""
    from transformers import PreTrainedModel

    from mlprof.model import script

    ingest.read_source(src)  # a FIFO, a device or an undecodable file: one line, before it runs
    hooks = script._Hooks(src, max_depth=0)
    script._run_script(src, (), hooks)
    records = list(hooks.records.values())
    parts = script._parts_called_alone(records)
    called = [r.module for r in records if r.depth == 0 and id(r) not in parts]
    models = [m for m in called if isinstance(m, PreTrainedModel)]
    if not models:
        what = ", ".join(sorted({type(m).__name__ for m in called})) or "no model"
        raise MLProfError(f"is not a decoder (it calls {what}, not a Hugging Face "
                          "transformers model)", src)
    if len({id(m) for m in models}) > 1:
        raise MLProfError("calls several Hugging Face models ("
                          + ", ".join(type(m).__name__ for m in models)
                          + "); a decoder script builds one", src)
    return as_causal_lm(models[0], src)


def _causal_class_name(model_type: str) -> str | None:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
    return name if isinstance(name, str) else None


def _encoder_kind(model_type: str) -> str | None:
    """``"an encoder"`` / ``"an encoder-decoder"`` for model types whose causal-LM class is a
    variant of a bidirectional model (BERT's ``BertLMHeadModel``, BART's ``BartForCausalLM``),
    None for decoder architectures."""
    from transformers.models.auto import modeling_auto as auto

    if model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
        return "an encoder-decoder"
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "an encoder"
    return None


def check_decoder_config(config: Any, src: str, cls_name: str) -> str:
    """The causal-LM class name for ``config``, or a one-line ``is not a decoder`` error."""
    import transformers

    model_type = str(getattr(config, "model_type", "") or "")
    causal = _causal_class_name(model_type)
    if causal is None:
        raise MLProfError(f"is not a decoder ({cls_name}: model type {model_type!r} has no "
                          f"causal language model in transformers {transformers.__version__})",
                          src)
    kind = _encoder_kind(model_type)
    if kind is not None and not getattr(config, "is_decoder", False):
        raise MLProfError(f"is not a decoder ({cls_name}: model type {model_type!r} is {kind}, "
                          "bidirectional unless its config sets is_decoder=True)", src)
    return causal


def as_causal_lm(model: Any, src: str) -> Any:
    """``model`` itself if it is a causal LM, else the causal LM of its config (seeded) with the
    base model's weights copied in; ``use_cache=True`` (generation with a KV cache)."""
    import torch
    from transformers import AutoModelForCausalLM

    causal = check_decoder_config(model.config, src, type(model).__name__)
    if type(model).__name__ == causal or type(model).__name__.endswith("ForCausalLM"):
        out = model
    else:
        config = model.config
        config.use_cache = True
        torch.manual_seed(0)
        out = AutoModelForCausalLM.from_config(config)
        base = getattr(out, out.base_model_prefix, None)
        if isinstance(base, torch.nn.Module) and type(base) is type(model):
            with contextlib.suppress(RuntimeError):  # shapes that differ: keep the seeded ones
                base.load_state_dict(model.state_dict(), strict=True)
    out.config.use_cache = True
    if hasattr(out, "generation_config") and out.generation_config is not None:
        out.generation_config.use_cache = True
    return out.eval()


# --- directories ------------------------------------------------------------------------------


def read_config(directory: str) -> dict[str, Any]:
    """``<directory>/config.json`` through the one way in, checked (see the module docstring);
    errors name the file and the field."""
    path = os.path.join(directory, "config.json")
    # not followed: a link could name /dev/zero or a file outside what the user gave
    data_bytes = ingest.read_bytes(path, MAX_CONFIG_BYTES, follow_links=False,
                                   what="a config.json")
    text = ingest.decode_text(data_bytes, path)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise MLProfError(f"is not valid JSON: {str(e)[:80]}", path) from None
    if not isinstance(data, dict):
        raise MLProfError(f"is a JSON {type(data).__name__}, not an object", path)
    check_config_fields(data, path)
    return data


def check_config_fields(data: dict[str, Any], path: str) -> None:
    """``model_type`` known with a causal LM, sizes within :data:`CONFIG_BOUNDS`, the implied
    parameter count within :data:`MAX_PARAMS`; also in ``text_config`` where there is one."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    model_type = data.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise MLProfError("missing or not a string (a save_pretrained config names its "
                          "model_type)", path, "model_type")
    if model_type not in CONFIG_MAPPING_NAMES:
        raise MLProfError(f"{ingest.printable(model_type)[:60]!r} is not a model type this "
                          "transformers knows", path, "model_type")
    if _causal_class_name(model_type) is None:
        raise MLProfError(f"is not a decoder (model type {model_type!r} has no causal language "
                          "model in transformers)", path, "model_type")
    kind = _encoder_kind(model_type)
    if kind is not None and data.get("is_decoder") is not True:
        raise MLProfError(f"is not a decoder (model type {model_type!r} is {kind}, "
                          "bidirectional unless its config sets is_decoder=True)", path,
                          "model_type")
    sections = [("", data)]
    if isinstance(data.get("text_config"), dict):
        sections.append(("text_config.", data["text_config"]))
    for prefix, section in sections:
        values: dict[str, int] = {}
        for names, bound in CONFIG_BOUNDS:
            for name in names:
                value = section.get(name)
                if value is None:
                    continue
                if isinstance(value, bool) or not isinstance(value, int):
                    raise MLProfError(f"{str(value)[:40]!r} is not an integer", path,
                                      prefix + name)
                if not 1 <= value <= bound:
                    raise MLProfError(f"{value} is out of range (1 to {bound:,})", path,
                                      prefix + name)
                values.setdefault(names[0], value)
        estimate = _params_estimate(values)
        if estimate > MAX_PARAMS:
            raise MLProfError(f"the sizes imply about {estimate:.3g} parameters; at most "
                              f"{MAX_PARAMS:.0e} are loaded ({MAX_PARAMS * 4 / 1e9:.0f} GB in "
                              "fp32)", path, ", ".join(prefix + k for k in values))


def _params_estimate(v: dict[str, int]) -> int:
    """Parameters implied by the sizes: embeddings (tokens and learned positions, input and
    output) and per layer four attention projections and a gated MLP (an upper bound for most
    architectures)."""
    hidden = v.get("hidden_size", 0)
    inter = v.get("intermediate_size", 4 * hidden)
    layers = v.get("num_hidden_layers", 0)
    positions = v.get("max_position_embeddings", 0)
    return (2 * v.get("vocab_size", 0) + positions) * hidden \
        + layers * (4 * hidden * hidden + 3 * hidden * inter)


def _weight_files(directory: str) -> list[str]:
    """The directory's safetensors files, each a regular file, together at most
    :data:`MAX_WEIGHTS_BYTES`; pickled weights (``pytorch_model.bin``) are refused."""
    names = sorted(e.name for e in os.scandir(directory) if e.name.endswith(".safetensors"))
    if not names:
        pickled = [n for n in ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")
                   if os.path.lexists(os.path.join(directory, n))]
        why = (f"{pickled[0]} only: weights are read from safetensors, never unpickled; "
               "save with safe_serialization" if pickled else "no weights")
        raise MLProfError(f"has no *.safetensors file ({why})", directory)
    total = 0
    for name in names:
        total += ingest.check_regular(os.path.join(directory, name), follow_links=False)
        if total > MAX_WEIGHTS_BYTES:
            raise MLProfError(f"weights exceed {MAX_WEIGHTS_BYTES >> 30} GiB", directory, name)
    return [os.path.join(directory, n) for n in names]


def _model_from_directory(directory: str) -> Any:
    """The causal LM saved in ``directory`` (checked config, safetensors weights, no network)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config_path = os.path.join(directory, "config.json")
    data = read_config(directory)
    _weight_files(directory)
    kwargs = {k: v for k, v in data.items() if k != "model_type"}
    try:
        config = AutoConfig.for_model(data["model_type"], **kwargs)
    except (ValueError, TypeError, KeyError) as e:
        raise MLProfError(f"cannot be made a {data['model_type']} config: "
                          f"{' '.join(str(e).split())[:160]}", config_path) from None
    check_decoder_config(config, config_path,
                         str((data.get("architectures") or [data["model_type"]])[0]))
    config.use_cache = True
    torch.manual_seed(0)  # parameters the directory lacks (a base model's output head)
    try:
        with _no_progress_bars():
            model = AutoModelForCausalLM.from_pretrained(directory, config=config,
                                                         local_files_only=True,
                                                         dtype=torch.float32)
    except (OSError, ValueError, RuntimeError, KeyError) as e:
        raise MLProfError(f"cannot be loaded as a causal LM: {' '.join(str(e).split())[:200]}",
                          directory) from None
    return as_causal_lm(model, config_path)


# --- identity and the cache -------------------------------------------------------------------


def content_hash(model: Any) -> str:
    """sha256 (hex) over the config (sorted JSON, without what saving adds or changes:
    transformers' version, ``architectures``, ``dtype``, private keys) and every tensor of the
    state dict (name, dtype, shape, bytes) in name order: the same weights and config give the
    same hash on every run, from a script or from its saved directory. 7.4 M parameters:
    ~0.1 s."""
    import torch

    h = hashlib.sha256()
    cfg = {k: v for k, v in model.config.to_dict().items()
           if not k.startswith("_") and k not in _UNHASHED}
    h.update(json.dumps(cfg, sort_keys=True, default=str).encode())
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"\0{name}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
        if t.numel():
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


#: config keys a save_pretrained round trip adds or changes (the weights' dtype is hashed with
#: each tensor)
_UNHASHED = ("transformers_version", "architectures", "dtype", "torch_dtype")


def _text_config(config: Any) -> Any:
    get = getattr(config, "get_text_config", None)
    return get() if callable(get) else config


def max_context(config: Any) -> int:
    """The longest sequence ``config`` allows (:data:`CONTEXT_FIELDS`, first found), or
    :data:`UNBOUNDED_CONTEXT` for a model without a position limit."""
    text = _text_config(config)
    for name in CONTEXT_FIELDS:
        value = getattr(text, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return int(value)
    return UNBOUNDED_CONTEXT


def special_ids(config: Any) -> tuple[int, ...]:
    """The config's padding, beginning- and end-of-sequence ids within its vocabulary (sorted,
    unique; an ``eos_token_id`` list is taken whole)."""
    text = _text_config(config)
    vocab = int(text.vocab_size)
    ids: set[int] = set()
    for name in ("pad_token_id", "bos_token_id", "eos_token_id"):
        value = getattr(text, name, None)
        if value is None:
            value = getattr(config, name, None)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < vocab:
                ids.add(int(v))
    return tuple(sorted(ids))


def _safe(name: str) -> str:
    from mlprof.results.layout import safe_name

    return safe_name(name, 48)


def _json_or_none(path: str) -> Any:
    """The JSON in the cache file ``path``, or None when it is missing or unreadable: the
    cache's files are the program's own, so a damaged one is a miss (the decoder is made or
    loaded anew), not an error to the user."""
    if not os.path.isfile(path):
        return None
    try:
        return ingest.load_json(path, MAX_CONFIG_BYTES)
    except MLProfError:
        return None


def _read_cached(hf_dir: str, digest: str) -> dict[str, Any] | None:
    """The fields of a complete cached directory for ``digest``, else None (a damaged one is
    made anew)."""
    data = _json_or_none(os.path.join(hf_dir, DECODER_FILE))
    names = {f for f in Decoder.__dataclass_fields__}
    if not isinstance(data, dict) or set(data) != names or data.get("content_hash") != digest:
        return None
    if not all(os.path.isfile(os.path.join(hf_dir, f)) for f in
               ("config.json", "model.safetensors", "generation_config.json")):
        return None
    data["special_ids"] = tuple(data["special_ids"])
    data["hf_dir"] = hf_dir
    return data


#: the directory of the cache's source index: ``<source hash>.json`` per script or directory
#: whose decoder was loaded (:func:`remember_source`)
SOURCES_DIR = "sources"


def remember_source(source_hash: str, decoder: Decoder, cache_dir: str | None = None) -> None:
    """Note that the script or directory whose bytes hash to ``source_hash`` (hex) built
    ``decoder`` (its cached directory): :func:`known_source` then answers "is it a decoder, how
    long is its context" by reading two small files instead of running the script (4.2 s for the
    bundled model in a fresh process, 6.9 s for gpt2.py; the look-up: under a millisecond)."""
    from mlprof.util import write_json_atomic

    root = os.path.abspath(cache_dir or default_cache_dir())
    os.makedirs(os.path.join(root, SOURCES_DIR), exist_ok=True)
    write_json_atomic(os.path.join(root, SOURCES_DIR, f"{_hex(source_hash)}.json"),
                      {"hf_dir": os.path.basename(decoder.hf_dir),
                       "content_hash": decoder.content_hash})


def known_source(source_hash: str, cache_dir: str | None = None) -> Decoder | None:
    """The :class:`Decoder` :func:`remember_source` noted for ``source_hash``, read from its
    cached directory's ``decoder.json``; None when not noted or the directory is gone or
    damaged (then the caller loads the decoder)."""
    root = os.path.abspath(cache_dir or default_cache_dir())
    data = _json_or_none(os.path.join(root, SOURCES_DIR, f"{_hex(source_hash)}.json"))
    if not isinstance(data, dict) or not isinstance(data.get("hf_dir"), str) \
            or not isinstance(data.get("content_hash"), str) \
            or os.path.basename(data["hf_dir"]) != data["hf_dir"]:
        return None
    found = _read_cached(os.path.join(root, data["hf_dir"]), data["content_hash"])
    if found is None or not isinstance(found.get("max_context"), int) \
            or isinstance(found["max_context"], bool) or found["max_context"] < 1:
        return None
    return Decoder(**found)


def _hex(digest: str) -> str:
    if not digest or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"not a hex digest: {digest!r}")
    return digest[:64]


def build_tokenizer(vocab_size: int, special: dict[str, int | None]) -> Any:
    """A ``PreTrainedTokenizerFast`` over ``vocab_size`` ids, built here (nothing downloaded):
    a WordLevel vocabulary ``<t0>`` ... ``<tN>`` whose special ids carry the names ``<pad>``,
    ``<s>``, ``</s>`` (``special``: ``pad``/``bos``/``eos`` to an id or None); whitespace
    splits words, unknown words map to padding (or id 0). Prompts are token ids: this only
    satisfies libraries that want a tokenizer beside the model."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    names = {i: f"<t{i}>" for i in range(vocab_size)}
    tokens: dict[str, str] = {}
    for role, text in (("pad", "<pad>"), ("bos", "<s>"), ("eos", "</s>")):
        i = special.get(role)
        if i is None or not 0 <= i < vocab_size:
            continue
        if names[i].startswith("<t"):  # bos == eos (GPT-2): one token, the first name
            names[i] = text
        tokens[role] = names[i]
    vocab = {t: i for i, t in names.items()}
    unk = tokens.get("pad", names[0])
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token=unk, model_max_length=1 << 30,
        **{f"{role}_token": t for role, t in tokens.items()})


def _save(model: Any, decoder: Decoder, root: str) -> None:
    """Write ``decoder.hf_dir`` atomically: everything into a temporary directory beside it,
    then one rename (a concurrent writer of the same hash: the first rename wins, the other's
    copy is removed)."""
    from transformers import GenerationConfig

    os.makedirs(root, exist_ok=True)
    if os.path.exists(decoder.hf_dir):  # damaged or from another version: made anew
        shutil.rmtree(decoder.hf_dir)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(decoder.hf_dir)}.tmp-", dir=root)
    try:
        text = _text_config(model.config)
        ids = {role: _first_id(getattr(text, f"{role}_token_id", None), decoder.vocab_size)
               for role in ("pad", "bos", "eos")}
        with _no_progress_bars():
            model.save_pretrained(tmp)
        gen = GenerationConfig(do_sample=False, num_beams=1, use_cache=True,
                               pad_token_id=ids["pad"] if ids["pad"] is not None
                               else ids["eos"], bos_token_id=ids["bos"],
                               eos_token_id=ids["eos"])
        gen.save_pretrained(tmp)
        build_tokenizer(decoder.vocab_size, ids).save_pretrained(tmp)
        with open(os.path.join(tmp, DECODER_FILE), "w") as f:
            json.dump({**asdict(decoder), "special_ids": list(decoder.special_ids)}, f,
                      indent=2)
        if not os.path.isfile(os.path.join(tmp, "model.safetensors")):
            raise MLProfError("save_pretrained wrote no model.safetensors (sharded?)", tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp's 0700 would hide it from other users
        try:
            os.rename(tmp, decoder.hf_dir)
        except OSError:
            if not os.path.isdir(decoder.hf_dir):
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process was first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers' tqdm bars ("Writing model shards", "Loading weights") off: mlprof reports
    its own progress, and a bar on stderr garbles the terminal's progress lines."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _first_id(value: Any, vocab_size: int) -> int | None:
    """The (first) id of a config's special token, None where it is outside the vocabulary (the
    corpus's codegen keeps GPT-2's 50256 with a 32000 vocabulary): a runtime must not be told to
    stop or pad at an id the model cannot produce."""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < vocab_size:
        return int(value)
    return None
