# labels: name::mpt author::huggingface task::natural_language_processing family::mpt kind::decoder config::small
# ruff: noqa: E501
"""
transformers.MptModel (text decoder) built from transformers.MptConfig with a small
configuration, random weights, 91,906,560 parameters.

The default MptConfig makes a model of 1,311M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets d_model=512, vocab_size=32000.

Source: https://huggingface.co/docs/transformers/model_doc/mpt
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mpt.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.MptConfig(d_model=512, vocab_size=32000, use_cache=False)
model = transformers.MptModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
