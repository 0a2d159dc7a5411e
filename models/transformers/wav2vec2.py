# labels: name::wav2vec2 author::huggingface task::audio family::wav2vec2 kind::audio
"""
transformers.Wav2Vec2Model (speech/audio encoder) built from transformers.Wav2Vec2Config with
its default configuration, random weights, 94,371,712 parameters.

The input is a raw waveform, input_values (batch, max_audio_seq_length samples; default 25600,
1.6 s at 16 kHz).

Source: https://huggingface.co/docs/transformers/model_doc/wav2vec2
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python wav2vec2.py --batch_size 8
batch_size, max_audio_seq_length = parse(["batch_size", "max_audio_seq_length"])

# model and inputs
config = transformers.Wav2Vec2Config()
model = transformers.Wav2Vec2Model(config)
model.eval()
inputs = {"input_values": torch.randn(batch_size, max_audio_seq_length)}

# call the model
with torch.no_grad():
    model(**inputs)
