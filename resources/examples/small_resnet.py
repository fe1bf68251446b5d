"""A small ResNet-style conv net (conv → batch norm → ReLU with skip connections) in eval mode: one
graph, no break, where Inductor folds and fuses the pointwise work around the convolutions."""

import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(h)))


class SmallResNet(nn.Module):
    def __init__(self, channels: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.stages = nn.Sequential(Residual(channels), Residual(channels))
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))


def inspector_model():
    torch.manual_seed(0)
    return SmallResNet().eval(), (torch.randn(4, 3, 32, 32),)


if __name__ == "__main__":
    model, example = inspector_model()
    with torch.no_grad():
        torch.compile(model)(*example)
