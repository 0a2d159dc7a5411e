# labels: name::roformer author::huggingface task::natural_language_processing family::roformer kind::decoder
# ruff: noqa: E501
"""
transformers.RoFormerModel (text decoder) built from transformers.RoFormerConfig with its
default configuration, random weights, 123,555,840 parameters.

max_seq_length should stay within the config's max_position_embeddings (1536).

Source: https://huggingface.co/docs/transformers/model_doc/roformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python roformer.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.RoFormerConfig(use_cache=False)
model = transformers.RoFormerModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
