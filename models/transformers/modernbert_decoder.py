# labels: name::modernbert_decoder author::huggingface task::natural_language_processing family::modernbert_decoder kind::decoder
# ruff: noqa: E501
"""
transformers.ModernBertDecoderModel (text decoder) built from
transformers.ModernBertDecoderConfig with its default configuration, random weights, 149,014,272
parameters.

Source: https://huggingface.co/docs/transformers/model_doc/modernbert-decoder
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python modernbert_decoder.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.ModernBertDecoderConfig(use_cache=False)
model = transformers.ModernBertDecoderModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
