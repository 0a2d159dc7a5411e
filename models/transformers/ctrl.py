# labels: name::ctrl author::huggingface task::natural_language_processing family::ctrl kind::decoder config::small
# ruff: noqa: E501
"""
transformers.CTRLModel (text decoder) built from transformers.CTRLConfig with a small
configuration, random weights, 54,184,960 parameters.

The default CTRLConfig makes a model of 1,638M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets n_embd=512, n_head=8, n_layer=4,
n_positions=1024, vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (1024).

Source: https://huggingface.co/docs/transformers/model_doc/ctrl
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python ctrl.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.CTRLConfig(
    n_embd=512,
    n_head=8,
    n_layer=4,
    n_positions=1024,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.CTRLModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
