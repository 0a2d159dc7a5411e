# labels: name::plbart author::huggingface task::natural_language_processing family::plbart kind::encoder_decoder
# ruff: noqa: E501
"""
transformers.PLBartModel (encoder-decoder) built from transformers.PLBartConfig with its default
configuration, random weights, 139,220,736 parameters.

max_seq_length should stay within the config's max_position_embeddings (1024).

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/plbart
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python plbart.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.PLBartConfig(use_cache=False)
model = transformers.PLBartModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
