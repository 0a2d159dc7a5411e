# labels: name::embedding author::mlprof task::test
"""
An integer-input model: int64 token ids into torch.nn.Embedding(1000, 32), mean over the
sequence, then a linear layer with 4 outputs (a bag-of-embeddings text classifier).

Source: written for mlprof.
"""
import torch

from mlprof.parser import parse

torch.manual_seed(0)


class EmbeddingClassifier(torch.nn.Module):
    def __init__(self, vocab_size=1000, embedding_dim=32, num_classes=4):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.classifier = torch.nn.Linear(embedding_dim, num_classes)

    def forward(self, input_ids):
        return self.classifier(self.embedding(input_ids).mean(dim=1))


# parameters (TurnkeyML's standard names): python embedding.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
vocab_size = 1000
model = EmbeddingClassifier(vocab_size=vocab_size)
model.eval()
inputs = {"input_ids": torch.randint(0, vocab_size, (batch_size, max_seq_length), dtype=torch.long)}

# call the model
with torch.no_grad():
    model(**inputs)
