# labels: name::xlnet author::huggingface task::natural_language_processing family::xlnet kind::encoder config::small
# ruff: noqa: E501
"""
transformers.XLNetModel (text encoder) built from transformers.XLNetConfig with a small
configuration, random weights, 38,441,472 parameters.

The default XLNetConfig makes a model of 360M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets d_model=512, n_head=8, n_layer=4,
vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/xlnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python xlnet.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.XLNetConfig(d_model=512, n_head=8, n_layer=4, vocab_size=32000)
model = transformers.XLNetModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
