"""A model that calls its backbone while it is built (as torchvision's SSD does to learn the
backbone's output channels): one model, not two."""
import torch

backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU())
with torch.no_grad():
    channels = backbone(torch.zeros(1, 3, 16, 16)).shape[1]
model = torch.nn.Sequential(backbone, torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                            torch.nn.Linear(channels, 4)).eval()
with torch.no_grad():
    model(torch.rand(2, 3, 32, 32))
