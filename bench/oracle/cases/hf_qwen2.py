import torch
import transformers
torch.manual_seed(0)
config = transformers.Qwen2Config(**dict(
    num_key_value_heads=2, vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
    intermediate_size=64, max_position_embeddings=32))
model = transformers.Qwen2ForCausalLM(config).eval()
inputs = {"input_ids": torch.randint(0, 64, (1, 8))}
with torch.no_grad():
    torch.compile(model)(**inputs)
