"""Real bench inputs: TORCH_TRACE logs of Hugging Face transformers, captured once, grown to ~100 MB.

The models are built from their configs (no weights, nothing downloaded) with small dimensions so each
compile stays short on a CPU; the logs are still what torch.compile writes for these architectures:
GPT-2 `generate()` with its recompiles as the sequence grows, a Llama-style decoder over several
sequence lengths, BERT, a Mixtral mixture of experts (top-2 routing). Each capture runs in its own
interpreter with inductor under TORCH_TRACE on CPU and is cached under bench/out/real/<name>/;
`make_big_log.py` then repeats the real frames with fresh compile ids into
bench/out/real_<name>_big.log.

    python bench/make_real_logs.py [--mb 100] [--only gpt2,llama,bert,mixtral] [--recapture]

Needs torch and transformers (dev dependencies); the logs it writes are read by bench_trace_reader.py.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"

# One program per model, run as `python -c` under TORCH_TRACE; small dims keep each compile ~1–3 min.
PROGRAMS = {
    "gpt2": r"""
import torch
from transformers import GPT2Config, GPT2LMHeadModel
torch.manual_seed(0)
config = GPT2Config(vocab_size=512, n_positions=128, n_embd=64, n_layer=2, n_head=4)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward)
prompt = torch.randint(0, 512, (1, 6))
with torch.no_grad():
    model.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=0)
    model.generate(torch.randint(0, 512, (2, 9)), max_new_tokens=4, do_sample=False, pad_token_id=0)
""",
    # many small units, each with its compile-event spans: one generate() (prefill, the first decode step,
    # then the decode steps with a dynamic cache length), so a grown log holds ~90 units of ~250 records
    "gpt2_generate": r"""
import torch
from transformers import GPT2Config, GPT2LMHeadModel
torch.manual_seed(0)
config = GPT2Config(vocab_size=512, n_positions=128, n_embd=64, n_layer=2, n_head=4)
model = GPT2LMHeadModel(config).eval()
model.forward = torch.compile(model.forward)
with torch.no_grad():
    model.generate(torch.randint(0, 512, (1, 6)), max_new_tokens=8, do_sample=False, pad_token_id=0)
""",
    "llama": r"""
import torch
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
model = LlamaForCausalLM(config).eval()
compiled = torch.compile(model)
with torch.no_grad():
    for length in (8, 16, 32, 64):
        compiled(torch.randint(0, 512, (1, length)), use_cache=False)
""",
    "bert": r"""
import torch
from transformers import BertConfig, BertForSequenceClassification
torch.manual_seed(0)
config = BertConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, max_position_embeddings=128, num_labels=3)
model = BertForSequenceClassification(config).eval()
compiled = torch.compile(model)
with torch.no_grad():
    for length in (16, 24):
        ids = torch.randint(0, 512, (2, length))
        compiled(input_ids=ids, attention_mask=torch.ones_like(ids))
""",
    # a mixture of experts: each token routed to its top-2 experts, a data-dependent choice of graph
    "mixtral": r"""
import torch
from transformers import MixtralConfig, MixtralForCausalLM
torch.manual_seed(0)
config = MixtralConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                       num_experts_per_tok=2, max_position_embeddings=256)
model = MixtralForCausalLM(config).eval()
compiled = torch.compile(model)
with torch.no_grad():
    for length in (8, 16, 32):
        compiled(torch.randint(0, 512, (1, length)), use_cache=False)
""",
}


def capture(name: str, recapture: bool) -> Path | None:
    """The model's trace log, captured now unless a previous capture is cached."""
    folder = OUT / "real" / name
    trace = folder / "trace"
    logs = sorted(trace.glob("*.log"), key=lambda p: p.stat().st_size) if trace.is_dir() else []
    if logs and not recapture and (folder / "done").exists():
        return logs[-1]
    trace.mkdir(parents=True, exist_ok=True)
    for old in trace.glob("*"):
        old.unlink()
    env = dict(os.environ, TORCH_TRACE=str(trace), INDUCTOR_PROVENANCE="1",
               TORCHINDUCTOR_CACHE_DIR=str(folder / "inductor_cache"), TORCHINDUCTOR_FX_GRAPH_CACHE="0",
               OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROGRAMS[name]], env=env, capture_output=True, text=True)
    (folder / "stderr.txt").write_text(done.stderr)
    logs = sorted(trace.glob("*.log"), key=lambda p: p.stat().st_size)
    if done.returncode != 0 or not logs:
        print(f"{name}: capture failed (exit {done.returncode}); see {folder / 'stderr.txt'}")
        return None
    (folder / "done").write_text(f"{time.perf_counter() - start:.1f} s\n")
    print(f"{name}: captured in {time.perf_counter() - start:.0f} s: {logs[-1]} "
          f"({logs[-1].stat().st_size / 1e6:.2f} MB)")
    return logs[-1]


def big_log(name: str, source: Path, mb: float) -> Path:
    out = OUT / f"real_{name}_big.log"
    if not out.exists() or abs(out.stat().st_size / 2**20 - mb) > 5 or out.stat().st_mtime < source.stat().st_mtime:
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"), str(source), str(out),
                        "--mb", str(mb)], check=True)
    return out


def real_logs(mb: float = 100, only: list[str] | None = None, recapture: bool = False) -> dict[str, Path]:
    """name → ~mb MB log for every model whose capture succeeds."""
    logs = {}
    for name in only or list(PROGRAMS):
        source = capture(name, recapture)
        if source is not None:
            logs[name] = big_log(name, source, mb)
    return logs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--only", help="comma-separated subset of " + ",".join(PROGRAMS))
    parser.add_argument("--recapture", action="store_true")
    args = parser.parse_args()
    for name, path in real_logs(args.mb, args.only.split(",") if args.only else None, args.recapture).items():
        print(f"{name}: {path} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
