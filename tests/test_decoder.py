"""Decoders for generation (issue 37): real scripts of the corpus and real transformers models
become causal LMs saved once in the cache; encoders and hostile directories are one line.

The hostile-directory tests are fast (config.json is judged before transformers builds
anything); the tests that run a script or build a model are slow (torch, transformers and the
script: ~4 s each on the 2-vCPU machine).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from mlprof.errors import MLProfError
from mlprof.measure.generation.prompts import prompt_ids
from mlprof.model.decoder import Decoder, default_cache_dir, load_decoder
from tests.helpers import REPO

TINY = REPO / "models" / "generation" / "tiny_llama.py"
TRANSFORMERS = REPO / "models" / "transformers"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Decoder, Path]:
    cache = tmp_path_factory.mktemp("decoders")
    return load_decoder(str(TINY), str(cache)), cache


def _one_line(err: MLProfError, *parts: str) -> str:
    text = str(err)
    assert "\n" not in text
    for part in parts:
        assert part in text, (part, text)
    return text


# --- the bundled model and the cache -------------------------------------------------------------


@pytest.mark.slow
def test_tiny_llama_loads_with_its_fields(tiny):
    d, cache = tiny
    assert (d.name, d.architecture) == ("tiny_llama", "LlamaForCausalLM")
    assert (d.n_params, d.vocab_size, d.max_context) == (7_358_720, 8192, 2048)
    assert d.special_ids == (0, 1, 2)
    assert d.source == str(TINY) and len(d.content_hash) == 64
    assert d.hf_dir == str(cache / f"tiny_llama__{d.content_hash[:12]}")
    files = set(os.listdir(d.hf_dir))
    assert {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json",
            "tokenizer_config.json", "decoder.json"} <= files
    gen = json.loads(Path(d.hf_dir, "generation_config.json").read_text())
    assert gen["do_sample"] is False and gen["num_beams"] == 1
    assert (gen["pad_token_id"], gen["bos_token_id"], gen["eos_token_id"]) == (0, 1, 2)
    assert json.loads(Path(d.hf_dir, "config.json").read_text())["use_cache"] is True
    assert [p.name for p in cache.iterdir()] == [Path(d.hf_dir).name]  # no temporary left


@pytest.mark.slow
def test_tiny_llama_generates_and_its_tokenizer_loads(tiny):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d, _ = tiny
    tok = AutoTokenizer.from_pretrained(d.hf_dir)
    assert len(tok) == d.vocab_size
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id) == (0, 1, 2)
    assert tok.decode([5, 2]) == "<t5> </s>"
    model = AutoModelForCausalLM.from_pretrained(d.hf_dir).eval()
    ids = torch.from_numpy(prompt_ids(d.vocab_size, 2, 16, special_ids=d.special_ids))
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4,
                             min_new_tokens=4, do_sample=False)
    assert tuple(out.shape) == (2, 20)
    assert torch.equal(out[:, :16], ids)


@pytest.mark.slow
def test_the_cache_is_reused(tiny):
    d, cache = tiny
    weights = Path(d.hf_dir, "model.safetensors")
    before = weights.stat()
    again = load_decoder(str(TINY), str(cache))
    assert again == d
    after = weights.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(list(cache.iterdir())) == 1


@pytest.mark.slow
def test_a_save_pretrained_directory_is_the_same_decoder(tiny, tmp_path):
    d, _ = tiny
    from_dir = load_decoder(d.hf_dir, str(tmp_path / "cache"))
    assert from_dir.content_hash == d.content_hash
    assert (from_dir.architecture, from_dir.n_params, from_dir.max_context) == \
        (d.architecture, d.n_params, d.max_context)
    assert from_dir.source == d.hf_dir


def test_the_default_cache_is_in_the_store(store):
    assert default_cache_dir() == os.path.join(str(store), "cache", "decoders")


# --- the corpus's scripts ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_corpus_base_model_becomes_a_causal_lm(tmp_path):
    """gemma.py builds GemmaModel(use_cache=False): its causal LM carries its weights."""
    import torch
    from safetensors.torch import load_file

    d = load_decoder(str(TRANSFORMERS / "gemma.py"), str(tmp_path))
    assert d.architecture == "GemmaForCausalLM"
    assert d.n_params == 33_165_824  # tied output head: the base model's parameters
    assert (d.vocab_size, d.max_context) == (32000, 8192)
    config = json.loads(Path(d.hf_dir, "config.json").read_text())
    assert config["use_cache"] is True
    # the base model's weights were copied in: the same seeded embedding as the script's
    torch.manual_seed(0)
    import transformers

    ref = transformers.GemmaModel(transformers.GemmaConfig(
        head_dim=64, hidden_size=512, intermediate_size=2048, num_attention_heads=8,
        num_hidden_layers=4, num_key_value_heads=8, vocab_size=32000, use_cache=False))
    saved = load_file(str(Path(d.hf_dir, "model.safetensors")))
    assert torch.equal(saved["model.embed_tokens.weight"], ref.embed_tokens.weight)


@pytest.mark.slow
def test_an_encoder_is_not_a_decoder(tmp_path):
    with pytest.raises(MLProfError) as info:
        load_decoder(str(TRANSFORMERS / "bert.py"), str(tmp_path / "cache"))
    _one_line(info.value, str(TRANSFORMERS / "bert.py"), "is not a decoder", "BertModel")
    assert type(info.value) is MLProfError  # exit 40 (not a MeasurementFailed)
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
def test_a_script_without_a_transformers_model_is_not_a_decoder(tmp_path):
    script = REPO / "models" / "selftest" / "linear.py"
    with pytest.raises(MLProfError) as info:
        load_decoder(str(script), str(tmp_path / "cache"))
    _one_line(info.value, str(script), "is not a decoder", "Linear")


def test_a_file_that_is_neither_script_nor_directory(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\0")
    with pytest.raises(MLProfError) as info:
        load_decoder(str(path), str(tmp_path / "cache"))
    _one_line(info.value, str(path), "is not a decoder")


# --- hostile directories -------------------------------------------------------------------------


def _directory(tmp_path: Path, write) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    write(d / "config.json")
    return d


SMALL = {"model_type": "llama", "vocab_size": 100, "hidden_size": 16, "intermediate_size": 32,
         "num_hidden_layers": 1, "num_attention_heads": 2}


@pytest.mark.parametrize("name, write, field, words", [
    ("symlink", lambda p: p.symlink_to("/etc/hostname"), "config.json", "symbolic link"),
    ("fifo", lambda p: os.mkfifo(p), "config.json", "FIFO"),
    ("100 MB", lambda p: p.open("wb").truncate(100 << 20), "config.json", "at most 1048576"),
    ("not JSON", lambda p: p.write_text("{model_type: llama"), "config.json", "not valid JSON"),
    ("a list", lambda p: p.write_text("[1, 2]"), "config.json", "not an object"),
    ("latin-1", lambda p: p.write_bytes(b'{"model_type": "\xe9"}'), "config.json",
     "cannot be decoded"),
    ("vocab 10**12", lambda p: p.write_text(json.dumps({**SMALL, "vocab_size": 10**12})),
     "vocab_size", "out of range"),
    ("vocab a string", lambda p: p.write_text(json.dumps({**SMALL, "vocab_size": "100"})),
     "vocab_size", "not an integer"),
    ("layers 0", lambda p: p.write_text(json.dumps({**SMALL, "num_hidden_layers": 0})),
     "num_hidden_layers", "out of range"),
    ("positions 2**40", lambda p: p.write_text(json.dumps({**SMALL,
                                                          "max_position_embeddings": 2**40})),
     "max_position_embeddings", "out of range"),
    ("too many parameters", lambda p: p.write_text(json.dumps(
        {**SMALL, "vocab_size": 1 << 20, "hidden_size": 60000})), "hidden_size",
     "parameters"),
    ("unknown model_type", lambda p: p.write_text(json.dumps({"model_type": "nosuchmodel"})),
     "model_type", "not a model type"),
    ("no model_type", lambda p: p.write_text(json.dumps({"vocab_size": 100})),
     "model_type", "missing"),
    ("an encoder", lambda p: p.write_text(json.dumps({"model_type": "bert"})),
     "model_type", "is not a decoder"),
    ("text_config", lambda p: p.write_text(json.dumps(
        {**SMALL, "text_config": {"vocab_size": -1}})), "text_config.vocab_size",
     "out of range"),
])
def test_hostile_directories_are_one_line(tmp_path, name, write, field, words):
    d = _directory(tmp_path, write)
    cache = tmp_path / "cache"
    with pytest.raises(MLProfError) as info:
        load_decoder(str(d), str(cache))
    _one_line(info.value, str(d / "config.json"), field, words)
    assert not cache.exists()  # nothing written


def test_pickled_weights_are_refused(tmp_path):
    d = _directory(tmp_path, lambda p: p.write_text(json.dumps(SMALL)))
    (d / "pytorch_model.bin").write_bytes(b"\x80\x04")
    with pytest.raises(MLProfError) as info:
        load_decoder(str(d), str(tmp_path / "cache"))
    _one_line(info.value, str(d), "pytorch_model.bin only", "never unpickled")


def test_a_linked_weights_file_is_refused(tmp_path):
    d = _directory(tmp_path, lambda p: p.write_text(json.dumps(SMALL)))
    (d / "model.safetensors").symlink_to("/dev/zero")
    with pytest.raises(MLProfError) as info:
        load_decoder(str(d), str(tmp_path / "cache"))
    _one_line(info.value, "model.safetensors", "not a regular file")


# --- prompts -------------------------------------------------------------------------------------


def test_prompt_ids_are_seeded_and_avoid_special_ids():
    a = prompt_ids(50257, 4, 128, special_ids=(50256, 7))
    assert a.dtype == np.int64 and a.shape == (4, 128)
    assert np.array_equal(a, prompt_ids(50257, 4, 128, special_ids=(50256, 7)))
    assert not np.array_equal(a, prompt_ids(50257, 4, 128, seed=1, special_ids=(50256, 7)))
    assert a.min() >= 3 and a.max() < 50256 and not np.isin(a, [7]).any()
    small = prompt_ids(8, 1, 1000, special_ids=(4,))
    assert set(np.unique(small)) == {3, 5, 6}
    with pytest.raises(ValueError):
        prompt_ids(4, 1, 8)
    with pytest.raises(ValueError):
        prompt_ids(100, 0, 8)
