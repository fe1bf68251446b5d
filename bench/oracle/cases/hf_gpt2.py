import torch
import transformers
torch.manual_seed(0)
config = transformers.GPT2Config(**dict(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=32))
model = transformers.GPT2LMHeadModel(config).eval()
inputs = {"input_ids": torch.randint(0, 64, (1, 8))}
with torch.no_grad():
    torch.compile(model)(**inputs)
