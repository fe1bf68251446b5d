"""Each graph break's type in torch's own registry (GB id, explanation, hints, documentation page):
taken from the link torch ≥ 2.9 puts in the message, else matched by the break type's name, so logs
without links (older torch, hand-edited messages) still get the registry's words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.core.analysis.figures import BreakSite, break_sites
from inspector.core.model.records import Record
from inspector.core.model.session import CompileUnit, GraphBreak, Session
from inspector.core.readers.break_reasons import chained_parts
from inspector.core.readers.graph_break_registry import BreakRegistry, BreakType, find_registry

_LINK = re.compile(r"(https?://\S*?/gb/gb(\d{4})\.html)", re.I)
# Older torch words these two commonest breaks differently ("generic_jump TensorVariable()", "call_function
# graph_break"); the reader's break kind still names their registry type.
KIND_TYPES = {"data_dependent": "Data-dependent branching", "explicit": "Call to `torch._dynamo.graph_break()`"}


@dataclass(frozen=True)
class BreakTypeMatch(Record):
    """A break's type in torch's graph-break registry, and how it was found. The type is the registry's
    own entry; the summary writes its fields beside the match's own, one flat object (`TYPE_FIELDS`)."""

    type: BreakType  # where the registry builds its words at run time (GB0007), the words torch wrote
    url: str  # the documentation page: the link in torch's message, else the registry's
    matched_by: str  # "link in the message" | "break type name" | "break kind"
    # the breaks torch raised while handling this one, in its words: `GB7000 graph break in loop` (it then
    # skipped the whole frame)
    chained: tuple[str, ...] = ()

    @property
    def gb_id(self) -> str:
        return self.type.gb_id

    @property
    def gb_type(self) -> str:
        return self.type.gb_type

    @property
    def explanation(self) -> str:
        """The registry's general explanation of this break type."""
        return self.type.explanation

    @property
    def hints(self) -> tuple[str, ...]:
        return self.type.hints

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> BreakTypeMatch:
        own = super().from_state({key: value for key, value in state.items() if key not in TYPE_FIELDS})
        kind = BreakType(state.get("gb_id"), state.get("gb_type"), state.get("explanation"),
                         tuple(state.get("hints") or ()))
        return replace(own, type=kind, order=tuple(state))

    def get_state(self) -> dict:
        """The type's fields, then the match's: in the order read, for a match read back."""
        state = {"gb_id": self.gb_id, "gb_type": self.gb_type, "explanation": self.explanation,
                 "hints": list(self.hints), "url": self.url, "matched_by": self.matched_by,
                 **({"chained": list(self.chained)} if self.chained or "chained" in self.order else {}),
                 **self.extra}
        return {key: state[key] for key in dict.fromkeys((*self.order, *state)) if key in state}

    @property
    def text(self) -> str:
        """Plain text for tooltips and reports."""
        lines = [f"{self.gb_id}: {self.gb_type}"]
        if self.explanation:
            lines.append(self.explanation)
        lines += [f"Hint: {hint}" for hint in self.hints]
        lines += [f"Then: {chained}" for chained in self.chained]
        lines.append(f"Documentation: {self.url}")
        return "\n".join(lines)


TYPE_FIELDS = ("gb_id", "gb_type", "explanation", "hints")  # the registry entry's, written at the top level


def session_registry(session: Session) -> BreakRegistry | None:
    """The registry that fits this session best (the copy a capture saved in its folder first); None
    when none can be found. Only the opened folder itself is looked in, never beside or above it."""
    folder = session.extracted_to or session.source
    return find_registry([folder] if Path(folder).is_dir() else [], session.torch_version)


def break_type(brk: GraphBreak, registry: BreakRegistry | None) -> BreakTypeMatch | None:
    """The registry entry of one break, or None when neither the link nor the name identifies it; a break
    torch raised while handling it (GB7000 after a break in a loop) is named in `chained`."""
    first, *chained = chained_parts(brk.text or "")
    match = _first_type(brk, first, registry)
    if match is None or not chained:
        return match
    return replace(match, chained=tuple(dict.fromkeys(_chained_words(part, registry) for part in chained)))


def _chained_words(text: str, registry: BreakRegistry | None) -> str:
    """`GB7000 graph break in loop: torch skipped the frame and runs it eagerly` for one chained break."""
    link = _LINK.search(text)
    name = text.strip().split("\n", 1)[0].strip()
    gb_id = f"GB{link[2]} " if link else ""
    if registry is not None and not link and registry.by_type(name) is not None:
        gb_id = f"{registry.by_type(name).gb_id} "
    skipped = ": torch skipped the whole frame, which runs eagerly" if "frame skipped" in text or \
        "Skipping the frame" in text else ""
    return f"{gb_id}{name}{skipped}"


def _first_type(brk: GraphBreak, text: str, registry: BreakRegistry | None) -> BreakTypeMatch | None:
    link = _LINK.search(text)
    if link:
        gb_id = f"GB{link[2]}"
        entry = registry.types.get(gb_id) if registry else None
        if entry is None:  # a newer torch than the registry: the id and link still stand
            return BreakTypeMatch(BreakType(gb_id, brk.reason, brk.explanation, tuple(brk.hints)), link[1],
                                  "link in the message")
        return _typed(entry, brk, link[1], "link in the message")
    if registry is None:
        return None
    for name, matched_by in ((brk.reason, "break type name"), (KIND_TYPES.get(brk.kind), "break kind")):
        entry = registry.by_type(name) if name else None
        if entry is not None:
            return _typed(entry, brk, entry.url, matched_by)
    return None


def _typed(entry: BreakType, brk: GraphBreak, url: str, matched_by: str) -> BreakTypeMatch:
    """The registry's words for the type; where the registry builds them at run time (GB0007's
    explanation is a variable there), the words torch wrote for this break."""
    if not (entry.explanation and entry.hints):
        entry = replace(entry, explanation=entry.explanation or brk.explanation, hints=entry.hints or tuple(brk.hints))
    return BreakTypeMatch(entry, url, matched_by)


def site_types(session: Session, registry: BreakRegistry | None = None,
               sites: list[BreakSite] | None = None) -> list[tuple[BreakSite, BreakTypeMatch | None]]:
    """Each break site with its type (taken from the site's first break that has one); `registry`
    and `sites` are reused when already at hand."""
    registry = registry if registry is not None else session_registry(session)
    typed = []
    for site in sites if sites is not None else break_sites(session):
        match = next((m for m in (break_type(brk, registry) for brk in site.breaks) if m), None)
        typed.append((site, match))
    return typed


def failure_type(unit: CompileUnit, registry: BreakRegistry | None) -> BreakTypeMatch | None:
    """The registry type of a compile that failed instead of breaking the graph (a break under
    fullgraph=True raised to the caller, GB0025; a custom op without a fake kernel, GB4315): torch counts
    it with the graph breaks and links its type in the error message. None without a link there."""
    link = _LINK.search(unit.fail_reason or "")
    if link is None:
        return None
    gb_id = f"GB{link[2]}"
    entry = registry.types.get(gb_id) if registry else None
    if entry is None:
        entry = BreakType(gb_id, unit.fail_summary or unit.fail_type or "", "", ())
    return BreakTypeMatch(entry, link[1], "link in the message")
