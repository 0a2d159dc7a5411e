# labels: name::mobilebert author::huggingface task::natural_language_processing
"""
MobileBERT: transformers.MobileBertModel built from the default MobileBertConfig (the
google/mobilebert-uncased sizes: 24 layers, hidden size 512, bottleneck 128, 4 heads),
random weights.

Source: https://huggingface.co/docs/transformers/model_doc/mobilebert
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python mobilebert.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.MobileBertConfig()
model = transformers.MobileBertModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
