# labels: name::convbert author::huggingface task::natural_language_processing family::convbert kind::encoder
# ruff: noqa: E501
"""
transformers.ConvBertModel (text encoder) built from transformers.ConvBertConfig with its
default configuration, random weights, 105,680,520 parameters.

max_seq_length should stay within the config's max_position_embeddings (512).

Source: https://huggingface.co/docs/transformers/model_doc/convbert
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python convbert.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.ConvBertConfig()
model = transformers.ConvBertModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
