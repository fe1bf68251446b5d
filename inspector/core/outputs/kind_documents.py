"""The outputs layer's half of the input registry: what each kind that is no torch.compile Session
offers the front ends — its summary (`summary --json` and the text `summary` prints), what
`--strict` counts in it, and, for a kind `diff` compares with a run, that comparison. The kinds
themselves (match, open, the tab that shows them) are registered in readers/sources.py; this table
is keyed by them and lives here because readers may not import the renderers (the import-linter
layers in pyproject.toml: outputs over analysis over readers). Front ends look a kind up here
instead of asking which kind they hold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.fusion_compare import compare_fusion
from inspector.core.analysis.mode_comparison import ModeRow, compare_modes
from inspector.core.model.session import Session
from inspector.core.outputs.gpu_summary import (TRITON_JOIN_KEY, render_profile_ranks_text, render_profile_text,
                                                 render_triton_text, summarize_profile, summarize_profile_ranks,
                                                 summarize_triton)
from inspector.core.outputs.mode_table import mode_document, render_mode_rows
from inspector.core.outputs.xla_summary import render_comparison_text, render_dump_text, summarize_dump
from inspector.core.readers.input_kind import InputKind, Source
from inspector.core.readers.mode_folders import ModeFolders
from inspector.core.readers.session_loader import detect_modes
from inspector.core.readers.sources import MODES, PROFILER_TRACE, PROFILER_TRACES, TRITON_TRACE, XLA_DUMP


def _counted(entries: dict) -> int:
    return sum(entry["count"] for entry in entries.values())


def document_unreadable(summary: dict) -> int:
    """What `--strict` counts in a document's summary: its damaged items and its unreadable events."""
    return _counted(summary.get("problems", {})) + summary.get("unreadable_events", 0)


def session_unreadable(summary: dict) -> int:
    """What `--strict` counts in a session's summary: its unreadable items, and those of the
    tritonparse trace joined to it (`--triton`)."""
    return _counted(summary["unreadable"]) + _counted(summary.get(TRITON_JOIN_KEY, {}).get("problems", {}))


@dataclass(frozen=True)
class RunComparison:
    """`diff RUN INPUT`: `compare(session, source, choice)` compares the torch.compile run with the
    input (its `choice`, e.g. --xla-module, picks a part of it; ValueError says why none fits);
    `render` is its text; `both_alike` is said when both inputs are of this kind."""

    compare: Callable[[Session, Source, str | None], dict]
    render: Callable[[dict], str]
    both_alike: str


@dataclass(frozen=True)
class KindDocument:
    """`summarize` turns the opened input into what its outputs are made from; `as_json` and `as_text`
    make `summary --json` and `summary`; `unreadable` counts what `--strict` fails on."""

    summarize: Callable[[Any], Any]
    as_text: Callable[[Any], str]
    as_json: Callable[[Any], dict] = lambda summary: summary
    unreadable: Callable[[dict], int] = document_unreadable
    diff: RunComparison | None = None


def _fusion_with_dump(session: Session, source: Source, module_name: str | None) -> dict:
    """The fusion comparison of a torch.compile run with the XLA dump at `source`: its `module_name`
    module, else its largest."""
    dump = source.open()
    module = dump.module(module_name) if module_name else dump.main_module
    if module is None:
        names = ", ".join(m.label for m in dump.modules) or "none"
        raise ValueError(f"no such module in {source.path} (modules: {names})")
    return compare_fusion(session, module, str(dump.source))


def _compare_mode_folders(folders: ModeFolders) -> list[ModeRow]:
    """A `modes` output folder's comparison: each mode's session detected as its folder comes in here."""
    return compare_modes(detect_modes(folders.cold), detect_modes(folders.warm))


_FUSION_WITH_DUMP = RunComparison(_fusion_with_dump, render_comparison_text,
                                  "diff compares a torch.compile run with an XLA dump; both are XLA dumps")

DOCUMENTS: dict[InputKind, KindDocument] = {
    XLA_DUMP: KindDocument(summarize_dump, render_dump_text, diff=_FUSION_WITH_DUMP),
    TRITON_TRACE: KindDocument(summarize_triton, render_triton_text),
    PROFILER_TRACE: KindDocument(summarize_profile, render_profile_text),
    PROFILER_TRACES: KindDocument(summarize_profile_ranks, render_profile_ranks_text),
    MODES: KindDocument(_compare_mode_folders, render_mode_rows, mode_document),
}


def document_of(kind: InputKind) -> KindDocument | None:
    """What `kind` renders to; None for a kind that opens a torch.compile Session."""
    return DOCUMENTS.get(kind)


def run_comparison(kind: InputKind) -> RunComparison | None:
    """How `diff` compares a torch.compile run with an input of `kind`; None when it does not."""
    offered = DOCUMENTS.get(kind)
    return offered.diff if offered is not None else None
