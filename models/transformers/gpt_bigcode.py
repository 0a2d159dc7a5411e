# labels: name::gpt_bigcode author::huggingface task::natural_language_processing family::gpt_bigcode kind::decoder
# ruff: noqa: E501
"""
transformers.GPTBigCodeModel (text decoder) built from transformers.GPTBigCodeConfig with its
default configuration, random weights, 111,446,784 parameters.

max_seq_length should stay within the config's max_position_embeddings (1024).

Source: https://huggingface.co/docs/transformers/model_doc/gpt_bigcode
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gpt_bigcode.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.GPTBigCodeConfig(use_cache=False)
model = transformers.GPTBigCodeModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
