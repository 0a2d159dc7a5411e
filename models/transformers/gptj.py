# labels: name::gptj author::huggingface task::natural_language_processing family::gptj kind::decoder config::small
# ruff: noqa: E501
"""
transformers.GPTJModel (text decoder) built from transformers.GPTJConfig with a small
configuration, random weights, 28,982,272 parameters.

The default GPTJConfig makes a model of 5,844M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets n_embd=512, n_head=8, n_layer=4,
n_positions=1024, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (1024).

Source: https://huggingface.co/docs/transformers/model_doc/gptj
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gptj.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.GPTJConfig(
    n_embd=512,
    n_head=8,
    n_layer=4,
    n_positions=1024,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.GPTJModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
