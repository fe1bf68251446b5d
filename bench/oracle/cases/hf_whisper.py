import torch
import transformers
torch.manual_seed(0)
config = transformers.WhisperConfig(**dict(
    vocab_size=64, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
    decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8,
    max_source_positions=8, max_target_positions=16, pad_token_id=1, bos_token_id=2, eos_token_id=2,
    decoder_start_token_id=3))
model = transformers.WhisperModel(config).eval()
inputs = {"input_features": torch.randn(1, 8, 16), "decoder_input_ids": torch.randint(0, 64, (1, 4))}
with torch.no_grad():
    torch.compile(model)(**inputs)
