# labels: name::qwen3_next author::huggingface task::natural_language_processing family::qwen3_next kind::decoder config::small
# ruff: noqa: E501
"""
transformers.Qwen3NextModel (text decoder) built from transformers.Qwen3NextConfig with a small
configuration, random weights, 58,801,344 parameters.

The default Qwen3NextConfig makes a model of 79,363M parameters, too big for this corpus (<=
~150M parameters, seconds on 2 CPU cores): the script sets head_dim=64, hidden_size=512,
intermediate_size=2048, moe_intermediate_size=512, num_attention_heads=8, num_experts=4,
num_experts_per_tok=2, num_hidden_layers=4, num_key_value_heads=8, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/qwen3_next
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python qwen3_next.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.Qwen3NextConfig(
    head_dim=64,
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
)
model = transformers.Qwen3NextModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
