# labels: name::blenderbot_small author::huggingface task::natural_language_processing family::blenderbot_small kind::encoder_decoder
# ruff: noqa: E501
"""
transformers.BlenderbotSmallModel (encoder-decoder) built from
transformers.BlenderbotSmallConfig with its default configuration, random weights, 85,113,344
parameters.

max_seq_length should stay within the config's max_position_embeddings (512).

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/blenderbot-small
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python blenderbot_small.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BlenderbotSmallConfig(use_cache=False)
model = transformers.BlenderbotSmallModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
