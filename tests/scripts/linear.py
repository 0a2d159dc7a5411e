# labels: name::linear author::mlprof-tests task::test
"""One Linear layer, called on a batch."""
import torch

from mlprof.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
model = torch.nn.Linear(10, 5).eval()
inputs = {"input": torch.rand(batch_size, 10)}
with torch.no_grad():
    model(**inputs)
