"""Steady-state cost of the production recorder on a Hugging Face model loop.

    python bench/bench_recorder_overhead.py [--rounds 20] [--steps 200]

A small GPT-2 (built from a config: 2 layers, 64 wide, no weights) is compiled with the recorder
installed, so its compiles are recorded; then the same compiled step is timed in interleaved rounds,
recorder installed (on) and closed (off: the anchor), the order alternating. Each round's figure is
the median step of its block; the overhead is median(on) / median(off) − 1 with a bootstrap interval
over whole rounds (analysis/comparison.bootstrap_interval). Allocations made by the recorder's code
during steady steps are counted with tracemalloc. Threads pinned to 1."""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from inspector.capture import recorder as recorder_module  # noqa: E402
from inspector.capture.recorder import Recorder  # noqa: E402
from inspector.core.analysis.comparison import bootstrap_interval  # noqa: E402


def build_model():
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, n_positions=64, vocab_size=512, bos_token_id=0,
                        eos_token_id=0)
    torch.manual_seed(0)
    return GPT2LMHeadModel(config).eval(), torch.randint(0, 512, (2, 16))


def block(step, steps: int) -> float:
    """The median time of one step over `steps` steps, after a few untimed ones and a collection (so
    the garbage of switching the recorder on or off is not collected inside the block)."""
    for _ in range(10):
        step()
    gc.collect()
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    folder = Path(tempfile.mkdtemp(prefix="recorder_overhead_"))
    events = folder / "events.jsonl"
    model, tokens = build_model()
    recorder = Recorder(events, recorder_module.MAX_BYTES, recorder_module.BACKUPS, 3600)
    compiled = torch.compile(model)

    def step():
        with torch.no_grad():
            compiled(tokens)

    started = time.perf_counter()
    for _ in range(3):  # compile and warm up, recorded
        step()
    compile_s = time.perf_counter() - started
    recorder.flush()
    recorded = sum(1 for line in events.read_text().splitlines() if '"kind":"compile"' in line)
    recorder.close()
    rounds = []
    for index in range(args.rounds):
        on_first = index % 2 == 0
        figures = {}
        for arm in (("on", "off") if on_first else ("off", "on")):
            live = Recorder(folder / f"round{index}.jsonl", recorder_module.MAX_BYTES, 0, 3600) if arm == "on" else None
            figures[arm] = block(step, args.steps)
            if live is not None:
                live.close()
        rounds.append((figures["on"], figures["off"]))
    ratio = statistics.median(on for on, _ in rounds) / statistics.median(off for _, off in rounds)
    low, high = bootstrap_interval(rounds)
    live = Recorder(folder / "alloc.jsonl", recorder_module.MAX_BYTES, 0, 3600)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(args.steps):
        step()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    mine = [stat for stat in after.compare_to(before, "filename")
            if stat.traceback[0].filename.endswith("recorder.py") and stat.count_diff > 0]
    calls = []  # calls into the recorder's code during steady steps (the profile hook sees every call)
    recorder_file = recorder_module.__file__
    sys.setprofile(lambda frame, event, _arg: calls.append(1) if event == "call"
                   and frame.f_code.co_filename == recorder_file else None)
    for _ in range(args.steps):
        step()
    steady_calls = len(calls)
    with torch.no_grad():  # the control: a new shape recompiles, and the hook sees the recorder's callbacks
        compiled(torch.randint(0, 512, (3, 16)))
    sys.setprofile(None)
    print(f"model: GPT2LMHeadModel (2 layers, 64 wide), batch 2 × 16 tokens, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}")
    print(f"compile + warm-up with the recorder: {compile_s:.1f} s, {recorded} compile event(s) recorded")
    print(f"steady step, recorder off (anchor): {statistics.median(off for _, off in rounds) * 1e3:.3f} ms; "
          f"on: {statistics.median(on for on, _ in rounds) * 1e3:.3f} ms ({args.rounds} interleaved rounds "
          f"of {args.steps} steps)")
    print(f"overhead: {(ratio - 1) * 100:+.2f} % "
          f"[95 % interval {(low - 1) * 100:+.2f} % … {(high - 1) * 100:+.2f} %]")
    live.close()
    print(f"allocations by the recorder during {args.steps} steady steps: {sum(s.count_diff for s in mine)} "
          f"block(s), {sum(s.size_diff for s in mine)} bytes; calls into its code: {steady_calls} "
          f"(during one recompile, the control: {len(calls) - steady_calls})")


if __name__ == "__main__":
    main()
