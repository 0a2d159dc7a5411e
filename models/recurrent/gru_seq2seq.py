# labels: name::gru_seq2seq author::mlprof task::natural_language_processing family::gru kind::recurrent
# ruff: noqa: E501
"""
A sequence-to-sequence model: a 2-layer GRU encoder over the source tokens (embedding 256, 512
hidden units), whose final state starts a 2-layer GRU decoder over the target tokens (teacher
forcing: the whole target sequence in one call), and a linear layer to the target vocabulary
(8000) at every step. Source and target both have max_seq_length tokens.

Written for mlprof in plain torch, random weights.

Source: written for mlprof; https://pytorch.org/docs/stable/nn.html#recurrent-layers
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class GRUSeq2Seq(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=256, hidden_size=512, num_layers=2):
        super().__init__()
        self.source_embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.target_embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.encoder = torch.nn.GRU(embedding_dim, hidden_size, num_layers, batch_first=True)
        self.decoder = torch.nn.GRU(embedding_dim, hidden_size, num_layers, batch_first=True)
        self.output = torch.nn.Linear(hidden_size, vocab_size)

    def forward(self, source_ids, target_ids):
        _, state = self.encoder(self.source_embedding(source_ids))
        output, _ = self.decoder(self.target_embedding(target_ids), state)
        return self.output(output)


# parameters (TurnkeyML's standard names): python gru_seq2seq.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 8000
model = GRUSeq2Seq(vocab_size)
model.eval()
inputs = {
    "source_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length)),
    "target_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length)),
}

# call the model
with torch.no_grad():
    model(**inputs)
