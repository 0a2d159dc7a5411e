# labels: name::clip_text_model author::huggingface task::natural_language_processing family::clip_text_model kind::encoder
# ruff: noqa: E501
"""
transformers.CLIPTextModel (text encoder) built from transformers.CLIPTextConfig with its
default configuration, random weights, 63,192,064 parameters.

CLIP's text model has 77 positions; the config is built with
max_position_embeddings=max_seq_length so that any sequence length works.

Source: https://huggingface.co/docs/transformers/model_doc/clip
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python clip_text_model.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.CLIPTextConfig(max_position_embeddings=max_seq_length)
model = transformers.CLIPTextModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
