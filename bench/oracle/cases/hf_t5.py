import torch
import transformers
torch.manual_seed(0)
config = transformers.T5Config(**dict(vocab_size=64, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_decoder_layers=1,
    num_heads=2))
model = transformers.T5ForConditionalGeneration(config).eval()
inputs = {"input_ids": torch.randint(0, 64, (1, 8)), "decoder_input_ids": torch.randint(0, 64, (1, 4))}
with torch.no_grad():
    torch.compile(model)(**inputs)
