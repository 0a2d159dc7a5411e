# labels: name::canine author::huggingface task::natural_language_processing family::canine kind::encoder
# ruff: noqa: E501
"""
transformers.CanineModel (text encoder) built from transformers.CanineConfig with its default
configuration, random weights, 132,082,944 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/canine
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python canine.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.CanineConfig()
model = transformers.CanineModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
