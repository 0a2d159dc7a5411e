# labels: name::wav2vec2_conformer author::huggingface task::audio family::wav2vec2_conformer kind::audio config::small
# ruff: noqa: E501
"""
transformers.Wav2Vec2ConformerModel (speech/audio encoder) built from
transformers.Wav2Vec2ConformerConfig with a small configuration, random weights, 31,850,112
parameters.

The default Wav2Vec2ConformerConfig makes a model of 180M parameters, too big for this corpus
(<= ~150M parameters, seconds on 2 CPU cores): the script sets hidden_size=512,
intermediate_size=2048, num_attention_heads=8, num_hidden_layers=4.

The input is a raw waveform, input_values (batch, max_audio_seq_length samples; default 25600,
1.6 s at 16 kHz).

Source: https://huggingface.co/docs/transformers/model_doc/wav2vec2-conformer
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python wav2vec2_conformer.py --batch_size 8
batch_size, max_audio_seq_length = parse(["batch_size", "max_audio_seq_length"])

# model and inputs
config = transformers.Wav2Vec2ConformerConfig(
    hidden_size=512,
    intermediate_size=2048,
    num_attention_heads=8,
    num_hidden_layers=4,
)
model = transformers.Wav2Vec2ConformerModel(config)
model.eval()
inputs = {"input_values": torch.randn(batch_size, max_audio_seq_length)}

# call the model
with torch.no_grad():
    model(**inputs)
