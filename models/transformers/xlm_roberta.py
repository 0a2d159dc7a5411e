# labels: name::xlm_roberta author::huggingface task::natural_language_processing family::xlm_roberta kind::decoder
# ruff: noqa: E501
"""
transformers.XLMRobertaModel (text decoder) built from transformers.XLMRobertaConfig with its
default configuration, random weights, 109,482,240 parameters.

max_seq_length should stay within the config's max_position_embeddings (512).

Source: https://huggingface.co/docs/transformers/model_doc/xlm-roberta
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python xlm_roberta.py --batch_size 8
batch_size, max_seq_length = parse(["batch_size", "max_seq_length"])

# model and inputs
config = transformers.XLMRobertaConfig(use_cache=False)
model = transformers.XLMRobertaModel(config)
model.eval()
inputs = {
    "input_ids": torch.randint(0, config.vocab_size, (batch_size, max_seq_length)),
    "attention_mask": torch.ones(batch_size, max_seq_length, dtype=torch.long),
}

# call the model
with torch.no_grad():
    model(**inputs)
