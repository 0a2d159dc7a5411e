# labels: name::bert author::huggingface task::natural_language_processing
"""
BERT base (uncased): transformers.BertModel built from the default BertConfig (12 layers,
hidden size 768, 12 heads), random weights.

Source: https://huggingface.co/docs/transformers/model_doc/bert
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python bert.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BertConfig()
model = transformers.BertModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
