# labels: name::bigru_stacked author::mlprof task::natural_language_processing family::gru kind::recurrent
# ruff: noqa: E501
"""
A stacked bidirectional encoder: token ids into an embedding (vocabulary 20000, 256 features), a
3-layer bidirectional torch.nn.GRU (2 x 256 hidden units, dropout between layers, inactive in
eval mode), attention pooling over the sequence and a linear layer with 5 classes.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class BiGRUEncoder(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=256, hidden_size=256, num_classes=5):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.gru = torch.nn.GRU(
            embedding_dim,
            hidden_size,
            num_layers=3,
            bidirectional=True,
            dropout=0.1,
            batch_first=True,
        )
        self.attention = torch.nn.Linear(2 * hidden_size, 1)
        self.classifier = torch.nn.Linear(2 * hidden_size, num_classes)

    def forward(self, input_ids):
        output, _ = self.gru(self.embedding(input_ids))
        weights = torch.softmax(self.attention(output), dim=1)
        return self.classifier((weights * output).sum(1))


# parameters (TurnkeyML's standard names): python bigru_stacked.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 20000
model = BiGRUEncoder(vocab_size)
model.eval()
inputs = {"input_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
