# labels: name::funnel author::huggingface task::natural_language_processing family::funnel kind::encoder
# ruff: noqa: E501
"""
transformers.FunnelModel (text encoder) built from transformers.FunnelConfig with its default
configuration, random weights, 130,973,184 parameters.

Source: https://huggingface.co/docs/transformers/model_doc/funnel
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python funnel.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.FunnelConfig()
model = transformers.FunnelModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
