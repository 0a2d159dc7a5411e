# labels: name::deberta_v2 author::huggingface task::natural_language_processing family::deberta_v2 kind::encoder config::small
# ruff: noqa: E501
"""
transformers.DebertaV2Model (text encoder) built from transformers.DebertaV2Config with a small
configuration, random weights, 29,256,704 parameters.

The default DebertaV2Config makes a model of 878M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets hidden_size=512, intermediate_size=2048,
num_attention_heads=8, num_hidden_layers=4, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (512).

Source: https://huggingface.co/docs/transformers/model_doc/deberta-v2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python deberta_v2.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.DebertaV2Config(
    hidden_size=512,
    intermediate_size=2048,
    num_attention_heads=8,
    num_hidden_layers=4,
    vocab_size=32000,
)
model = transformers.DebertaV2Model(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
