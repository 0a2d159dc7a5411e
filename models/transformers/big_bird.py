# labels: name::big_bird author::huggingface task::natural_language_processing family::big_bird kind::decoder
# ruff: noqa: E501
"""
transformers.BigBirdModel (text decoder) built from transformers.BigBirdConfig with its default
configuration, random weights, 127,468,800 parameters.

max_seq_length should stay within the config's max_position_embeddings (4096).

Source: https://huggingface.co/docs/transformers/model_doc/big_bird
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python big_bird.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BigBirdConfig(use_cache=False)
model = transformers.BigBirdModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
