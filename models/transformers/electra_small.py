# labels: name::electra_small author::huggingface task::natural_language_processing
"""
ELECTRA small (discriminator): transformers.ElectraModel built from the default
ElectraConfig (12 layers, hidden size 256, 4 heads, embedding size 128), random weights.

Source: https://huggingface.co/docs/transformers/model_doc/electra
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python electra_small.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.ElectraConfig()
model = transformers.ElectraModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
