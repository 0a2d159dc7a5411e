# labels: name::t5_small_encoder author::huggingface task::natural_language_processing
"""
T5-small encoder: transformers.T5EncoderModel built from the default T5Config (the
t5-small sizes: 6 layers, d_model 512, 8 heads, d_ff 2048), random weights.

Source: https://huggingface.co/docs/transformers/model_doc/t5
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python t5_small_encoder.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.T5Config()
model = transformers.T5EncoderModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
