# labels: name::albert author::huggingface task::natural_language_processing
"""
ALBERT base (v2): transformers.AlbertModel with the albert-base-v2 configuration (12
layers sharing their weights, hidden size 768, 12 heads, embedding size 128), random
weights. (The default AlbertConfig is ALBERT xxlarge.)

Source: https://huggingface.co/docs/transformers/model_doc/albert
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python albert.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.AlbertConfig(
    hidden_size=768, num_attention_heads=12, intermediate_size=3072, embedding_size=128
)
model = transformers.AlbertModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
