# labels: name::xglm author::huggingface task::natural_language_processing family::xglm kind::decoder config::small
# ruff: noqa: E501
"""
transformers.XGLMModel (text decoder) built from transformers.XGLMConfig with a small
configuration, random weights, 28,994,560 parameters.

The default XGLMConfig makes a model of 564M parameters, too big for this corpus (<= ~150M
parameters, seconds on 2 CPU cores): the script sets d_model=512, ffn_dim=2048, num_layers=4,
vocab_size=32000.

max_seq_length should stay within the config's max_position_embeddings (2048).

Source: https://huggingface.co/docs/transformers/model_doc/xglm
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python xglm.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.XGLMConfig(
    d_model=512,
    ffn_dim=2048,
    num_layers=4,
    vocab_size=32000,
    use_cache=False,
)
model = transformers.XGLMModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
