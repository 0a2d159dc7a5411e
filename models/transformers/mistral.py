# labels: name::mistral author::huggingface task::natural_language_processing family::mistral kind::decoder config::small
# ruff: noqa: E501
"""
transformers.MistralModel (text decoder) built from transformers.MistralConfig with a small
configuration, random weights, 33,165,824 parameters.

The default MistralConfig makes a model of 7,111M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets head_dim=64, hidden_size=512,
intermediate_size=2048, num_attention_heads=8, num_hidden_layers=4, num_key_value_heads=8,
vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/mistral
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mistral.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.MistralConfig(
    head_dim=64,
    hidden_size=512,
    intermediate_size=2048,
    num_attention_heads=8,
    num_hidden_layers=4,
    num_key_value_heads=8,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.MistralModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
