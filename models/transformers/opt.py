# labels: name::opt author::huggingface task::natural_language_processing family::opt kind::decoder
"""
transformers.OPTModel (text decoder) built from transformers.OPTConfig with its default
configuration, random weights, 125,239,296 parameters.

max_seq_length should stay within the config's max_position_embeddings (2048).

Source: https://huggingface.co/docs/transformers/model_doc/opt
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python opt.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.OPTConfig(use_cache=False)
model = transformers.OPTModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
