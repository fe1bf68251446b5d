"""torch.compile Inspector: see what torch.compile captured, broke, fused, generated and whether it paid off."""

__version__ = "0.1.0"
