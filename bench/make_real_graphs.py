"""Real FX graphs for the graph-view benchmark and tests: Hugging Face models built from configs
(random weights, nothing downloaded) compiled under TORCH_TRACE, one log folder per model under
bench/out/real_graphs/ (kept: a run skips models whose log is already there).

    python bench/make_real_graphs.py                 # the default set (see MODELS)
    python bench/make_real_graphs.py gpt2_100 llama_4_inductor

gpt2_100 (aot_eager) gives Dynamo/AOT graphs of ~6k nodes in about a minute; llama_800 a Dynamo graph of
54k nodes (its Dynamo graph is logged after ~30 min on the 2-core box; AOT takes longer still — the
benchmark needs only the Dynamo graph); the `_inductor` rows (2 layers) also write post-grad graphs and
generated code, and serve the tests."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "real_graphs"

# name → (family, layers, hidden, backend)
MODELS = {
    "gpt2_2": ("gpt2", 2, 64, "aot_eager"),
    "gpt2_2_inductor": ("gpt2", 2, 64, "inductor"),
    "llama_2_inductor": ("llama", 2, 64, "inductor"),
    "gpt2_100": ("gpt2", 100, 64, "aot_eager"),
    "llama_800": ("llama", 800, 32, "aot_eager"),
}
DEFAULT = ("gpt2_2", "gpt2_2_inductor", "llama_2_inductor", "gpt2_100")

_CHILD = r'''
import sys, torch, transformers
family, layers, hidden, backend = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.manual_seed(0)
if family == "gpt2":
    config = transformers.GPT2Config(n_layer=layers, n_embd=hidden, n_head=2, n_positions=64, vocab_size=128,
                                    bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
else:
    config = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=2 * hidden,
                                      num_attention_heads=2, num_key_value_heads=2, vocab_size=128,
                                      max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(config)
model.eval()
ids = torch.randint(0, 128, (1, 16))
compiled = torch.compile(model, backend=backend)
with torch.no_grad():
    compiled(input_ids=ids)
'''


def make(name: str, out: Path = OUT, force: bool = False) -> Path:
    """Compile model `name` under TORCH_TRACE into out/name (a folder of one log); returns the folder."""
    family, layers, hidden, backend = MODELS[name]
    folder = out / name
    if not force and folder.is_dir() and any(folder.glob("*.log")):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.log"):
        old.unlink()
    env = dict(os.environ, TORCH_TRACE=str(folder), TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
               TRANSFORMERS_OFFLINE="1", HF_HUB_OFFLINE="1")
    subprocess.run([sys.executable, "-c", _CHILD, family, str(layers), str(hidden), backend],
                   env=env, check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"models to make, of {', '.join(MODELS)}")
    parser.add_argument("--force", action="store_true", help="compile again even if the log exists")
    args = parser.parse_args()
    unknown = set(args.names) - set(MODELS)
    if unknown:
        parser.error(f"unknown model(s) {', '.join(sorted(unknown))}; known: {', '.join(MODELS)}")
    for name in args.names or DEFAULT:
        started = time.perf_counter()
        folder = make(name, force=args.force)
        print(f"{name}: {folder} ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
