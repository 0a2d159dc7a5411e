# labels: name::fnet author::huggingface task::natural_language_processing family::fnet kind::encoder
# ruff: noqa: E501
"""
transformers.FNetModel (text encoder) built from transformers.FNetConfig with its default
configuration, random weights, 82,861,056 parameters.

max_seq_length should stay within the config's max_position_embeddings (512).

Source: https://huggingface.co/docs/transformers/model_doc/fnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python fnet.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.FNetConfig()
model = transformers.FNetModel(config)
model.eval()
inputs = {"input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
