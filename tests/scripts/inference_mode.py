# labels: name::inference_mode author::mlprof-tests task::test
"""Built, fed and called under torch.inference_mode(): its parameters, buffers (BatchNorm's
running statistics) and inputs are all inference tensors."""
import torch

from mlprof.parser import parse

torch.manual_seed(0)
batch_size, = parse(["batch_size"])
with torch.inference_mode():
    model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.BatchNorm1d(16),
                                torch.nn.ReLU(), torch.nn.Linear(16, 5)).eval()
    inputs = {"input": torch.rand(batch_size, 10)}
    model(**inputs)
