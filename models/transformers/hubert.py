# labels: name::hubert author::huggingface task::audio family::hubert kind::audio
"""
transformers.HubertModel (speech/audio encoder) built from transformers.HubertConfig with its
default configuration, random weights, 94,371,712 parameters.

The input is a raw waveform, input_values (batch, max_audio_seq_length samples; default 25600,
1.6 s at 16 kHz).

Source: https://huggingface.co/docs/transformers/model_doc/hubert
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python hubert.py --batch_size 8
batch_size, max_audio_seq_length = parse(["batch_size", "max_audio_seq_length"])

# model and inputs
config = transformers.HubertConfig()
model = transformers.HubertModel(config)
model.eval()
inputs = {"input_values": torch.randn(batch_size, max_audio_seq_length)}

# call the model
with torch.no_grad():
    model(**inputs)
