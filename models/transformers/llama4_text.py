# labels: name::llama4_text author::huggingface task::natural_language_processing family::llama4_text kind::decoder config::small
# ruff: noqa: E501
"""
transformers.Llama4TextModel (text decoder) built from transformers.Llama4TextConfig with a
small configuration, random weights, 83,505,664 parameters.

The default Llama4TextConfig makes a model of 106,735M parameters, too big for this corpus (<=
~150M parameters, seconds on 2 CPU cores): the script sets head_dim=64, hidden_size=512,
intermediate_size=2048, num_attention_heads=8, num_experts_per_tok=2, num_hidden_layers=4,
num_key_value_heads=8, num_local_experts=4, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/llama4
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python llama4_text.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.Llama4TextConfig(
    head_dim=64,
    hidden_size=512,
    intermediate_size=2048,
    num_attention_heads=8,
    num_experts_per_tok=2,
    num_hidden_layers=4,
    num_key_value_heads=8,
    num_local_experts=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.Llama4TextModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
