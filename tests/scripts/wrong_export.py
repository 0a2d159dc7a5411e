"""Exports "fine" but bakes a value computed from its input into the graph: numerically wrong on
other inputs. (A model that bakes in the batch size gets one static graph per batch size
instead; see tests/test_export_fallback.py.)"""
import torch


class BakesData(torch.nn.Module):
    def forward(self, x):
        return x * float(x.mean())


BakesData()(torch.rand(1, 4))
