# labels: name::dpr author::huggingface task::natural_language_processing family::dpr kind::encoder
"""
transformers.DPRQuestionEncoder (text encoder) built from transformers.DPRConfig with its
default configuration, random weights, 108,891,648 parameters.

max_seq_length should stay within the config's max_position_embeddings (512).

Source: https://huggingface.co/docs/transformers/model_doc/dpr
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python dpr.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.DPRConfig()
model = transformers.DPRQuestionEncoder(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
