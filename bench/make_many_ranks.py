"""Build a many-rank TORCH_TRACE job from one real rank log by cloning it, with planted differences.

Every clone is the template log (rank 3 of the public multi-rank corpus by default) plus an
`inductor_collective_schedule` artifact on its first compile, so the job has collectives to compare.
Planted on chosen ranks, in the log text, with every changed payload's md5 fixed up:

- recompiles: an extra recompile (the template's last compile copied under the next compile id), which
  also makes the rank's whole-run cache-lookup sequence longer
- graphs: a different Dynamo graph ([0/3]'s `sum` turned into `mean`)
- cache: an FX-graph cache miss where the others hit ([0/2])
- straggler: a slow compile (30 s added to [0/5], after the first collective)
- collectives: the collective schedule in another order
- late_collective: a slow first compile (30 s added to [0/0], which holds the first collective): the
  rank is both a compile-time straggler and late to its first collective
- lacks_collective: the rank never compiled [0/0] (its records dropped): it misses a compile id, and its
  whole-run sequences of collectives and cache lookups end early — the hang at the next collective
- tensor_meta: Inductor's runtime/tensor-meta record of [0/1] (present on every rank) with another
  input shape on two ranks
- slow_graph: the same record estimating [0/1] five times slower

Writes `planted.json` beside the logs: the findings the divergence report must contain, and no others.

    python bench/make_many_ranks.py OUT_DIR [--ranks 256] [--template LOG]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# torch's md5 input
from inspector.core.readers.payload_digest import strip_tabs as payload_bytes_as_hashed  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "tlparse-fixtures" / "multi_rank_logs"
TEMPLATE = CORPUS / "dedicated_log_torch_trace_rank_3.log"
SCHEDULE = ["torch.ops._c10d_functional.all_reduce_.default",
            "torch.ops._c10d_functional.all_gather_into_tensor.default",
            "torch.ops._c10d_functional.reduce_scatter_tensor.default"]
_ID = re.compile(r'"frame_id": (\d+), "frame_compile_id": (\d+), "attempt": (\d+)')
_MD5 = re.compile(r'"has_payload": "([0-9a-f]{32})"')


def planted_ranks(n: int) -> dict[str, list[int]]:
    """Which ranks carry which difference (the cache miss on two ranks, to show grouping)."""
    return {"recompiles": [n // 2], "graphs": [n // 4], "cache": [3, n - 3], "straggler": [n - 1],
            "collectives": [n // 8 + 1], "late_collective": [n // 2 + 3], "lacks_collective": [2],
            "tensor_meta": [n // 4 + 2, n // 4 + 3], "slow_graph": [n - 6]}  # apart from the others from 16 ranks on


def split_records(text: str) -> list[list[str]]:
    """Records as [envelope line, payload lines...]."""
    records: list[list[str]] = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        line += "\n"  # only newlines end lines (str.splitlines also splits on form feeds)
        if line.startswith("\t") and records:
            records[-1].append(line)
        else:
            records.append([line])
    return records


def compile_key(record: list[str]) -> tuple[int, int] | None:
    match = _ID.search(record[0])
    return (int(match[1]), int(match[2])) if match else None


def with_payload(envelope: str, payload: list[str]) -> list[str]:
    """The record with its md5 recomputed as torch does (tabs stripped, lines joined by newlines)."""
    digest = hashlib.md5(payload_bytes_as_hashed("".join(payload).encode())).hexdigest()
    return [_MD5.sub(f'"has_payload": "{digest}"', envelope), *payload]


def schedule_record(template_envelope: str, order: list[str]) -> list[str]:
    prefix = template_envelope.split("] {", 1)[0].rsplit(" ", 1)[0]
    envelope = (f'{prefix} torch/_inductor/debug.py:762] {{"artifact": {{"name": "inductor_collective_schedule", '
                f'"encoding": "json"}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, '
                f'"has_payload": "{"0" * 32}"}}\n')
    return with_payload(envelope, ["\t" + json.dumps(order) + "\n"])


def runtime_meta_record(template_envelope: str, shape: list[int], runtime_ns: int) -> list[str]:
    """Inductor's `inductor_runtime_and_tensor_meta` artifact of [0/1]: its ops with shapes and runtimes."""
    prefix = template_envelope.split("] {", 1)[0].rsplit(" ", 1)[0]
    envelope = (f'{prefix} torch/_inductor/debug.py:762] {{"artifact": {{"name": "inductor_runtime_and_tensor_meta", '
                f'"encoding": "json"}}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0, '
                f'"has_payload": "{"0" * 32}"}}\n')
    ops = [{"name": "triton_poi_fused_add_0", "type": "fused", "estimated_runtime_ns": runtime_ns,
            "inputs": [{"shape": shape, "dtype": "torch.float32", "stride": [shape[1], 1]}]},
           {"name": "extern_kernels.mm", "type": "extern", "estimated_runtime_ns": 2 * runtime_ns,
            "inputs": [{"shape": shape, "dtype": "torch.float32", "stride": [shape[1], 1]}]}]
    return with_payload(envelope, ["\t" + json.dumps({"ops": ops}) + "\n"])


def clone(records: list[list[str]], plants: set[str]) -> str:
    last = max(key for key in map(compile_key, records) if key)
    out: list[list[str]] = []
    extra: list[list[str]] = []
    for record in records:
        key = compile_key(record)
        if key == (0, 0) and "lacks_collective" in plants:
            continue
        envelope, payload = record[0], record[1:]
        if key == (0, 3) and "graphs" in plants and '"dynamo_output_graph"' in envelope:
            payload = [line.replace(".sum()", ".mean()").replace("sum_1", "mean_1") for line in payload]
            envelope = envelope.replace('"sum_1"', '"mean_1"')
            record = with_payload(envelope, payload)
        if key == (0, 2) and "cache" in plants and '"fx_graph_cache_hit"' in envelope:
            record = [envelope.replace('"fx_graph_cache_hit"', '"fx_graph_cache_miss"'), *payload]
        if key == (0, 5) and "straggler" in plants and '{"compilation_metrics"' in envelope:
            record = [_slower(envelope, 30.0), *payload]
        if key == (0, 0) and "late_collective" in plants and '{"compilation_metrics"' in envelope:
            record = [_slower(envelope, 30.0), *payload]
        out.append(record)
        if key == (0, 0) and '"dynamo_output_graph"' in envelope:
            order = [SCHEDULE[1], SCHEDULE[0], SCHEDULE[2]] if "collectives" in plants else SCHEDULE
            out.append(schedule_record(envelope, order))
        if key == (0, 1) and '"dynamo_output_graph"' in envelope:
            out.append(runtime_meta_record(envelope, [8, 32] if "tensor_meta" in plants else [8, 16],
                                           5000 if "slow_graph" in plants else 1000))
        if key == last and "recompiles" in plants:
            extra.append(_renumbered(record, last, (last[0], last[1] + 1)))
    return "".join(line for record in out + extra for line in record)


def _slower(envelope: str, seconds: float) -> str:
    head, _, body = envelope.partition("] ")
    meta = json.loads(body)
    metrics = meta["compilation_metrics"]
    metrics["entire_frame_compile_time_s"] = (metrics.get("entire_frame_compile_time_s") or 0) + seconds
    if isinstance(metrics.get("duration_us"), int):
        metrics["duration_us"] += int(seconds * 1e6)
    return f"{head}] {json.dumps(meta)}\n"


def _renumbered(record: list[str], old: tuple[int, int], new: tuple[int, int]) -> list[str]:
    old_id, new_id = f"{old[0]}/{old[1]}", f"{new[0]}/{new[1]}"
    envelope = record[0].replace(f'"frame_compile_id": {old[1]},', f'"frame_compile_id": {new[1]},')
    envelope = envelope.replace(f'"compile_id": "{old_id}"', f'"compile_id": "{new_id}"')
    payload = [line.replace(f'"compile_id": "{old_id}"', f'"compile_id": "{new_id}"') for line in record[1:]]
    return with_payload(envelope, payload) if payload else [envelope]


# The findings each plant must produce, by kind of the report. An extra recompile also lengthens the
# rank's whole-run sequence of cache lookups (the copied compile looked the FX graph up too).
FINDINGS = {"recompiles": ["recompiles", "cache_pattern"], "graphs": ["graphs"], "cache": ["cache"],
            "straggler": ["straggler"],
            "collectives": ["collectives"], "late_collective": ["straggler", "straggler"],
            "lacks_collective": ["compile_ids", "collective_sequence", "cache_pattern"], "tensor_meta": ["tensor_meta"],
            "slow_graph": ["runtime"]}


def expected_findings(n: int) -> list[dict]:
    return [{"kind": kind, "ranks": ranks, "planted": plant} for plant, ranks in planted_ranks(n).items()
            for kind in FINDINGS[plant]]


def make_job(out: Path, n: int = 256, template: Path = TEMPLATE) -> list[dict]:
    """Write the n-rank job into `out`; returns the planted findings (also in out/planted.json)."""
    out.mkdir(parents=True, exist_ok=True)
    records = split_records(template.read_text(encoding="utf-8"))
    by_rank: dict[int, set[str]] = {}
    for kind, ranks in planted_ranks(n).items():
        for rank in ranks:
            by_rank.setdefault(rank, set()).add(kind)
    plain = clone(records, set())
    for rank in range(n):
        text = clone(records, by_rank[rank]) if rank in by_rank else plain
        (out / f"dedicated_log_torch_trace_rank_{rank}.log").write_text(text, encoding="utf-8")
    expected = expected_findings(n)
    (out / "planted.json").write_text(json.dumps(expected, indent=1), encoding="utf-8")
    return expected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--template", type=Path, default=TEMPLATE)
    args = parser.parse_args()
    make_job(args.out, args.ranks, args.template)
    print(f"{args.ranks} rank logs in {args.out}")


if __name__ == "__main__":
    main()
