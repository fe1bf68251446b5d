"""Graph diff speed on synthetic transformer-like graphs of 5k and 50k nodes.

    python bench/bench_graph_diff.py

B is A with an extra op every 500 nodes, every node after it renamed (as FX renames), and the batch
dimension made symbolic — the shape of a real recompile plus a code edit. Targets (issue 7): 5k nodes
≤ 1 s, 50k nodes ≤ 10 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inspector.core.model.fx_graph_text import FxGraph, FxNode  # noqa: E402
from inspector.core.graphs.graph_diff import diff_graphs  # noqa: E402

BLOCK = ("aten.addmm.default", "aten.relu.default", "aten.mul.Tensor", "aten.add.Tensor",
         "aten.native_layer_norm.default", "aten.view.default", "aten.permute.default", "aten.bmm.default",
         "aten._softmax.default", "aten.sum.dim_IntList")


def graph(nodes: int, extra_every: int | None = None, batch: str = "8") -> FxGraph:
    result = FxGraph()
    result.add(FxNode("x", "placeholder", "x", shape=[batch, "64"], dtype="f32"))
    previous, weight, count = "x", 0, 0
    for index in range(nodes):
        if extra_every and index and index % extra_every == 0:
            name = f"extra_{count}"
            result.add(FxNode(name, "call_function", "aten.neg.default", previous, [previous], shape=[batch, "64"],
                              dtype="f32"))
            previous, count = name, count + 1
        if index % 50 == 0:
            weight_name = f"w_{weight}"
            result.add(FxNode(weight_name, "placeholder", weight_name, shape=["64", "64"], dtype="f32"))
            weight += 1
        name = f"op_{index + count}"
        inputs = [previous] + ([f"w_{weight - 1}"] if index % 10 == 0 else [])
        result.add(FxNode(name, "call_function", BLOCK[index % len(BLOCK)], ", ".join(inputs), inputs,
                          shape=[batch, "64"], dtype="f32"))
        previous = name
    result.add(FxNode("output", "output", "output", f"({previous},)", [previous]))
    return result


def main() -> None:
    for size in (5_000, 50_000):
        a, b = graph(size), graph(size, extra_every=500, batch="s77")
        started = time.perf_counter()
        result = diff_graphs(a, b)
        elapsed = time.perf_counter() - started
        print(f"{size:>6} nodes: diff {elapsed:.2f} s; matched {len(result.matched)}, changed {len(result.changed)}, "
              f"added {len(result.added)}, removed {len(result.removed)}, similarity {result.similarity:.3f}")


if __name__ == "__main__":
    main()
