"""Reader speed and memory on ~100 MB TORCH_TRACE logs, each row side by side with tlparse in one run.

    python bench/bench_trace_reader.py [--rows synthetic,gpt2,llama,bert] [--log PATH] [--repeat 3]
    python bench/bench_trace_reader.py --side-by-side 5 --log PATH   # the CLI against tlparse, interleaved

Rows: `synthetic` repeats the bundled mlp_breaks log (bench/make_big_log.py); `gpt2`, `llama`,
`bert` and `mixtral` repeat real captures of Hugging Face models (bench/make_real_logs.py, captured once and cached
under bench/out). --log adds a row for any log. For every row, each in a fresh interpreter so its time
and peak RSS are its own, median of --repeat runs:

- first view: what the navigator, the problems list and the verdict headline read — the index (md5s
  deferred), each unit's status, the problems, the kernel count — with no index cache;
- full analysis: every payload verified, every graph, kernel and compile stage read, the summary
  (`compile-inspector summary`), with no index cache; peak RSS of this run;
- reopen: the same log opened again with the index cache warm (index, summary and problems: what
  the app shows first);
- `tlparse -p` on the same log, timed in the same run.
Each figure is given as wall time and as CPU time (user + system): the machine this runs on is shared
and often loaded far beyond its cores, where wall time says more about the neighbours than about
the reader; the load average before and after each row is printed with it.

--side-by-side N times what a user runs, `compile-inspector summary LOG` (a fresh process, no index
cache), and `tlparse -p` on the same log (its report written to a temporary folder on disk, as a user
runs it, and again to one in /dev/shm, in memory), N rounds taking turns, so all meet the same neighbours;
CPU time includes each one's child processes (the reader's md5 helper). Each round also times the
physical floor of the same log in a fresh interpreter: read every byte, md5 them, parse every envelope's
JSON (what any reader of the log must do at least, on one core). The ratio to tlparse is given with
its 95 % interval and read against issue 49's target (TARGET) as the gates read an interval. Each checkout timed is
byte-compiled first, as an installed copy is (`compile_bytecode`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))
from inspector.core.analysis.comparison import compare_rounds, gate_doubt, meets  # noqa: E402

TARGET = 0.35  # issue 49: `summary` of a log at most this share of `tlparse -p`'s time on the same log
EXAMPLE = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"

# Runs in a child interpreter: prints seconds and peak RSS as JSON.
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary import at_a_glance
from inspector.core.gc_policy import collector_paused
start, cpu = time.perf_counter(), time.process_time()  # modules are loaded already in the app: time the open
log = Path({log!r})
what = {what!r}
with collector_paused():  # as the app's load worker and the command line read a session
    session = build_trace_session([log], log, verify_md5=what != "first_view")
    facts = dict(units=len(session.units), breaks=len(session.breaks))
    if what == "first_view":
        statuses = [unit.status for unit in session.units]
        analysis = SessionAnalysis(session)  # the navigator, the problems and the verdict's headline
        problems, headline = analysis.issues, at_a_glance(analysis).headline
        facts.update(kernels=sum(len(unit.kernels) for unit in session.units), problems=len(problems))
    else:
        summary = session_summary(session)
        problems = SessionAnalysis(session).issues
        facts.update(kernels=summary["kernels"]["total"], problems=len(problems),
                     stages=len(summary["compile_time"]["self_s"]), unreadable=len(summary["unreadable"]))
children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the md5 helper's share
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu + children.ru_utime + children.ru_stime
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(seconds=elapsed, cpu=cpu, rss=rss, **facts)))
"""


def measure(log: Path, what: str, cache: Path | None) -> dict:
    env = dict(os.environ)
    env.pop("TCI_NO_CACHE", None)
    if cache is None:
        env["TCI_NO_CACHE"] = "1"
    else:
        env["XDG_CACHE_HOME"] = str(cache)
    code = CHILD.format(root=str(ROOT), log=str(log), what=what)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


# tlparse writes its report (a few hundred MB in a couple of thousand files for a 100 MB log) into a
# folder: on disk its system time, most of its time, follows the file system's state from one run to
# the next; written to memory it is its own work. The side-by-side times both (docs/benchmarks.md).
MEMORY_FOLDER = Path("/dev/shm")


def time_tlparse(log: Path, in_memory: bool = False) -> tuple[float, float] | None:
    """Wall and CPU seconds (user + system, all its threads) of `tlparse -p` on `log`, its report written
    to a temporary folder on disk as a user runs it, or with `in_memory` to one in MEMORY_FOLDER."""
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(tlparse).exists() or (in_memory and not MEMORY_FOLDER.is_dir()):
        return None
    with tempfile.TemporaryDirectory(dir=MEMORY_FOLDER if in_memory else None) as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([tlparse, str(log), "-o", out, "--overwrite", "-p", "--no-browser"],
                       capture_output=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def time_summary_cli(log: Path, root: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU seconds (its children included) of `compile-inspector summary LOG`, no index cache,
    as the checkout at `root` runs it."""
    env = {**os.environ, "TCI_NO_CACHE": "1", "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "inspector", "summary", str(log)], cwd=root, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# Runs in a child interpreter: the floor of reading `log` (read, md5, JSON of every envelope line).
FLOOR = r"""
import hashlib, json, sys
data = open(sys.argv[1], "rb").read()
hashlib.md5(data).hexdigest()
for line in data.split(b"\n"):
    if line and line[0] != 9:  # an envelope line, not a payload line (a tab)
        start = line.find(b"] {")
        if start >= 0:
            json.loads(line[start + 2:])
"""


def time_floor(log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of the physical floor (FLOOR) on `log`, interpreter start included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, str(log)], check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compile_bytecode(root: Path) -> None:
    """Byte-compile the checkout at `root` as `pip install` does, so each run imports the tool as an
    installed copy does: with PYTHONDONTWRITEBYTECODE set (as on the shared bench machine) every run
    would compile ~110 modules again, ~0.15 s of CPU a user never pays."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "inspector")], env=env,
                   stdout=subprocess.DEVNULL, check=True)


def side_by_side(log: Path, rounds: int, baseline: Path | None = None) -> dict:
    """`rounds` interleaved runs of the CLI summary and of tlparse -p (and of the summary of the checkout
    at `baseline`); medians, spreads and ratios."""
    for root in (ROOT, baseline) if baseline is not None else (ROOT,):
        compile_bytecode(root)
    load = os.getloadavg()
    ours, theirs, in_memory, floor, base = [], [], [], [], []
    for _ in range(rounds):
        if baseline is not None:
            base.append(time_summary_cli(log, baseline))
        ours.append(time_summary_cli(log))
        found = time_tlparse(log)
        if found is None:
            raise SystemExit("tlparse not found")
        theirs.append(found)
        in_memory.append(time_tlparse(log, in_memory=True))
        floor.append(time_floor(log))
    median = statistics.median
    wall, tl_wall = [o[0] for o in ours], [t[0] for t in theirs]
    cpu, tl_cpu = [o[1] for o in ours], [t[1] for t in theirs]
    per_round = [o / t for o, t in zip(wall, tl_wall)]
    floor_wall, floor_cpu = [f[0] for f in floor], [f[1] for f in floor]
    print(f"{log.name}: {log.stat().st_size / 1e6:.1f} MB, {rounds} interleaved rounds, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} → {os.getloadavg()[0]:.2f}\n"
          f"  summary    {spread(wall)} wall, CPU {spread(cpu)}\n"
          f"  tlparse -p {spread(tl_wall)} wall, CPU {spread(tl_cpu)}\n"
          f"  floor      {spread(floor_wall)} wall, CPU {spread(floor_cpu)} (read + md5 + JSON, one core) = "
          f"{median(floor_wall) / median(tl_wall):.3f}× tlparse wall, "
          f"{median(floor_cpu) / median(tl_cpu):.3f}× its CPU\n"
          f"  ratio of medians {median(wall) / median(tl_wall):.3f} wall, {median(cpu) / median(tl_cpu):.3f} CPU; "
          f"per round {min(per_round):.3f}–{max(per_round):.3f}\n"
          f"  {against_target(wall, tl_wall)}", flush=True)
    memory_wall = [found[0] if found is not None else None for found in in_memory]
    paired = [(o, t) for o, t in zip(wall, memory_wall) if t is not None]  # the rounds that timed both
    if paired:
        memory_rounds = [o / t for o, t in paired]
        print(f"  tlparse -p, report in {MEMORY_FOLDER}: {spread([t for _o, t in paired])} wall; summary = "
              f"{median(o for o, _t in paired) / median(t for _o, t in paired):.3f}× "
              f"(per round {min(memory_rounds):.3f}–{max(memory_rounds):.3f})", flush=True)
    if base:
        base_wall, base_cpu = [b[0] for b in base], [b[1] for b in base]
        base_rounds = [b / t for b, t in zip(base_wall, tl_wall)]
        print(f"  baseline {baseline}: {spread(base_wall)} wall, CPU {spread(base_cpu)} = "
              f"{median(base_wall) / median(tl_wall):.3f}× tlparse wall (per round "
              f"{min(base_rounds):.3f}–{max(base_rounds):.3f}), {median(base_cpu) / median(tl_cpu):.3f}× its CPU",
              flush=True)
    return dict(log=str(log), load=load, summary=wall, summary_cpu=cpu, tlparse=tl_wall, tlparse_cpu=tl_cpu,
                tlparse_in_memory=memory_wall,
                floor=floor_wall, floor_cpu=floor_cpu, baseline=[b[0] for b in base], baseline_cpu=[b[1] for b in base])


def against_target(wall: list[float], tl_wall: list[float]) -> str:
    """Whether the summary meets TARGET, by the gates' one rule: S = tlparse / summary over the
    interleaved rounds (the verdict's comparison: each summary stays with the tlparse timed beside it,
    whole rounds resampled for the 95 % interval), read by `comparison.meets` against the floor
    1 / TARGET. Met only when the whole interval clears it, not met when none of it does, otherwise
    inconclusive: the noise could flip it. Shown as the ratio summary / tlparse."""
    speed = compare_rounds(list(zip(tl_wall, wall)), None)
    verdict = meets(speed, 1 / TARGET)
    word = {True: "met", False: "not met"}.get(verdict,
                                               f"inconclusive ({gate_doubt(speed) or 'the interval straddles it'})")
    interval = (f"ratio's 95 % interval {1 / speed.high:.3f}–{1 / speed.low:.3f}" if speed.has_interval
                else "no interval")
    return f"{interval}: ≤ {TARGET}× target {word}"


def synthetic_log(mb: float) -> Path:
    log = OUT / "dedicated_log_torch_trace_big.log"
    if not log.exists() or abs(log.stat().st_size / 2**20 - mb) > 5:
        log.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"), str(EXAMPLE), str(log),
                        "--mb", str(mb)], check=True)
    return log


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


def bench_row(name: str, log: Path, repeat: int) -> dict:
    size = log.stat().st_size
    load = os.getloadavg()[0]
    first = [measure(log, "first_view", None) for _ in range(repeat)]
    full = [measure(log, "full", None) for _ in range(repeat)]
    with tempfile.TemporaryDirectory() as cache:
        measure(log, "full", Path(cache))  # fills the cache
        reopen = [measure(log, "full", Path(cache)) for _ in range(repeat)]
    tl = [time_tlparse(log) for _ in range(repeat)]
    found = tl[0] is not None
    row = dict(name=name, log=str(log), mb=size / 1e6, load_before=load, load_after=os.getloadavg()[0],
               first=[r["seconds"] for r in first], first_cpu=[r["cpu"] for r in first],
               full=[r["seconds"] for r in full], full_cpu=[r["cpu"] for r in full],
               reopen=[r["seconds"] for r in reopen], reopen_cpu=[r["cpu"] for r in reopen],
               rss=statistics.median(r["rss"] for r in full) / size, facts=full[0],
               tlparse=[t[0] for t in tl] if found else None, tlparse_cpu=[t[1] for t in tl] if found else None)
    median = statistics.median
    ratio = (f"{median(row['full']) / median(row['tlparse']):.2f}× tlparse wall, "
             f"{median(row['full_cpu']) / median(row['tlparse_cpu']):.2f}× its CPU") if found else "tlparse not found"
    print(f"{name:<10} {size / 1e6:6.1f} MB  units {full[0]['units']} kernels {full[0]['kernels']}  "
          f"load {row['load_before']:.1f}→{row['load_after']:.1f}\n"
          f"  first view {spread(row['first'])} wall, {median(row['first_cpu']):.2f} s CPU\n"
          f"  full       {spread(row['full'])} wall, {median(row['full_cpu']):.2f} s CPU = {ratio}\n"
          f"  reopen     {spread(row['reopen'])} wall, {median(row['reopen_cpu']):.2f} s CPU\n"
          f"  peak RSS {row['rss']:.2f}× log"
          + (f"; tlparse -p {spread(row['tlparse'])} wall, {median(row['tlparse_cpu']):.2f} s CPU" if found else ""),
          flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="synthetic,gpt2,llama,bert")
    parser.add_argument("--log", type=Path, action="append", default=[])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--side-by-side", type=int, metavar="N", help="N interleaved rounds of the CLI summary "
                        "and tlparse -p on each --log (no other rows)")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT", help="with --side-by-side: also time the "
                        "summary of this checkout (e.g. a `git worktree add` of main) in each round")
    args = parser.parse_args()
    if args.side_by_side:
        rows = [side_by_side(log.resolve(), args.side_by_side, args.baseline) for log in args.log]
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        return
    names = [name for name in args.rows.split(",") if name]
    logs: dict[str, Path] = {}
    if "synthetic" in names:
        logs["synthetic"] = synthetic_log(args.mb)
    real = [name for name in names if name != "synthetic"]
    if real:
        sys.path.insert(0, str(ROOT / "bench"))
        from make_real_logs import real_logs
        logs.update(real_logs(args.mb, real))
    for log in args.log:
        logs[log.name] = log
    print("targets (issue 26): full ≤ 0.35× tlparse -p, peak RSS ≤ 0.5× log, reopen ≤ 0.2 s; "
          "the app's first view "
          f"≤ 0.5 s is bench/bench_session_arrival.py's; medians of {args.repeat} (min–max)", flush=True)
    rows = [bench_row(name, log, args.repeat) for name, log in logs.items()]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
