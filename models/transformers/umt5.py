# labels: name::umt5 author::huggingface task::natural_language_processing family::umt5 kind::encoder_decoder config::small
# ruff: noqa: E501
"""
transformers.UMT5Model (encoder-decoder) built from transformers.UMT5Config with a small
configuration, random weights, 54,146,048 parameters.

The default UMT5Config makes a model of 172M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets d_ff=2048, d_model=512, num_heads=8,
num_layers=4, vocab_size=32000.

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/umt5
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python umt5.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.UMT5Config(
    d_ff=2048,
    d_model=512,
    num_heads=8,
    num_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.UMT5Model(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
