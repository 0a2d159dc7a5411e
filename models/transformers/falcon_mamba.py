# labels: name::falcon_mamba author::huggingface task::natural_language_processing family::falcon_mamba kind::decoder config::small
# ruff: noqa: E501
"""
transformers.FalconMambaModel (text decoder) built from transformers.FalconMambaConfig with a
small configuration, random weights, 29,944,320 parameters.

The default FalconMambaConfig makes a model of 159M parameters, too big for this corpus (<=
~150M parameters, seconds on 2 CPU cores): the script sets hidden_size=512,
intermediate_size=2048, num_hidden_layers=4, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/falcon_mamba
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python falcon_mamba.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.FalconMambaConfig(
    hidden_size=512,
    intermediate_size=2048,
    num_hidden_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.FalconMambaModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
