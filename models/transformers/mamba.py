# labels: name::mamba author::huggingface task::natural_language_processing family::mamba kind::decoder config::small
# ruff: noqa: E501
"""
transformers.MambaModel (text decoder) built from transformers.MambaConfig with a small
configuration, random weights, 29,944,320 parameters.

The default MambaConfig makes a model of 159M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets hidden_size=512, intermediate_size=2048,
num_hidden_layers=4, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/mamba
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mamba.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.MambaConfig(
    hidden_size=512,
    intermediate_size=2048,
    num_hidden_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.MambaModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
