# labels: name::prophetnet author::huggingface task::natural_language_processing family::prophetnet kind::encoder_decoder config::small
# ruff: noqa: E501
"""
transformers.ProphetNetModel (encoder-decoder) built from transformers.ProphetNetConfig with a
small configuration, random weights, 108,340,224 parameters.

The default ProphetNetConfig makes a model of 391M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets decoder_ffn_dim=2048, encoder_ffn_dim=2048,
hidden_size=512, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (512).

Called with input_ids (the encoder's) and decoder_input_ids (the decoder's), both max_seq_length
tokens.

Source: https://huggingface.co/docs/transformers/model_doc/prophetnet
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python prophetnet.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.ProphetNetConfig(
    decoder_ffn_dim=2048,
    encoder_ffn_dim=2048,
    hidden_size=512,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.ProphetNetModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "decoder_input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
