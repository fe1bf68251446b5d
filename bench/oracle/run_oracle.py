"""The oracle harness: each case of bench/oracle/cases runs in its own process under our capture,
then the session is opened with the project (the summary the CLI prints) and compared field by
field with torch's own record of the same process (torch_record.json, written by the capture).

    OMP_NUM_THREADS=1 python bench/oracle/run_oracle.py [--cases a,b] [--work DIR] [--doc docs/fidelity.md]

Prints an agreement table (fields x cases) and, with --doc, writes it with every difference."""

from __future__ import annotations

import argparse
import os
import math
import re
import resource
import shutil
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
CASES = Path(__file__).resolve().parent / "cases"

from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script  # noqa: E402
from inspector.core.outputs.summary import summarize  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402

FIELDS = ("compiles", "fail_types", "restarts", "graph_ops", "recompiles", "failed_guards", "breaks", "gb_ids",
          "kernels", "fx_cache", "torch_breaks", "outcomes", "frame_skips", "eager_triggered", "changed")
NOT_GENERATED = ("extern", "fallback")  # calls into ATen the output code makes, no kernel it defines
_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")
_GB_LINK = re.compile(r"/gb/gb(\d{4})\.html")
_COMMENT = re.compile(r"\s+#.*$")
_SUBJECT = (re.compile(r"^tensor '(.+?)' "), re.compile(r"^not (.+)$"), re.compile(r"^(.+?) == "),
            re.compile(r"___check_(?:obj|type)_id\((.+?),"))
_FRAME_SKIP = "/gb/gb7000.html"  # torch's link for a break it could not resume from: it skipped the whole frame
# a frame of torch's operator code that compiles the user's functions for an eager call (torch.cond, flex_attention)
_IN_TORCH = re.compile(r"[/\\]torch[/\\](?:_higher_order_ops|nn[/\\]attention)[/\\]")


def _subject(guard: str) -> str:
    """The guarded value a failed guard names (`which`, `x`, `self.scale`), read plainly from torch's words."""
    text = _guard(guard)
    return next((match[1] for pattern in _SUBJECT if (match := pattern.search(text))), text)


def capture_case(script: Path, session: Path, cache: Path) -> int:
    if session.exists():
        shutil.rmtree(session)
    plan = plan_script(script, [], session, CaptureSettings(threads=1), None)
    plan.env.update(TORCHINDUCTOR_CACHE_DIR=str(cache), OMP_NUM_THREADS="1")
    process = CaptureProcess(plan)
    process.wait()
    return process.exit_code


def _guard(text: str) -> str:
    """A failed guard as both sides word it: without the compile id before it and the source comment."""
    text = text.split("\nUser stack trace:")[0].strip()
    text = re.sub(r"^\d+/\d+(_\d+)?: ", "", text)
    return _COMMENT.sub("", text).strip()


def _id(shown: str) -> str:
    """A compile id as torch's metrics write it ("0/1"), from the summary's "[0/1]" or "[0/1_1]"."""
    return re.sub(r"_\d+$", "", shown.strip("[]"))


def _outcome(notice: str) -> str:
    """What our notice says torch did with a failed compile."""
    if "unless it was compiled with fullgraph=True" in notice:
        return "eager unless fullgraph"
    return "raised" if "RAISED" in notice else "eager"


def theirs(record, raised: str = "") -> dict:
    """Each field as torch's in-process record states it; whether a failed compile raised, as the
    program saw it (`raised`: what a case prints as `raised <type>` for an error it caught, and
    `<type>: message` of an error that ended it)."""
    metrics = [m for m in record.compilation_metrics if m.get("is_forward", True) is not False
               and not m.get("is_runtime")]
    ids = sorted({m.get("compile_id") for m in metrics if m.get("compile_id")})
    counters = record.counters
    resumes = counters.get("resumes", {})
    return {
        "compiles": ids,
        "fail_types": {m["compile_id"]: m["fail_type"] for m in metrics if m.get("fail_type")},
        "restarts": {m["compile_id"]: len(m["restart_reasons"]) for m in metrics if m.get("restart_reasons")},
        "graph_ops": {m["compile_id"]: m["graph_op_count"] for m in metrics
                      if m.get("compile_id") and m.get("graph_op_count") is not None},
        "recompiles": len(record.recompiles),
        "failed_guards": sorted({_guard(f) for r in record.recompiles for f in r.every_failure()}),
        "breaks": sorted(re.sub(r"^torch_dynamo_resume_in_", "", name) for name in resumes),
        "gb_ids": sorted({f"GB{number}" for group in ("graph_break", "unimplemented")
                          for key in counters.get(group, {}) for number in _GB_LINK.findall(key)}),
        "kernels": sum(code.kernels for code in record.output_code),
        "fx_cache": {"hit": int(counters.get("inductor", {}).get("fxgraph_cache_hit", 0)),
                     "miss": int(counters.get("inductor", {}).get("fxgraph_cache_miss", 0))},
        "torch_breaks": sum(int(times) for group in ("graph_break", "unimplemented")
                            for key, times in counters.get(group, {}).items() if _FRAME_SKIP not in key),
        "outcomes": {m["compile_id"]: "raised" if re.search(rf"(^|raised ){m['fail_type']}\b", raised, re.M)
                     else "eager"
                     for m in metrics if m.get("fail_type")},
        "frame_skips": sum(int(times) for group in ("graph_break", "unimplemented")
                           for key, times in counters.get(group, {}).items() if _FRAME_SKIP in key),
        "eager_triggered": sorted(m["compile_id"] for m in metrics if m.get("compile_id")
                                  and _IN_TORCH.search(m.get("co_filename") or "")),
        "changed": _changed_per_frame(record),
    }


def _changed_per_frame(record) -> dict:
    """Per frame, every guarded value that failed against the newest graph checked at each recompile."""
    changed: dict[str, set] = {}
    for recompile in record.recompiles:
        entries = [entry for entry in recompile.cache_entries if entry.failures]
        if not entries:
            continue
        newest = max(entries, key=lambda entry: int((entry.compile_id or "0/-1").split("/")[-1]))
        frame = (recompile.compile_id or "?").split("/")[0]
        changed.setdefault(frame, set()).update(_subject(failure) for failure in newest.failures)
    return {frame: sorted(values) for frame, values in changed.items()}


def ours(session, summary: dict) -> dict:
    """Each field as the project states it (the session and the summary the CLI prints)."""
    ids = sorted({str(unit.compile_id.without_attempt()).strip("[]") for unit in session.units
                  if unit.compile_id.autograd is None})
    compiled_function = {str(unit.compile_id.without_attempt()): unit.function for unit in session.units}
    skipped = {str(unit.compile_id.without_attempt()) for unit in session.units if unit.fail_type}
    broken = set()
    for brk in session.breaks:  # where torch resumes: the break's line in the frame being compiled
        if str(brk.compile_id.without_attempt()) in skipped:
            continue  # the frame's compile failed (a break in a loop skips it whole): torch resumed nowhere
        function = compiled_function.get(str(brk.compile_id.without_attempt())) or ""
        names = {function, _RESUME.sub(r"\1", function)}
        frames = [brk.location, *(brk.via or ())]
        frame = next((frame for frame in frames if frame is not None and frame.function in names), brk.location)
        broken.add(_RESUME.sub(r"\1", frame.function or "") + f"_at_{frame.line}")
    cache = summary.get("cache", {}).get("fx_graph", {})
    return {
        "compiles": ids,
        "fail_types": {str(u.compile_id.without_attempt()).strip("[]"): u.fail_type for u in session.units
                       if u.fail_type},
        "restarts": {_id(str(unit.compile_id)): len(unit.restart_reasons) for unit in session.units
                     if unit.restart_reasons and unit.compile_id.autograd is None},
        "graph_ops": {_id(u["compile_id"]): u["graph_ops"] for u in summary.get("units", [])
                      if u.get("graph_ops") is not None and not u["compile_id"].startswith("[!")},
        "recompiles": len(summary.get("recompiles", [])),
        "failed_guards": sorted({_guard(g["guard"]) for r in summary.get("recompiles", [])
                                 for g in r.get("failed_guards", [])}),
        "breaks": sorted(broken),
        "gb_ids": sorted({gb_id for key in ("sites", "failures")
                          for typed in summary.get("break_types", {}).get(key, [])
                          for gb_id in [(typed.get("type") or {}).get("gb_id"), *_chained_ids(typed)] if gb_id}),
        "kernels": sum(count for kind, count in summary.get("kernels", {}).get("by_kind", {}).items()
                       if kind not in NOT_GENERATED),
        "fx_cache": {"hit": cache.get("hit", 0), "miss": cache.get("miss", 0)},
        "torch_breaks": (summary.get("run") or {}).get("torch_counted_breaks"),
        "outcomes": {_id(notice["compile_id"]): _outcome(notice["text"]) for notice in summary.get("notices", [])
                     if notice["key"] == "fallback"},
        "frame_skips": len(summary.get("frame_skips", [])),
        "eager_triggered": sorted(_id(u["compile_id"]) for u in summary.get("units", []) if u.get("triggered_by")),
        "changed": {str(frame): sorted(values) for frame, values in _changed_groups(summary).items()},
    }


def _chained_ids(typed: dict) -> list[str]:
    """The types of the breaks torch raised while handling a site's break (`GB7000 graph break in loop`)."""
    return [match[0] for words in (typed.get("type") or {}).get("chained", [])
            if (match := re.match(r"GB\d{4}\b", words))]


def _changed_groups(summary: dict) -> dict:
    changed: dict[int, set] = {}
    for group in summary.get("recompile_groups", []):
        changed.setdefault(group["frame"], set()).update(group.get("changed", []))
    return changed


def _children_cpu_s() -> float:
    """CPU seconds the finished child processes used (user + system): a case's cost whatever else the
    machine runs meanwhile (a capture's compile workers end with it)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compare(case: str, work: Path, cache: Path, recapture: bool = True) -> dict:
    session_dir = work / case
    started = time.perf_counter()
    timing = work / f"{case}.capture_s"  # the capture's wall and CPU seconds, kept for a later --compare-only
    code = None
    if recapture:
        cpu_before = _children_cpu_s()
        code = capture_case(CASES / f"{case}.py", session_dir, cache)
        timing.write_text(f"{time.perf_counter() - started:.1f} {_children_cpu_s() - cpu_before:.1f}")
    seconds, cpu = (float(value) for value in (timing.read_text().split() + ["nan", "nan"])[:2]) \
        if timing.is_file() else (None, None)
    session = open_path(session_dir)
    if session.torch_record is None:
        return {"case": case, "error": f"no torch_record.json (exit {code})", "seconds": seconds, "cpu_s": cpu}
    stdout = session_dir / "stdout.txt"
    raised = stdout.read_text(errors="replace") if stdout.is_file() else ""
    error = session.manifest.error if session.manifest is not None else None
    raised += f"\n{error.message}" if error is not None and error.message else ""
    mine = ours(session, summarize(session))
    torch_says = theirs(session.torch_record, raised)
    return {"case": case, "exit": code, "seconds": seconds, "cpu_s": cpu,
            "fields": {name: (mine[name], torch_says[name]) for name in FIELDS},
            "hook_errors": list(session.torch_record.hook_errors)}


def table(rows: list[dict]) -> tuple[str, int, int]:
    lines = ["| case | " + " | ".join(FIELDS) + " |", "|---" * (len(FIELDS) + 1) + "|"]
    agree = total = 0
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['case']} | " + " | ".join("–" for _ in FIELDS) + " |")
            continue
        marks = []
        for name in FIELDS:
            same = row["fields"][name][0] == row["fields"][name][1]
            agree, total = agree + same, total + 1
            marks.append("=" if same else "≠")
        lines.append(f"| {row['case']} | " + " | ".join(marks) + " |")
    return "\n".join(lines), agree, total


def differences(rows: list[dict]) -> list[str]:
    from known_differences import KNOWN

    found = []
    for row in rows:
        if "error" in row:
            found.append(f"- **{row['case']}**: {row['error']}")
            continue
        for name in FIELDS:
            mine, torch_says = row["fields"][name]
            if mine != torch_says:
                reason = KNOWN.get((row["case"], name), "not explained yet")
                found.append(textwrap.fill(f"- **{row['case']}** `{name}`: ours `{mine}`, torch's `{torch_says}`. "
                                           f"Why: {reason}", width=118, subsequent_indent="  ",
                                           break_long_words=False, break_on_hyphens=False))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", help="comma-separated case names (default: every case)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/oracle-work"))
    parser.add_argument("--doc", type=Path, help="write the table and differences as Markdown here")
    parser.add_argument("--compare-only", action="store_true",
                        help="compare the sessions already in --work (after a change to the analysis)")
    args = parser.parse_args(argv)
    names = args.cases.split(",") if args.cases else sorted(path.stem for path in CASES.glob("*.py"))
    cache = args.work / "inductor-cache"
    rows = []
    for name in names:
        row = compare(name, args.work, cache, recapture=not args.compare_only)
        rows.append(row)
        print(f"{name}: {'error' if 'error' in row else 'done'}, captured in {row['seconds'] or 0:.1f} s", flush=True)
    text, agree, total = table(rows)
    found = differences(rows)
    share = 100 * agree / total if total else 0.0
    seconds = [row["seconds"] for row in rows if row["seconds"] is not None]
    cpu = [row["cpu_s"] for row in rows if row.get("cpu_s") is not None and math.isfinite(row["cpu_s"])]
    timing = (f"{len(seconds)} cases captured in {sum(seconds):.0f} s of wall time (median "
              f"{sorted(seconds)[len(seconds) // 2]:.0f} s, longest {max(seconds):.0f} s)"
              if seconds else "no capture times recorded")
    if cpu:
        timing += (f";\n{len(cpu)} of them measured in CPU time: {sum(cpu):.0f} s (median "
                   f"{sorted(cpu)[len(cpu) // 2]:.0f} s), about what an idle core would take")
    print(text)
    print(f"\n{agree} of {total} fields agree ({share:.1f} %)")
    print("\n".join(found))
    if args.doc:
        args.doc.write_text(DOC.format(cases=len(rows), agree=agree, total=total, share=share, table=text,
                                       differences="\n".join(found) or "None.", date=time.strftime("%Y-%m-%d"),
                                       timing=timing, cores=os.cpu_count()),
                            encoding="utf-8")
    return 0


DOC = """# Fidelity: our facts against torch's own record

Each case of `bench/oracle/cases` runs in its own process under `compile-inspector capture`; the capture
writes torch's in-process record (`torch_record.json`: counters, every compilation's metrics, every failed
guard of every recompile, the kernels of each output code). `bench/oracle/run_oracle.py` opens the session
with the project and compares field by field. Measured {date}, torch 2.13.0 CPU:

    OMP_NUM_THREADS=1 python bench/oracle/run_oracle.py --doc docs/fidelity.md

{cases} cases, {agree} of {total} compared fields agree ({share:.1f} %). `=` agrees, `≠` differs, `–` no record.

Fields: `compiles` (compile ids torch recorded metrics for, forward), `fail_types` (torch's `fail_type` per
compile), `restarts` (restart reasons per compile), `graph_ops` (ops of each compile's Dynamo
graph), `recompiles` (count), `failed_guards` (every failed guard, torch's words without the source
comment), `breaks` (torch's resume functions `<fn>_at_<line>` against our breaks' function and line, a frame
whose compile failed apart: a break in a loop skips it whole, and torch resumes nowhere), `gb_ids` (the
graph-break types torch's `graph_break` and `unimplemented` counters link to, against the types of our break sites,
the breaks torch chained to them, GB7000, and the compiles that failed at a break: fullgraph=True, no fake kernel),
`kernels` (generated kernels defined in every output code, subgraphs included; extern calls apart),
`fx_cache` (FX graph cache hits and misses), `torch_breaks` (the graph breaks the summary says torch's counters saw,
against the events of torch's `graph_break` and `unimplemented` counters, a break chained with GB7000 as one),
`outcomes` (per failed compile, what our notice says torch did, raised to the caller or ran eagerly, against what
the program saw: the error it caught and printed, or the error that ended it), `frame_skips` (frames skipped whole,
GB7000, against the counters' GB7000 events), `eager_triggered` (compiles torch started itself for an eager
`torch.cond`, `while_loop`, `flex_attention` call, against the compiles whose code torch's metrics place in its
operator code), `changed` (per frame, the guarded values that failed against the newest earlier graph at a
recompile, against every failure torch's record holds for that graph).

{table}

## Differences

{differences}

## Not compared yet

Symbols with their refined ranges and the 0/1 specialisation: torch's record holds no shape environment to
compare them with. torch's record of a recompile names the value a guard expected (`self.scale == 1.0`), not the
one that arrived, so `changed` compares the values, not what they changed to.

## Time

Capturing the cases one after another, each in its own process, OMP_NUM_THREADS=1, on {cores} cores shared
with other work, with the harness's own Inductor cache in `--work` (cold at the first run there, warm at
later ones; these are the last capture of each case):
{timing}.
`--compare-only` re-reads the captured sessions in under a second each.
"""

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
