"""Do the performance figures hold their own invariants on real models? Captures each model with our
own `compile-inspector capture` (each in its own empty Inductor/Triton cache under bench/out, one
torch thread), then checks, from what a user sees (`summary --json`, `check`, `diff`, `modes`):

  shares ≤ 100 %   a unit's kernel shares add up to at most 100 % of that unit's profiled time
  launch × n       per-launch time × launches = the kernel's total; min ≤ median ≤ max launch
  own ≤ incl.      each compile stage's own time ≤ its inclusive time; Σ own ≤ the compile's wall time
  agree ≤ factor   a profile said to "agree" with the measured call does so within the factor it states
  memory           each phase's peak is at least what the process held when the phase began, and the
                   summary names how it was measured (reset per phase, or the labelled running peak)
  verdict = rounds the summary's verdict (JSON and text) is comparison.compare_rounds on its own rounds
  cold cache       a capture (and each `modes` mode) made in an empty cache has no cache hit
  one verdict      summary, `check --baseline`, `diff` and `modes` state what comparison.compare_runs
                   concludes on the same pair of runs (one model captured twice; `modes` on one model)

It prints one table (model × invariant: ok, FAIL with the numbers, or - where it does not apply) and
exits 1 on any FAIL. `check_summary` is the checker on one session's summary JSON: no capture, no
torch (tests/test_figures_bench_checker.py runs it on a stored session).

    python bench/bench_figures.py                 # five models, ~12 min on a loaded 2-core box
    python bench/bench_figures.py --models mlp_breaks --no-pair --no-modes
    python bench/bench_figures.py --check-session resources/sessions/mlp_breaks
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.core.analysis.comparison import (Machine, Speedup, compare_rounds, compare_runs, meets,  # noqa: E402
                                                timed_rounds)
from inspector.core.model.read_problems import ReadProblems  # noqa: E402
from inspector.core.readers.capture_session import read_run  # noqa: E402

EXAMPLES, MODELS_DIR = ROOT / "resources" / "examples", ROOT / "bench" / "figures_models"
MODELS = {
    "mlp_breaks": EXAMPLES / "mlp_breaks.py",
    "small_resnet": EXAMPLES / "small_resnet.py",
    "tiny_decoder": EXAMPLES / "tiny_decoder.py",
    "hf_gpt2": MODELS_DIR / "hf_gpt2.py",
    "hf_bert": MODELS_DIR / "hf_bert.py",
    "hf_llama": MODELS_DIR / "hf_llama.py",
}
DEFAULT_MODELS = [name for name in MODELS if name != "hf_llama"]  # the 15-minute budget: --models adds it
PAIR_MODEL, MODES_MODEL, MODES = "mlp_breaks", "small_resnet", ("default", "max-autotune-no-cudagraphs")
TOLERANCE = 0.1  # check's default --tolerance: the floor a baseline check holds B / A against
RELATIVE, ABSOLUTE_US, ABSOLUTE_S = 1e-6, 1e-3, 1e-6  # rounding allowed in the sums (float, µs, s)


@dataclass(frozen=True)
class Finding:
    """One cell of the table: `ok` None when the invariant does not apply to this model."""

    model: str
    invariant: str
    ok: bool | None
    detail: str

    @property
    def cell(self) -> str:
        return {True: "ok", False: "FAIL", None: "-"}[self.ok]


def _close(a: float, b: float, absolute: float) -> bool:
    return abs(a - b) <= absolute + RELATIVE * max(abs(a), abs(b))


def kernel_shares(summary: dict) -> tuple[bool | None, str]:
    """Per unit: Σ share_of_unit ≤ 100 %, each share = kernel time / the unit's profiled time, Σ kernel
    time = the unit's kernel time, and no kernel row for a unit listed as not profiled."""
    table = summary.get("profile_source_time")
    if not table or not table.get("kernels"):
        return None, "no kernel table (no compiled profile)"
    units = {unit["compile_id"]: unit for unit in table["units"]}
    shares, sums, bad = {}, {}, []
    for row in table["kernels"]:
        unit = units.get(row["compile_id"])
        if unit is None:
            bad.append(f"{row['name']} in {row['compile_id']}: unit not in the table"
                       + (" (listed as not profiled)" if row["compile_id"] in table.get("units_not_profiled", ())
                          else ""))
            continue
        shares[row["compile_id"]] = shares.get(row["compile_id"], 0.0) + row["share_of_unit"]
        sums[row["compile_id"]] = sums.get(row["compile_id"], 0.0) + row["us"]
        if not _close(row["share_of_unit"] * unit["profiled_us"], row["us"], ABSOLUTE_US):
            bad.append(f"{row['name']} [{row['compile_id']}]: share {row['share_of_unit']:.4f} × "
                       f"{unit['profiled_us']:.3f} µs ≠ {row['us']:.3f} µs")
    for unit_id, total in shares.items():
        if total > 1 + RELATIVE:
            bad.append(f"[{unit_id}] shares add up to {total:.1%}")
        if not _close(sums[unit_id], units[unit_id]["us"], ABSOLUTE_US):
            bad.append(f"[{unit_id}] Σ kernels {sums[unit_id]:.3f} µs ≠ unit's {units[unit_id]['us']:.3f} µs")
    if bad:
        return False, "; ".join(bad)
    top = max(shares, key=shares.get)
    return True, f"{len(shares)} unit(s), largest Σ share {shares[top]:.1%} [{top}]"


def launches_times_per_launch(summary: dict) -> tuple[bool | None, str]:
    """Per kernel row: per_launch_us × launches = us, and min ≤ median ≤ max of its launches, with
    min × launches ≤ us ≤ max × launches."""
    table = summary.get("profile_source_time")
    if not table or not table.get("kernels"):
        return None, "no kernel table (no compiled profile)"
    bad = []
    for row in table["kernels"]:
        name = f"{row['name']} [{row['compile_id']}] line {row.get('call_line')}"
        n, total, each = row["launches"], row["us"], row["per_launch_us"]
        if not n:  # a site no profiled call ran (a torch.cond's other branch): no time, no time per launch
            if total or each is not None:
                bad.append(f"{name}: never launched, yet {total} µs ({each} per launch)")
            continue
        if not _close(each * n, total, ABSOLUTE_US):
            bad.append(f"{name}: {each:.3f} µs × {n} = {each * n:.3f} µs ≠ {total:.3f} µs")
        spread = row.get("launch_us_min_median_max")
        if spread:
            low, median, high = spread
            if not (low <= median <= high and low * n <= total + ABSOLUTE_US and total <= high * n + ABSOLUTE_US):
                bad.append(f"{name}: launches {low}/{median}/{high} µs (min/median/max) × {n} vs {total:.3f} µs")
    if bad:
        return False, "; ".join(bad)
    return True, f"{len(table['kernels'])} kernel row(s)"


def own_within_inclusive(summary: dict) -> tuple[bool | None, str]:
    """Compile time: each stage's own time ≤ its inclusive time, Σ own ≤ the wall time, Σ of the steps
    ≤ the wall time (concurrent workers shown apart, never summed in)."""
    compile_time = summary.get("compile_time") or {}
    own, inclusive, wall = compile_time.get("self_s"), compile_time.get("per_stage_s"), compile_time.get("wall_s")
    if not own or wall is None:
        return None, "no compile-time breakdown"
    bad = [f"{name}: own {own_s:.4f} s > inclusive {inclusive.get(name, 0.0):.4f} s" for name, own_s in own.items()
           if own_s > inclusive.get(name, 0.0) * (1 + RELATIVE) + ABSOLUTE_S]
    total_own = sum(own.values())
    if total_own > wall * (1 + RELATIVE) + ABSOLUTE_S:
        bad.append(f"Σ own {total_own:.4f} s > wall {wall:.4f} s")
    steps = sum((compile_time.get("per_step_s") or {}).values())
    if steps > wall * (1 + RELATIVE) + ABSOLUTE_S:
        bad.append(f"Σ steps {steps:.4f} s > wall {wall:.4f} s")
    if bad:
        return False, "; ".join(bad)
    workers = compile_time.get("concurrent") or {}
    return True, (f"Σ own {total_own:.2f} s ≤ wall {wall:.2f} s ({len(own)} stages)"
                  + (f"; concurrent apart: {', '.join(workers)}" if workers else ""))


STATED_BOUND = re.compile(r"within ([0-9.]+)×")


def agree_within_factor(summary: dict) -> tuple[bool | None, str]:
    """Every profile check that says "agree" does so within the factor it states: Σ kernel time per
    call / measured call ≤ that factor; one past it must not say "agree"."""
    run = summary.get("run") or {}
    checks = {label: run.get(key) for label, key in (("compiled", "profile_check"), ("eager", "eager_profile_check"))}
    bad, seen = [], []
    for label, check in checks.items():
        if not check or check.get("consistent") is None:
            continue
        factor = check["kernel_us_per_call"] / check["call_us"]
        claims = " agree " in f" {check['note']} "
        bound = STATED_BOUND.search(check["note"])
        seen.append(f"{label} {factor:.2f}×" + ("" if check["consistent"] else " (inconsistent, said so)"))
        if check["consistent"] and not (claims and bound):
            bad.append(f"{label}: consistent but the note states no factor: {check['note'][:80]}")
        elif claims and float(bound.group(1)) < factor:
            bad.append(f"{label}: claims agreement within {bound.group(1)}× at {factor:.2f}× "
                       f"({check['kernel_us_per_call']:.1f} µs vs {check['call_us']:.1f} µs)")
        elif not check["consistent"] and claims:
            bad.append(f"{label}: inconsistent, yet says agree")
    if not seen:
        return None, "no profile check"
    return (False, "; ".join(bad)) if bad else (True, ", ".join(seen) + " of the call")


def cold_cache(summary: dict) -> tuple[bool | None, str]:
    """A capture made in an empty cache directory had nothing to hit."""
    cache = summary.get("cache") or {}
    if not cache:
        return None, "no cache counters"
    hits = {name: entry["hit"] for name, entry in cache.items()}
    words = ", ".join(f"{name} {entry['hit']} hit/{entry['miss']} miss" for name, entry in cache.items())
    return (sum(hits.values()) == 0), words


def memory_per_phase(summary: dict) -> tuple[bool | None, str]:
    """Each phase's peak is measured from that phase's start (never below what the process held when
    it began), and the summary names how it was measured."""
    memory = (summary.get("run") or {}).get("memory") or {}
    phases = {name: figures for name, figures in memory.items() if isinstance(figures, dict)}
    if not phases:
        return None, "no memory figures"
    bad = [f"{name}: peak {figures['cpu_rss_high_water_mb']:.1f} MB < start {figures['cpu_rss_start_mb']:.1f} MB"
           for name, figures in phases.items() if "cpu_rss_start_mb" in figures
           and figures["cpu_rss_high_water_mb"] < figures["cpu_rss_start_mb"]]
    if not memory.get("measured"):
        bad.append("the summary does not say how memory was measured")
    per_phase = "reset at each phase" in memory.get("measured", "")
    words = ", ".join(f"{name} {figures['cpu_rss_high_water_mb']:.0f} MB" for name, figures in phases.items()
                      if "cpu_rss_high_water_mb" in figures)
    return (False, "; ".join(bad)) if bad else (True, words + ("" if per_phase else " (labelled running peak)"))


CHECKS = {"shares ≤ 100 %": kernel_shares, "launch × n = total": launches_times_per_launch,
          "own ≤ incl., Σ own ≤ wall": own_within_inclusive, "agree ≤ factor": agree_within_factor,
          "memory per phase": memory_per_phase}


def check_summary(model: str, summary: dict, cold: bool = False) -> list[Finding]:
    """The invariants of one session's summary JSON (`cold`: it was captured in an empty cache)."""
    checks = dict(CHECKS, **({"cold cache": cold_cache} if cold else {}))
    return [Finding(model, name, *check(summary)) for name, check in checks.items()]


# ---- what the user runs: capture, summary, check, diff, modes -------------------------------------------


def inspector(*args: str, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=timeout)


def cold_env(folder: Path) -> dict:
    """One torch thread and empty compile caches of this capture's own (TORCHINDUCTOR_CACHE_DIR holds
    the FX graph and AOTAutograd caches too)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return dict(os.environ, OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(folder / "inductor"),
                TRITON_CACHE_DIR=str(folder / "triton"), PYTHONPATH=str(ROOT))


def capture(script: Path, folder: Path, runs: int) -> Path:
    session = folder / "session"
    done = inspector("capture", str(script), "-o", str(session), "--runs", str(runs), "--threads", "1",
                     "--round-time", "0.02", "--quiet", "--overwrite", env=cold_env(folder))
    if done.returncode != 0:
        raise RuntimeError(f"capture of {script.name} failed ({done.returncode}): {done.stderr[-1500:]}")
    return session


def summary_json(session: Path) -> dict:
    done = inspector("summary", str(session), "--json", "--no-cache")
    if done.returncode != 0:
        raise RuntimeError(f"summary of {session} failed: {done.stderr[-1500:]}")
    return json.loads(done.stdout)


def oracle(a: Path, b: Path, a_summary: dict, b_summary: dict) -> Speedup:
    """comparison.compare_runs on the two sessions' stored verdicts and timing rounds."""
    a_results, b_results = (read_run(path, ReadProblems())[1] for path in (a, b))
    return compare_runs(Speedup.from_state(a_summary["speedup"]), a_results,
                        Speedup.from_state(b_summary["speedup"]), b_results)


def verdict_from_rounds(model: str, session: Path, summary: dict) -> Finding:
    """The verdict the summary states (JSON and text) is the one rule on the capture's own rounds."""
    rounds = timed_rounds(read_run(session, ReadProblems())[1])
    stated = summary["speedup"]
    if not rounds:
        return Finding(model, "verdict = rounds", None, f"no timing rounds; summary: {stated['state']}")
    machine = Machine.from_state(stated["machine"]) if stated.get("machine") else None
    truth = compare_rounds(rounds, machine)
    text = inspector("summary", str(session), "--no-cache").stdout
    head = truth.sentence().split(" — ")[0].rstrip(".")
    same = stated["state"] == truth.state.value and _close(stated["value"], truth.value, 0) and head in text
    return Finding(model, "verdict = rounds", same, f"summary {stated['state']} {stated['value']:.3g}×, text "
                   f"{'has' if head in text else 'LACKS'} '{head}'; compare_rounds {truth.word()}")


def pair_agreement(model: str, a: Path, b: Path, a_summary: dict, b_summary: dict) -> list[Finding]:
    """summary, diff and check on one pair state the oracle's conclusion."""
    truth = oracle(a, b, a_summary, b_summary)
    said = f"compare_runs: {truth.word()} {truth.interval_text()}"
    findings = []
    diff = json.loads(inspector("diff", str(a), str(b), "--json", "--no-cache").stdout)
    steady = diff["steady_state"]
    same = (steady["b_vs_a"]["state"] == truth.state.value and _close(steady["b_vs_a"]["value"], truth.value, 0)
            and steady["verdict_a"]["state"] == a_summary["speedup"]["state"]
            and steady["verdict_b"]["state"] == b_summary["speedup"]["state"])
    findings.append(Finding(model, "diff = compare_runs", same,
                            f"diff: B vs A {steady['b_vs_a']['state']} {steady['b_vs_a']['value']:.3g}×, "
                            f"A {steady['verdict_a']['state']}, B {steady['verdict_b']['state']}; {said}; summary: "
                            f"A {a_summary['speedup']['state']}, B {b_summary['speedup']['state']}"))
    diff_text = inspector("diff", str(a), str(b), "--no-cache").stdout
    line = next((text.strip() for text in diff_text.splitlines() if "B against A:" in text), "")
    findings.append(Finding(model, "diff text = compare_runs", line.startswith(f"B against A: {truth.word()},"),
                            line[:140] or "no 'B against A' line"))
    checked = inspector("check", str(b), "--baseline", str(a), "--tolerance", str(TOLERANCE), "--no-cache")
    line = next((text.strip() for text in checked.stdout.splitlines() if "speedup-vs-baseline" in text), "")
    expected = {True: ("PASS", 0), False: ("FAIL", 1), None: ("INCONCLUSIVE", 4)}[meets(truth, 1 - TOLERANCE)]
    findings.append(Finding(model, "check = compare_runs",
                            line.startswith(expected[0]) and checked.returncode == expected[1]
                            and f"B against A: {truth.word()}," in line,
                            f"exit {checked.returncode}, {line[:120]}; expected {expected[0]} (exit {expected[1]})"))
    return findings


def modes_agreement(model: str, script: Path, folder: Path, runs: int) -> list[Finding]:
    """`modes`: each mode cold (no cache hit, as its own session's summary shows), each mode's verdict
    against eager = its session's summary, and the fastest-mode comparisons = compare_runs."""
    done = inspector("modes", str(script), "-o", str(folder / "sessions"), "--modes", *MODES, "--runs", str(runs),
                     "--threads", "1", "--round-time", "0.02", "--quiet", "--overwrite", "--json",
                     env=cold_env(folder))
    if done.returncode != 0:
        return [Finding(model, "modes", False, f"modes failed ({done.returncode}): {done.stderr[-300:]}")]
    document = json.loads(done.stdout)
    sessions = {capture["mode"]: Path(capture["session"]) for capture in document["captures"]}
    summaries = {mode: summary_json(path) for mode, path in sessions.items()}
    hits = {mode: sum(entry["hit"] for entry in summaries[mode]["cache"].values()) for mode in sessions}
    rows = {row["mode"]: row for row in document["modes"]}
    cold = all(hits[mode] == 0 and rows[mode]["cache_hits"] == 0 and rows[mode]["cold"] for mode in sessions)
    findings = [Finding(model, "modes cold cache", cold,
                        ", ".join(f"{mode}: {hits[mode]} hit(s), table {rows[mode]['cache_hits']}" for mode in MODES))]
    eager = all(rows[mode]["vs_eager"]["state"] == summaries[mode]["speedup"]["state"] for mode in sessions)
    findings.append(Finding(model, "modes vs eager = summary", eager,
                            ", ".join(f"{mode}: {rows[mode]['vs_eager']['state']} / summary "
                                      f"{summaries[mode]['speedup']['state']}" for mode in MODES)))
    candidate = max(sessions, key=lambda mode: rows[mode]["vs_eager"]["value"] or 0)
    agree, words = True, []
    for mode, stated in document["fastest"]["against"].items():
        truth = oracle(sessions[mode], sessions[candidate], summaries[mode], summaries[candidate])
        agree &= stated["state"] == truth.state.value
        words.append(f"{candidate} vs {mode}: modes {stated['state']}, compare_runs {truth.word()} "
                     f"{truth.interval_text()}")
    named = document["best"]
    agree &= (named is None) == any(stated["state"] != "faster" for stated in document["fastest"]["against"].values())
    findings.append(Finding(model, "modes = compare_runs", agree, "; ".join(words) + f"; fastest named: {named}"))
    return findings


def table(findings: list[Finding]) -> str:
    """Model × invariant, then the numbers behind each cell."""
    models = list(dict.fromkeys(f.model for f in findings))
    invariants = list(dict.fromkeys(f.invariant for f in findings))
    cells = {(f.model, f.invariant): f for f in findings}
    width = max(len(m) for m in models) + 2
    lines = ["| model | " + " | ".join(invariants) + " |", "|---" * (len(invariants) + 1) + "|"]
    for model in models:
        lines.append(f"| {model:<{width}}| " + " | ".join(cells[(model, i)].cell if (model, i) in cells else "-"
                                                          for i in invariants) + " |")
    lines.append("")
    lines += [f"{f.cell:>4}  {f.model} · {f.invariant}: {f.detail}" for f in findings]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=DEFAULT_MODELS)
    parser.add_argument("--runs", type=int, default=6, help="timing rounds per capture")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "figures")
    parser.add_argument("--no-pair", action="store_true", help="skip the second capture of " + PAIR_MODEL)
    parser.add_argument("--no-modes", action="store_true", help="skip `modes` on " + MODES_MODEL)
    parser.add_argument("--check-session", type=Path, help="only check this session's summary (no capture)")
    args = parser.parse_args(argv)
    if args.check_session:
        findings = check_summary(args.check_session.name, summary_json(args.check_session))
    else:
        findings = []
        started = time.monotonic()
        sessions, summaries = {}, {}
        for model in args.models:
            began = time.monotonic()
            try:
                sessions[model] = capture(MODELS[model], args.out / model, args.runs)
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                findings.append(Finding(model, "capture", False, str(error)[:300]))
                continue
            summaries[model] = summary_json(sessions[model])
            findings += check_summary(model, summaries[model], cold=True)
            findings.append(verdict_from_rounds(model, sessions[model], summaries[model]))
            print(f"{model}: captured and checked in {time.monotonic() - began:.0f} s", file=sys.stderr)
        if not args.no_pair and PAIR_MODEL in sessions:
            second = capture(MODELS[PAIR_MODEL], args.out / f"{PAIR_MODEL}-again", args.runs)
            findings += pair_agreement(f"{PAIR_MODEL} ×2", sessions[PAIR_MODEL], second, summaries[PAIR_MODEL],
                                       summary_json(second))
        if not args.no_modes:
            findings += modes_agreement(f"{MODES_MODEL} modes", MODELS[MODES_MODEL], args.out / "modes", args.runs)
        print(f"whole bench: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(table(findings))
    failed = [f for f in findings if f.ok is False]
    print(f"\n{len(failed)} FAIL of {len(findings)} checks" if failed else f"\nall {len(findings)} checks hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
