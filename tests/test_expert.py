"""Breaks, recompiles and slowness explained: GB ids against torch's own, recompile groups against
TORCH_LOGS=recompiles, the recompile limit, and where a compiled call's time goes — on the bundled
capture, corpus logs and real compiles."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import MULTI_RANK, SCENARIOS, run_traced
from inspector.core.analysis.break_types import break_type, session_registry, site_types
from inspector.core.analysis.recompile_groups import recompile_groups
from inspector.core.readers.guard_subjects import guarded_value
from inspector.core.analysis.recompile_limit import recompile_limit
from inspector.core.analysis.slowness import slowness
from inspector.core.readers.graph_break_registry import BUNDLED, REGISTRY_FILE, find_registry, read_registry
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_SESSION = ROOT / "resources" / "sessions" / "mlp_breaks"
_GB_LINK = re.compile(r"/gb/gb(\d{4})\.html")
_RECOMPILING = re.compile(r"\[(\d+)/(\d+)\] \[__recompiles\] Recompiling function (\S+) in ")
_FIRST_GUARD = re.compile(r"\[(\d+)/(\d+)\] \[__recompiles\]\s+- (?:\d+/\d+: )?(.+)$")


def torch_gb_ids(counters: dict, torch_logs: str = "") -> set[str]:
    """The GB ids torch itself reported: its break counters' keys and TORCH_LOGS=graph_breaks carry the link."""
    texts = [key for group in ("graph_break", "unimplemented") for key in (counters.get(group) or {})]
    return {f"GB{match}" for text in [*texts, torch_logs] for match in _GB_LINK.findall(text)}


def torch_recompiles(torch_logs: str) -> Counter:
    """(function, guarded value, aspect) → recompiles, read from TORCH_LOGS=recompiles output: the
    first guard failure listed under each 'Recompiling function' (the one against the newest graph)."""
    counts: Counter = Counter()
    pending: dict[tuple, str] = {}
    for line in torch_logs.splitlines():
        started = _RECOMPILING.search(line)
        if started:
            pending[(started[1], started[2])] = started[3]
            continue
        guard = _FIRST_GUARD.search(line)
        if guard and (guard[1], guard[2]) in pending:
            function = pending.pop((guard[1], guard[2]))
            subject, aspect, *_ = guarded_value(guard[3])
            counts[(function, subject, aspect)] += 1
    return counts


def our_recompiles(session) -> Counter:
    return Counter({(g.function, g.subject, g.aspect): g.count for g in recompile_groups(session)})


# --- the registry ---------------------------------------------------------------------------------

def test_bundled_registry_names_its_torch_and_keeps_the_licence():
    registry = read_registry(BUNDLED / REGISTRY_FILE, "bundled", (BUNDLED / "torch_version.txt").read_text().strip())
    assert registry is not None and len(registry.types) >= 500
    assert registry.types["GB0170"].gb_type == "Data-dependent branching"
    assert "Use `torch.cond` to express dynamic control flow." in registry.types["GB0170"].hints
    assert "torch 2.13" in registry.described and "bundled" in registry.described
    assert "BSD" in (BUNDLED / "LICENSE").read_text() or "Redistribution" in (BUNDLED / "LICENSE").read_text()


def test_a_sessions_own_registry_wins_and_says_so(tmp_path):
    shutil.copy(BUNDLED / REGISTRY_FILE, tmp_path / REGISTRY_FILE)
    registry = find_registry([tmp_path], "2.9.0")
    assert registry.source == "session" and "torch 2.9.0 that ran the capture" in registry.described


def test_installed_torch_registry_is_found_without_importing_torch(torch_runtime):
    code = ("import sys; from inspector.core.readers.graph_break_registry import find_registry; "
            "r = find_registry([]); print(r.source, len(r.types), 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    source, types, imported = done.stdout.rsplit(" ", 2)
    assert (source, imported.strip()) == ("installed torch", "False"), done.stderr
    assert int(types) >= 500


def test_a_damaged_registry_is_skipped_not_fatal(tmp_path):
    (tmp_path / REGISTRY_FILE).write_text("{not json")
    assert find_registry([tmp_path]).source != "session"


# --- break types ----------------------------------------------------------------------------------

def test_bundled_capture_gb_ids_equal_torchs_counters():
    session = open_path(BUNDLED_SESSION)
    typed = site_types(session)
    assert {match.gb_id for _, match in typed} == torch_gb_ids(session.results.counters) == {"GB0170", "GB0025"}
    by_line = {site.breaks[0].location.line: match for site, match in typed}
    assert by_line[19].gb_type == "Data-dependent branching" and by_line[19].url.endswith("/gb/gb0170.html")
    assert by_line[21].hints == ("Remove the `torch._dynamo.graph_break()` call.",)


def test_without_the_link_the_type_name_finds_the_same_id():
    """Logs of torch < 2.9 have no link: the break type's name must still find its registry entry."""
    session = open_path(BUNDLED_SESSION)
    registry = session_registry(session)
    for brk in session.breaks:
        with_link = break_type(brk, registry)
        brk.text = _GB_LINK.sub("", brk.text).replace("please visit:", "")
        by_name = break_type(brk, registry)
        assert by_name is not None and by_name.gb_id == with_link.gb_id, brk.reason
        assert by_name.matched_by == "break type name" and with_link.matched_by == "link in the message"


def test_older_torch_wording_is_typed_by_the_break_kind():
    """torch 2.5 said 'generic_jump TensorVariable()' for a data-dependent branch: no link, another name."""
    from inspector.core.model.session import GraphBreak
    from inspector.core.readers.break_reasons import parse_break_reason

    text = "Graph break in user code at /m.py:19\nGraph Break Reason: generic_jump TensorVariable()\n"
    parsed = parse_break_reason(text)
    brk = GraphBreak(None, parsed.reason, None, parsed.explanation, parsed.hints, kind=parsed.kind, text=text)
    match = break_type(brk, session_registry(open_path(BUNDLED_SESSION)))
    assert (match.gb_id, match.matched_by) == ("GB0170", "break kind")


# --- recompile groups -----------------------------------------------------------------------------

def test_corpus_recompiles_group_into_one_cause_per_rank(corpus):
    session = open_path(MULTI_RANK)
    groups = recompile_groups(session)
    artifacts = sum(1 for unit in session.units if unit.recompile)
    assert sum(group.count for group in groups) == artifacts
    rank1 = next(group for group in groups if group.rank == 1)
    assert (rank1.function, rank1.subject, rank1.aspect, rank1.count) == ("kernel", "x", "size dim 0", 14)
    assert rank1.history == [str(n) for n in range(2, 17)]
    assert "torch._dynamo.mark_dynamic(x, 0)" in rank1.fix and "dynamic=True" in rank1.fix
    limit = recompile_limit(session)
    assert limit.from_log and limit.values == [8, 1000000]


# --- slowness -------------------------------------------------------------------------------------

def test_bundled_capture_call_time_is_attributed():
    session = open_path(BUNDLED_SESSION)
    slow = slowness(session)
    profile = session.results.profile["compiled"]
    assert slow.call_us == pytest.approx(profile.wall_s * 1e6 / profile.runs)
    shares = {cost.key: cost.share for cost in slow.costs}
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.02)
    # two break sites on the path of one call: three compiled graphs entered, three guard lookups
    assert slow.graphs_per_call == 3 == len({brk.site for brk in session.breaks}) + 1
    assert "3 lookup(s) per call" in slow.costs[0].detail
    assert shares["eager_between"] > 0 and shares["guards"] > 0


def test_a_log_without_profile_says_what_is_missing(corpus):
    slow = slowness(open_path(MULTI_RANK))
    assert slow.call_us is None and "no profile" in slow.note


# --- real compiles --------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def recompile_run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "recompile_causes.py", tmp_path_factory.mktemp("recompiles"), inductor_cache)


def test_recompile_groups_equal_torch_logs_and_the_limit_hit_is_flagged(recompile_run):
    session = open_path(recompile_run.trace_dir)
    from_torch = torch_recompiles(recompile_run.torch_logs)
    assert our_recompiles(session) == from_torch == Counter({("scale", "x", "dtype"): 3,
                                                             ("decode_step", "ids", "size dim 1"): 2})
    groups = {group.subject: group for group in recompile_groups(session)}
    assert (groups["ids"].history == ["8", "1", "9"]
            and "Sizes 0 and 1 are always specialised" in groups["ids"].diagnosis)
    assert groups["x"].history == ["Float", "Double", "Half", "BFloat16"]
    assert "recompile limit" in groups["x"].diagnosis
    limit = recompile_limit(session)
    assert (limit.value, limit.from_log, limit.frames_at_limit) == (3, True, ["frame 1 scale"])
    assert "falls back to eager" in limit.text
    from inspector.core.analysis.session_analysis import SessionAnalysis

    titles = [problem.title for problem in SessionAnalysis(session).issues]
    assert "Recompile limit reached: frame 1 scale now runs eagerly" in titles
    assert "Recompile ×3 scale: x dtype (Float → Double → Half → BFloat16)" in titles


def test_traced_run_gb_ids_and_recompiles_equal_torchs(breaks_run):
    session = open_path(breaks_run.trace_dir)
    assert {m.gb_id for _, m in site_types(session)} == torch_gb_ids(breaks_run.counters, breaks_run.torch_logs)
    assert our_recompiles(session) == torch_recompiles(breaks_run.torch_logs)


def test_every_example_capture_keeps_the_registry_and_agrees_with_torch(captured_examples):
    for name, folder in captured_examples.items():
        assert (folder / REGISTRY_FILE).is_file(), name
        session = open_path(folder)
        registry = session_registry(session)
        assert registry.source == "session", name
        logs = (folder / "stderr.txt").read_text()
        counters = session.results.counters
        ours = {m.gb_id if m else None for _, m in site_types(session, registry)}
        assert ours == torch_gb_ids(counters, logs), name
        assert our_recompiles(session) == torch_recompiles(logs), name
        summary_json = json.loads(json.dumps(_summary(session)))  # the summary sections are plain JSON
        assert summary_json["break_types"]["registry"]["source"] == "session"


def _summary(session):
    from inspector.core.outputs.summary import summarize

    return summarize(session)
