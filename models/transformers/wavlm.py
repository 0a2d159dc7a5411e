# labels: name::wavlm author::huggingface task::audio family::wavlm kind::audio
"""
transformers.WavLMModel (speech/audio encoder) built from transformers.WavLMConfig with its
default configuration, random weights, 94,381,936 parameters.

The input is a raw waveform, input_values (batch, max_audio_seq_length samples; default 25600,
1.6 s at 16 kHz).

Source: https://huggingface.co/docs/transformers/model_doc/wavlm
"""
import torch
import transformers

from mlprof.parser import parse

torch.manual_seed(0)

# parameters (TurnkeyML's standard names): python wavlm.py --batch_size 8
batch_size, max_audio_seq_length = parse(["batch_size", "max_audio_seq_length"])

# model and inputs
config = transformers.WavLMConfig()
model = transformers.WavLMModel(config)
model.eval()
inputs = {"input_values": torch.randn(batch_size, max_audio_seq_length)}

# call the model
with torch.no_grad():
    model(**inputs)
