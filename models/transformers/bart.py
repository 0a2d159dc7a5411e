# labels: name::bart author::huggingface task::natural_language_processing
"""
BART base (encoder-decoder): transformers.BartModel with the facebook/bart-base
configuration (6 encoder and 6 decoder layers, d_model 768, 12 heads), random weights.
Only input_ids and attention_mask are given: the model builds decoder_input_ids itself by
shifting input_ids right, so encoder and decoder both run over max_seq_length tokens.
use_cache=False: no key/value cache is returned.

Source: https://huggingface.co/docs/transformers/model_doc/bart
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python bart.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.BartConfig(
    d_model=768,
    encoder_layers=6,
    decoder_layers=6,
    encoder_attention_heads=12,
    decoder_attention_heads=12,
    encoder_ffn_dim=3072,
    decoder_ffn_dim=3072,
    use_cache=False,
)
model = transformers.BartModel(config)
model.eval()
inputs = {
    "input_ids": torch.ones(batch_size, max_seq_length, dtype=torch.long),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
