# labels: name::longt5 author::huggingface task::natural_language_processing family::longt5 kind::encoder_decoder
# ruff: noqa: E501
"""
transformers.LongT5Model (encoder-decoder) built from transformers.LongT5Config with its default
configuration, random weights, 60,506,624 parameters.

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/longt5
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python longt5.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.LongT5Config(use_cache=False)
model = transformers.LongT5Model(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
