"""Alerts: a run read against the recent runs of the same script. It fails on a break site or a
recompile cause no recent run had, a compile time or speed worse beyond the noise, or a cache hit
rate that fell; each check names the run it compared with and the change, in the `check` gate's
terms (`run_diff.Check`: PASS, FAIL, INCONCLUSIVE)."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from inspector.core.analysis.comparison import compare_runs, gate_doubt, meets
from inspector.core.analysis.figures import BreakSite
from inspector.core.analysis.run_diff import Check, comparison_words
from inspector.core.history.run_record import GATE_FAILED, CauseRow, RunRecord

WINDOW = 5  # the recent runs a break site or cause must be absent from to be new
HIT_RATE_DROP = 0.1  # a fall of the cache hit rate by more than this share of lookups fails


def earlier_runs(run: RunRecord, history: list[RunRecord], window: int = WINDOW) -> list[RunRecord]:
    """The last `window` runs of the history that ended before `run` (itself left out), oldest first,
    of the same compile mode and device: a max-autotune run is not a regression of a default one. A
    run that failed `check --history` is left out, so retrying a failed job compares it with the last
    run that passed (or was never judged), not with the failure. A run that does not say its mode (a
    log has no manifest) is compared with every run of its script."""
    def same(a, b) -> bool:
        return a is None or b is None or a == b

    before = [other for other in history if other.identity != run.identity and other.run_at <= run.run_at
              and other.gate != GATE_FAILED
              and same(other.mode, run.mode) and same(other.options.get("device"), run.options.get("device"))]
    return sorted(before, key=lambda other: (other.run_at, other.run_id or 0))[-window:]


def site_key(site: BreakSite) -> tuple[str, str, str, str]:
    """What makes a break site the same site in two runs: its file, function and reason — not its line
    number, which moves when a line is added above it."""
    where, _, function = site.location.rpartition(" in ") if " in " in site.location else (site.location, "", "")
    return re.sub(r":\d+$", "", where), function, site.reason, site.kind


def _same_site(site: BreakSite, other: BreakSite) -> bool:
    """The same file, function, reason and break kind, and the same line of code where both runs
    recorded it (a run stored before the code was kept matches on the rest)."""
    a, b = site_key(site), site_key(other)
    if a[:3] != b[:3] or (a[3] and b[3] and a[3] != b[3]):
        return False
    return not (site.code and other.code) or site.code.strip() == other.code.strip()


def new_sites(sites: Sequence[BreakSite], seen: Sequence[BreakSite]) -> list[BreakSite]:
    """The break sites of `sites` that are none of `seen` (the same site after lines moved is not new)."""
    return [site for site in sites if not any(_same_site(site, old) for old in seen)]


def new_causes(causes: Sequence[CauseRow], seen: Sequence[CauseRow]) -> list[CauseRow]:
    known = {cause_key(cause.cause) for cause in seen}
    return [cause for cause in causes if cause_key(cause.cause) not in known]


def cause_key(cause: str) -> str:
    """A recompile cause without a line number (causes kept by earlier versions named the line)."""
    return re.sub(r"(\([^()]*):\d+\)", r"\1)", cause)


def check_against_history(run: RunRecord, earlier: list[RunRecord], tolerance: float = 0.1) -> list[Check]:
    """One check per kind of regression, each against the latest earlier run (and the recent window
    for what is new)."""
    if not earlier:
        mode = f" in mode {run.mode}" if run.mode else ""
        return [Check("history", True,
                      f"no earlier run of {_script(run)}{mode} in the history: nothing to compare with")]
    latest = earlier[-1]
    against = f"compared with {describe(latest)}"
    checks = [_new_breaks(run, latest, earlier, against), _new_causes(run, latest, earlier, against)]
    checks += [check for check in (_compile_time(run, earlier, tolerance, against),
                                   speed_against(run, latest, tolerance, against),
                                   _hit_rate(run, latest, against)) if check is not None]
    return checks


def describe(run: RunRecord) -> str:
    """A run as a person finds it again: its number, when, and its commit and torch."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run.run_at))
    extra = ", ".join(part for part in (f"commit {run.git_commit[:10]}" if run.git_commit else "",
                                        f"torch {run.torch_version}" if run.torch_version else "") if part)
    return f"{run.label} of {when}" + (f" ({extra})" if extra else "")


def _script(run: RunRecord) -> str:
    return Path(run.script).name if run.script else run.source


def _new_breaks(run: RunRecord, latest: RunRecord, earlier: list[RunRecord], against: str) -> Check:
    new = new_sites(run.sites, [site for other in earlier for site in other.sites])
    change = f"graph breaks {latest.breaks} → {run.breaks}"
    if not new:
        return Check("history-breaks", True, f"no new graph-break site ({change}); {against}")
    sites = "; ".join(f"{site.location}: {site.reason} (×{site.count})" for site in new)
    return Check("history-breaks", False, f"{change}, first seen in this run: {sites}; {against}")


def _new_causes(run: RunRecord, latest: RunRecord, earlier: list[RunRecord], against: str) -> Check:
    new = new_causes(run.causes, [cause for other in earlier for cause in other.causes])
    change = f"recompiles {latest.recompiles} → {run.recompiles}"
    if not new:
        return Check("history-recompiles", True, f"no new recompile cause ({change}); {against}")
    causes = "; ".join(f"{cause.cause} (×{cause.count})" for cause in new)
    return Check("history-recompiles", False, f"{change}, new cause(s) first seen in this run: {causes}; {against}")


def _compile_time(run: RunRecord, earlier: list[RunRecord], tolerance: float, against: str) -> Check | None:
    """Slower to compile than every recent run by more than the tolerance and more than their own spread."""
    times = [other.compile_s for other in earlier if other.compile_s is not None]
    if run.compile_s is None or not times:
        return None
    typical = statistics.median(times)
    allowed = max(max(times) * (1 + tolerance), typical + (max(times) - min(times)))
    shown = (f"compile time {run.compile_s:.2f} s against {typical:.2f} s typical of the last {len(times)} run(s) "
             f"(allowed up to {allowed:.2f} s); {against}")
    return Check("history-compile-time", run.compile_s <= allowed, shown)


def speed_against(run: RunRecord, latest: RunRecord, tolerance: float, against: str) -> Check | None:
    """The speedup S against the latest run's, by the one comparison rule (comparison.compare_runs:
    S_run / S_latest with both runs' timing rounds resampled), gated as `check --baseline` gates:
    fails when the whole interval lies below 1 − tolerance, INCONCLUSIVE when it cannot tell."""
    speedup, base = run.speedup_estimate, latest.speedup_estimate
    if speedup is None or base is None or speedup.value is None or base.value is None:
        return None
    comparison = compare_runs(base, latest.timing, speedup, run.timing, tolerance)
    floor = 1 - tolerance
    shown = (f"speedup {speedup.interval_text()} vs {latest.label} {base.interval_text()}, allowed down to "
             f"{floor:.3g}× of it. {comparison_words(comparison)} (A: {latest.label}, B: this run)")
    passed = meets(comparison, floor)
    why = "" if passed is not None else "; the comparison has no interval a gate can trust" if gate_doubt(comparison) \
        else "; the interval straddles the floor"
    return Check("history-speed", passed, f"{shown}{why}; {against}")


def _hit_rate(run: RunRecord, latest: RunRecord, against: str) -> Check | None:
    rate, before = run.cache_hit_rate, latest.cache_hit_rate
    if rate is None or before is None:
        return None
    hits, lookups = run.cache_lookups
    shown = f"FX graph cache hit rate {before:.0%} → {rate:.0%} ({hits} of {lookups} lookups); {against}"
    return Check("history-cache", rate >= before - HIT_RATE_DROP, shown)
