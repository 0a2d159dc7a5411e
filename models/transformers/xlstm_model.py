# labels: name::xlstm_model author::huggingface task::natural_language_processing family::xlstm kind::decoder config::small
# ruff: noqa: E501
"""
transformers.xLSTMModel (text decoder) built from transformers.xLSTMConfig with a small
configuration, random weights, 29,268,544 parameters.

The default xLSTMConfig makes a model of 6,659M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets hidden_size=512, num_heads=8,
num_hidden_layers=4, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/xlstm
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python xlstm_model.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.xLSTMConfig(
    hidden_size=512,
    num_heads=8,
    num_hidden_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.xLSTMModel(config)
model.eval()
inputs = {"input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
