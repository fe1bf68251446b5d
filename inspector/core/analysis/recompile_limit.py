"""The recompile limit: how many compiles a frame may have before Dynamo runs it eagerly from then on,
with only a log warning (silently slower), as the log records it, and the frames that reached it."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model.records import Record
from inspector.core.model.session import CompileUnit, Session

DEFAULT_RECOMPILE_LIMIT = 8
# What torch writes when a frame hit the recompile limit (any case), looked for as plain substrings: a
# case-blind pattern over every frame's reasons and warnings is far slower (docs/benchmarks.md,
# "Every reader row against issue 26's targets").
_LIMIT_HIT = ("recompile limit exceeded", "hit config.recompile_limit", "hit config.cache_size_limit",
              "cache_size_limit reached", "recompile_limit reached")


@dataclass(frozen=True)
class RecompileLimit(Record):
    """The limit of compiles per frame, and the frames that reached it (they then ran eagerly)."""

    value: int
    setting: str  # "recompile_limit" (torch ≥ 2.6) or "cache_size_limit"
    from_log: bool
    frames_at_limit: list[str]
    values: list[int]  # every value the log records, when they differ
    text: str  # the limit and who reached it, in words


def _limit(value: int, setting: str, from_log: bool, frames_at_limit: list[str], values: list[int]) -> RecompileLimit:
    where = "from the log's dynamo config" if from_log else "torch's default; the log does not record it"
    if len(values) > 1:
        where += f"; it differs between units: {', '.join(map(str, values))}"
    hit = f" Reached by: {', '.join(frames_at_limit)}." if frames_at_limit else " No frame reached it in this run."
    return RecompileLimit(value, setting, from_log, frames_at_limit, values,
                          f"torch._dynamo.config.{setting} = {value} ({where}). A frame that needs more compiles "
                          f"than this falls back to eager from then on, with only a log warning: silently slower.{hit}")


def recompile_limit(session: Session) -> RecompileLimit:
    """The limit as the log records it (per compile unit: ranks may differ), and the frames that hit it."""
    frames: dict[tuple, list[CompileUnit]] = {}
    for unit in session.units:
        frames.setdefault((unit.rank, unit.compile_id.autograd, unit.compile_id.frame), []).append(unit)
    values: dict[int, str] = {}
    at_limit = []
    for units in frames.values():
        setting = next(((name, int(unit.metric(name))) for unit in units
                        for name in ("recompile_limit", "cache_size_limit") if unit.metric(name) is not None), None)
        if setting:  # the reader keeps these two settings of the log's dynamo config
            values.setdefault(setting[1], setting[0])
        limit = setting[1] if setting else DEFAULT_RECOMPILE_LIMIT
        texts = " ".join([u.fail_reason or "" for u in units] + [b.text or b.reason for u in units for b in u.breaks]
                         + [w for u in units for w in u.warnings])
        if says_limit_hit(texts) or len({u.compile_id.compile for u in units}) > limit:
            first = units[0]
            at_limit.append(f"frame {first.compile_id.frame} {first.function or '?'}"
                            + (f" (rank {first.rank})" if first.rank is not None else ""))
    if not values:
        return _limit(DEFAULT_RECOMPILE_LIMIT, "recompile_limit", False, at_limit, [])
    value = min(values)
    return _limit(value, values[value], True, at_limit, sorted(values))


def says_limit_hit(text: str) -> bool:
    """Whether torch's words in `text` say a frame reached the limit."""
    lowered = text.lower()
    return any(words in lowered for words in _LIMIT_HIT)
