import torch
import transformers
torch.manual_seed(0)
config = transformers.DistilBertConfig(**dict(
    vocab_size=64, dim=32, n_layers=1, n_heads=2, hidden_dim=64, max_position_embeddings=32))
model = transformers.DistilBertModel(config).eval()
inputs = {"input_ids": torch.randint(0, 64, (1, 8))}
with torch.no_grad():
    torch.compile(model)(**inputs)
