# labels: name::lstm_language_model author::mlprof task::natural_language_processing family::lstm kind::recurrent
# ruff: noqa: E501
"""
A word-level language model (Zaremba et al.'s medium model): an embedding (vocabulary 10000, 650
features), a 2-layer torch.nn.LSTM with 650 units and a decoder to the vocabulary that shares
the embedding's weights; next-token logits at every position.

Written for mlprof in plain torch, random weights.

Source: https://arxiv.org/abs/1409.2329
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class LSTMLanguageModel(torch.nn.Module):
    def __init__(self, vocab_size, size=650, num_layers=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, size)
        self.lstm = torch.nn.LSTM(size, size, num_layers=num_layers, batch_first=True)
        self.decoder = torch.nn.Linear(size, vocab_size)
        self.decoder.weight = self.embedding.weight  # tied weights

    def forward(self, input_ids):
        output, _ = self.lstm(self.embedding(input_ids))
        return self.decoder(output)


# parameters (TurnkeyML's standard names): python lstm_language_model.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 10000
model = LSTMLanguageModel(vocab_size)
model.eval()
inputs = {"input_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
