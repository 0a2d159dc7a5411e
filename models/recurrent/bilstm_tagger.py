# labels: name::bilstm_tagger author::mlprof task::natural_language_processing family::lstm kind::recurrent
# ruff: noqa: E501
"""
A sequence tagger (named-entity recognition style): token ids into an embedding (vocabulary
20000, 100 features), a 2-layer bidirectional torch.nn.LSTM (2 x 200 hidden units), a linear
layer with 9 tags for every token.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class BiLSTMTagger(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=100, hidden_size=200, num_tags=9):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.lstm = torch.nn.LSTM(
            embedding_dim, hidden_size, num_layers=2, bidirectional=True, batch_first=True
        )
        self.tagger = torch.nn.Linear(2 * hidden_size, num_tags)

    def forward(self, input_ids):
        output, _ = self.lstm(self.embedding(input_ids))
        return self.tagger(output)


# parameters (TurnkeyML's standard names): python bilstm_tagger.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 20000
model = BiLSTMTagger(vocab_size)
model.eval()
inputs = {"input_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length))}

# call the model
with torch.no_grad():
    model(**inputs)
