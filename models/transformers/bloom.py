# labels: name::bloom author::huggingface task::natural_language_processing family::bloom kind::decoder
# ruff: noqa: E501
"""
transformers.BloomModel (text decoder) built from transformers.BloomConfig with its default
configuration, random weights, 16,156,544 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/bloom
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python bloom.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BloomConfig(use_cache=False)
model = transformers.BloomModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
