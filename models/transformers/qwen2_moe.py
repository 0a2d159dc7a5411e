# labels: name::qwen2_moe author::huggingface task::natural_language_processing family::qwen2_moe kind::decoder config::small
# ruff: noqa: E501
"""
transformers.Qwen2MoeModel (text decoder) built from transformers.Qwen2MoeConfig with a small
configuration, random weights, 67,785,216 parameters.

The default Qwen2MoeConfig makes a model of 14,005M parameters, too big for this corpus (<=
~150M parameters, seconds on 2 CPU cores): the script sets hidden_size=512,
intermediate_size=2048, moe_intermediate_size=512, num_attention_heads=8, num_experts=4,
num_experts_per_tok=2, num_hidden_layers=4, num_key_value_heads=8, vocab_size=32000.

The experts run in mlprof's sparse_loop implementation (mlprof/model/moe.py): transformers'
eager loop over the experts, but over all of them rather than those the traced inputs hit, so
the exported graph routes any input (eager's graph holds the experts of the tracing inputs
only). The default grouped_mm one counts the tokens per expert with torch.histc and calls a
custom operator, neither of which has an ONNX export. All three compute the same.

Source: https://huggingface.co/docs/transformers/model_doc/qwen2_moe
"""
import torch
import transformers

from mlprof.model.moe import SPARSE_LOOP  # registers it with transformers
from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python qwen2_moe.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.Qwen2MoeConfig(
    hidden_size=512,
    intermediate_size=2048,
    moe_intermediate_size=512,
    num_attention_heads=8,
    num_experts=4,
    num_experts_per_tok=2,
    num_hidden_layers=4,
    num_key_value_heads=8,
    vocab_size=32000,
    use_cache=False,
    experts_implementation=SPARSE_LOOP,
)
model = transformers.Qwen2MoeModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
