# labels: name::blenderbot author::huggingface task::natural_language_processing family::blenderbot kind::encoder_decoder config::small
# ruff: noqa: E501
"""
transformers.BlenderbotModel (encoder-decoder) built from transformers.BlenderbotConfig with a
small configuration, random weights, 45,942,784 parameters.

The default BlenderbotConfig makes a model of 2,696M parameters, too big for this corpus (<=
~150M parameters, seconds on 2 CPU cores): the script sets d_model=512,
decoder_attention_heads=8, decoder_ffn_dim=2048, decoder_layers=4, encoder_attention_heads=8,
encoder_ffn_dim=2048, encoder_layers=4, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (128).

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/blenderbot
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python blenderbot.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BlenderbotConfig(
    d_model=512,
    decoder_attention_heads=8,
    decoder_ffn_dim=2048,
    decoder_layers=4,
    encoder_attention_heads=8,
    encoder_ffn_dim=2048,
    encoder_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.BlenderbotModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
