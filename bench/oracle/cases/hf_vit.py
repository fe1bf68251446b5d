import torch
import transformers
torch.manual_seed(0)
config = transformers.ViTConfig(**dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
    image_size=16, patch_size=8))
model = transformers.ViTModel(config).eval()
inputs = {"pixel_values": torch.randn(1, 3, 16, 16)}
with torch.no_grad():
    torch.compile(model)(**inputs)
