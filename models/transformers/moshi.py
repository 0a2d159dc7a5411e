# labels: name::moshi author::huggingface task::natural_language_processing family::moshi kind::decoder config::small
# ruff: noqa: E501
"""
transformers.MoshiModel (text decoder) built from transformers.MoshiConfig with a small
configuration, random weights, 26,874,880 parameters.

The default MoshiConfig makes a model of 6,708M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets ffn_dim=2048, head_dim=64, hidden_size=512,
num_attention_heads=8, num_hidden_layers=4, num_key_value_heads=8, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (3000).

Source: https://huggingface.co/docs/transformers/model_doc/moshi
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python moshi.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.MoshiConfig(
    ffn_dim=2048,
    head_dim=64,
    hidden_size=512,
    num_attention_heads=8,
    num_hidden_layers=4,
    num_key_value_heads=8,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.MoshiModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
