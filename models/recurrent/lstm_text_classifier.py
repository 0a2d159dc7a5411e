# labels: name::lstm_text_classifier author::mlprof task::natural_language_processing family::lstm kind::recurrent
# ruff: noqa: E501
"""
A text classifier: token ids into an embedding (vocabulary 20000, 128 features), a 1-layer
torch.nn.LSTM (256 hidden units, batch_first), a linear layer with 2 classes on the last hidden
state.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class LSTMClassifier(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=128, hidden_size=256, num_classes=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.lstm = torch.nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.classifier = torch.nn.Linear(hidden_size, num_classes)

    def forward(self, input_ids):
        _, (h, _) = self.lstm(self.embedding(input_ids))
        return self.classifier(h[-1])


# parameters (TurnkeyML's standard names): python lstm_text_classifier.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 20000
model = LSTMClassifier(vocab_size)
model.eval()
inputs = {"input_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
