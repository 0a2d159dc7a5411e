# labels: name::attention author::mlprof task::test
"""
A small transformer encoder: torch.nn.TransformerEncoder with 2 layers (d_model 64, 4 heads of
torch.nn.MultiheadAttention, feed-forward 128, batch_first) on a random sequence of vectors.

Source: written for mlprof; https://pytorch.org/docs/stable/generated/torch.nn.TransformerEncoder.html
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python attention.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
d_model = 64
layer = torch.nn.TransformerEncoderLayer(
    d_model=d_model, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True
)
model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
model.eval()
inputs = {"src": torch.rand(batch_size, max_seq_length, d_model)}

# call the model
with torch.no_grad():
    model(**inputs)
