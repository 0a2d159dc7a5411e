# labels: name::reformer author::huggingface task::natural_language_processing family::reformer kind::encoder
# ruff: noqa: E501
"""
transformers.ReformerModel (text encoder) built from transformers.ReformerConfig with its
default configuration, random weights, 5,811,712 parameters.

max_seq_length should stay within the config's max_position_embeddings (4096).

Source: https://huggingface.co/docs/transformers/model_doc/reformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python reformer.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.ReformerConfig(use_cache=False)
model = transformers.ReformerModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
