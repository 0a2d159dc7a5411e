# labels: name::no_batch author::mlprof task::test
"""
A model whose input has NO batch dimension: a single 1-d vector of 16 features (shape (16,))
through Linear(16, 8), ReLU and Linear(8, 1); the output has shape (1,).

The script deliberately does not call parse() and ignores --batch_size: there is no batch axis
to vary, and axis 0 of the input is the feature axis, so marking it as a dynamic "batch" axis
(as for every other model) would be wrong. Tools should detect this case (a batch-size sweep
does not apply) rather than resize axis 0.

Source: written for mlprof.
"""
import torch

torch.manual_seed(0)


class VectorModel(torch.nn.Module):
    def __init__(self, in_features=16, hidden=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(in_features, hidden)
        self.fc2 = torch.nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


# parameters: none (no batch dimension, see the docstring)

# model and inputs
model = VectorModel()
model.eval()
inputs = {"x": torch.rand(16)}

# call the model
with torch.no_grad():
    model(**inputs)
