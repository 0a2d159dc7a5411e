# labels: name::roberta author::huggingface task::natural_language_processing
"""
RoBERTa base: transformers.RobertaModel with the roberta-base configuration (12 layers,
hidden size 768, 12 heads, vocabulary 50265), random weights. Note: pad_token_id is 1 as in
roberta-base, so the all-ones input_ids are padding tokens and every position id is the
padding index; the amount of computation is the same as for real text.

Source: https://huggingface.co/docs/transformers/model_doc/roberta
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python roberta.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.RobertaConfig(
    vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1
)
model = transformers.RobertaModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
