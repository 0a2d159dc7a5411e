# labels: name::falcon author::huggingface task::natural_language_processing family::falcon kind::decoder config::small
# ruff: noqa: E501
"""
transformers.FalconModel (text decoder) built from transformers.FalconConfig with a small
configuration, random weights, 27,137,024 parameters.

The default FalconConfig makes a model of 6,922M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets hidden_size=512, num_attention_heads=8,
num_hidden_layers=4, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (2048).

Source: https://huggingface.co/docs/transformers/model_doc/falcon
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python falcon.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.FalconConfig(
    hidden_size=512,
    num_attention_heads=8,
    num_hidden_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.FalconModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
