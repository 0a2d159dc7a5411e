# labels: name::gpt2 author::huggingface task::natural_language_processing
"""
GPT-2 small: transformers.GPT2Model built from the default GPT2Config (12 layers, hidden
size 768, 12 heads), random weights. use_cache=False: one forward pass over the whole
sequence, without returning the key/value cache used for generation.

Source: https://huggingface.co/docs/transformers/model_doc/gpt2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python gpt2.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.GPT2Config(use_cache=False)
model = transformers.GPT2Model(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
