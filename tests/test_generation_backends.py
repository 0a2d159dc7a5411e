"""Generation backends (issue 37) with real sessions: transformers on PyTorch, onnxruntime-genai,
OpenVINO, on a tiny random Llama built here; the export cache; the teacher-forced agreement and
its margin rule."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlprof.errors import CorruptResult, MLProfError
from mlprof.measure.generation.agreement import (
    Agreement,
    compare_logits,
    first_divergence,
    teacher_forced,
)
from mlprof.model.decoder import Decoder

NEW_TOKENS = 12
PROMPT = 10


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Decoder:
    """A 2-layer Llama (hidden 64, vocab 512, random weights, seed 0) saved with
    ``save_pretrained``; the Decoder is built by hand (load_decoder is not under test here)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("tiny_llama")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=128,
                                   eos_token_id=2, bos_token_id=1)
    model = transformers.LlamaForCausalLM(cfg).eval()
    model.save_pretrained(path)
    return Decoder(name="tiny_llama", source=str(path), hf_dir=str(path),
                   content_hash="tiny0", architecture="LlamaForCausalLM",
                   n_params=sum(p.numel() for p in model.parameters()), vocab_size=512,
                   max_context=128)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("gen_cache"))


@pytest.fixture(scope="module")
def torch_ref(tiny: Decoder, cache: str) -> Any:
    from mlprof.measure.generation.timing import open_backend

    b = open_backend("torch", tiny, threads=1, cache_dir=cache)
    yield b
    b.close()


def _prompts(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).integers(3, 512, size=(batch, PROMPT)).astype(np.int64)


def _check_timed(gen: Any, batch: int) -> None:
    assert gen.tokens.shape == (batch, NEW_TOKENS) and gen.tokens.dtype == np.int64
    assert gen.token_ns.shape == (NEW_TOKENS,) and gen.token_ns.dtype == np.int64
    assert gen.token_ns[0] > 0  # TTFT
    assert np.all(np.diff(gen.token_ns) > 0)
    assert gen.e2e_ns >= gen.token_ns[-1]


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["torch", "onnxruntime", "openvino"])
def test_backend_generates_and_agrees(runtime: str, tiny: Decoder, cache: str,
                                      torch_ref: Any) -> None:
    """Exactly new_tokens tokens for batch 1 and 2, timestamps increasing, TTFT > 0; the
    teacher-forced agreement with torch is >= 99 % with no error under the margin rule."""
    from mlprof.measure.generation.timing import open_backend

    progress: list[str] = []
    b = open_backend(runtime, tiny, threads=1, cache_dir=cache, progress=progress.append)
    try:
        for batch in (1, 2):
            ids = _prompts(batch)
            gen = b.generate(ids, NEW_TOKENS)
            _check_timed(gen, batch)
            ref = torch_ref.generate(ids, NEW_TOKENS)
            agr = teacher_forced(torch_ref, b, ids, ref.tokens, gen.tokens)
            assert agr.steps == batch * NEW_TOKENS
            assert agr.share >= 0.99 and agr.errors == 0, agr
            assert Agreement.from_json(json.loads(json.dumps(agr.to_json()))) == agr
        info = b.info()
        assert info["threads"] == 1 and info["runtime"] == runtime
        if runtime != "torch":
            assert progress and os.path.isdir(info["export_path"])
    finally:
        b.close()


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino"])
def test_export_cache_reused(runtime: str, tiny: Decoder, tmp_path: Path) -> None:
    """The second open finds the export (no export, no progress, the same files) and leaves no
    temporary directory behind."""
    from mlprof.measure.generation.timing import open_backend

    first = open_backend(runtime, tiny, threads=1, cache_dir=str(tmp_path))
    info1 = first.info()
    first.close()
    assert info1["exported_now"] and info1["export_s"] > 0
    stamp = os.path.join(info1["export_path"], "export.json")
    mtime = os.stat(stamp).st_mtime_ns
    progress: list[str] = []
    second = open_backend(runtime, tiny, threads=1, cache_dir=str(tmp_path),
                          progress=progress.append)
    info2 = second.info()
    gen = second.generate(_prompts(1), NEW_TOKENS)
    second.close()
    assert not info2["exported_now"] and info2["export_path"] == info1["export_path"]
    assert os.stat(stamp).st_mtime_ns == mtime and not any("export" in p or "convert" in p
                                                           for p in progress)
    assert gen.tokens.shape == (1, NEW_TOKENS)
    parent = os.path.dirname(info1["export_path"])
    assert [n for n in os.listdir(parent) if n.startswith(".tmp-")] == []


@pytest.mark.slow
def test_torch_compile(tiny: Decoder, cache: str, torch_ref: Any) -> None:
    """Static cache + torch.compile generates the same tokens as eager (compiling takes ~20 s
    here, reported as progress)."""
    from mlprof.measure.generation.timing import open_backend

    progress: list[str] = []
    b = open_backend("torch-compile", tiny, threads=1, cache_dir=cache,
                     progress=progress.append)
    try:
        ids = _prompts(1)
        gen = b.generate(ids, NEW_TOKENS)
        _check_timed(gen, 1)
        assert b.info()["compile_s"] > 0 and any("torch.compile" in p for p in progress)
        assert np.array_equal(gen.tokens, torch_ref.generate(ids, NEW_TOKENS).tokens)
    finally:
        b.close()


def test_refusals(tmp_path: Path) -> None:
    """An unknown runtime and a precision no backend builds: one line each, nothing written."""
    from mlprof.measure.generation.timing import open_backend

    tiny = Decoder(name="none", source=str(tmp_path), hf_dir=str(tmp_path / "absent"),
                   content_hash="0", architecture="LlamaForCausalLM", n_params=1,
                   vocab_size=512, max_context=128)
    with pytest.raises(MLProfError, match="unknown runtime 'tensorrt'"):
        open_backend("tensorrt", tiny, threads=1, cache_dir=str(tmp_path))
    with pytest.raises(MLProfError, match="tensorflow does not generate"):
        open_backend("tf", tiny, threads=1, cache_dir=str(tmp_path))
    with pytest.raises(MLProfError, match="precision fp32 only"):
        open_backend("onnxruntime", tiny, threads=1, cache_dir=str(tmp_path), precision="fp16")
    assert os.listdir(tmp_path) == []


def test_margin_rule() -> None:
    """The rule on given arrays: the runtimes' typical logit difference is 2e-3 (the median of
    the per-step max); a disagreement where the reference's top two almost tie (margin 1e-3) is
    not an error, one against a clear margin (5.0 > 10 x 2e-3) is."""
    ref = np.zeros((1, 5, 4), dtype=np.float32)
    ref[0, :, 1] = 2.0  # steps 0, 1, 4: token 1 by a margin of 2.0
    oth = ref.copy()
    oth[0, :, 0] = 0.002  # rounding noise: 2e-3 at every step
    # step 2: near tie (margin 1e-3), the other runtime flips it: not decisive
    ref[0, 2] = [0.0, 1.001, 1.000, 0.0]
    oth[0, 2] = [0.0, 1.000, 1.002, 0.0]
    # step 3: clear margin, the other runtime picks another token anyway: an error
    ref[0, 3] = [5.0, 0.0, 0.0, 0.0]
    oth[0, 3] = [4.999, 0.0, 0.0, 5.001]
    a = compare_logits(ref, oth, runtime="x")
    assert (a.steps, a.agreeing, a.decisive, a.decisive_agreeing, a.errors) == (5, 3, 4, 3, 1)
    assert a.logit_diff_median == pytest.approx(2e-3, rel=1e-3)
    assert a.max_logit_diff == pytest.approx(5.001, rel=1e-6)
    assert a.margin_min == pytest.approx(1e-3, rel=1e-2)
    # the per-step max difference (5.001 at step 3) would have hidden the error: the margin
    # rule judges against the typical difference
    # a runtime noisy everywhere (difference 1.0 at every step) has no decisive step left
    noisy = ref + np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
    b = compare_logits(ref, noisy, runtime="x")
    assert b.decisive == 0 and b.errors == 0 and b.logit_diff_median == pytest.approx(1.0)
    assert first_divergence(np.array([[1, 2, 3], [1, 2, 3]]),
                            np.array([[1, 2, 3], [1, 5, 3]])) == 1
    assert first_divergence(np.array([[1, 2]]), np.array([[1, 2]])) is None


def test_agreement_json_checked() -> None:
    """A record whose counts do not add up is refused, naming the field."""
    good = compare_logits(np.eye(4)[None], np.eye(4)[None], runtime="openvino").to_json()
    assert Agreement.from_json(good).share == 1.0
    for key, value in (("errors", 3), ("share", 0.5), ("agreeing", 9), ("steps", 0)):
        bad = dict(good, **{key: value})
        with pytest.raises(CorruptResult, match=f"agreement.{key}"):
            Agreement.from_json(bad, "gen.json")
