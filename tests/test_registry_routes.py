"""The registry routes (readers/sources.py): after `detect`, code asks what a kind offers — the tab
that shows it, whether it is previewed or one log per rank, the summary document it renders to — and
never which kind it holds. A check like `source.kind is XLA_DUMP` outside the registry is how a new
input kind ends up half supported (opened, but summarised or shown as another); these tests find
them — and their disguises: `isinstance(document, RankTraces)` on what a kind opened, or a comparison
of the tab a kind offers (`source.kind.shown_in == "modes"`) — and hold every kind that is no Session
to offering a summary and a tab."""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

from inspector.core.model.session import Session
from inspector.core.outputs import kind_documents
from inspector.core.readers import sources
from inspector.core.readers.input_kind import InputKind

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "inspector"
KIND_NAMES = sorted(name for name, value in vars(sources).items() if isinstance(value, InputKind))
# The registry: the kinds' type, the list and detect, and the outputs layer's table of what each renders to.
REGISTRY = {PACKAGE / "core/readers/input_kind.py", PACKAGE / "core/readers/sources.py",
            PACKAGE / "core/outputs/kind_documents.py"}
# Checks left to another branch to remove: path -> the check (each test fails once it is gone, so the
# exemption is removed with it). None now: the loading pipeline asks `source.kind.previewable`.
PENDING: dict[Path, str] = {}



def _document_type(kind: InputKind) -> type | None:
    """The type a kind that is no Session opens to: the one its summary takes (None when unnamed)."""
    summarize = kind_documents.document_of(kind).summarize
    first = next(iter(inspect.signature(summarize).parameters), None)
    return typing.get_type_hints(summarize).get(first)


# What the kinds open to: a Session, or each other kind's own document. Asking an opened document
# its type (`isinstance(document, RankTraces)`) asks which kind it was, past the registry.
DOCUMENT_TYPES = sorted({Session.__name__} | {document.__name__ for kind in sources.KINDS if not kind.opens_session
                                              if (document := _document_type(kind)) is not None})
# Where a kind is shown (the tab, and the page of a tab that shows several kinds): the front ends look
# the view up in a table keyed by it, never compare it with one place, which is a kind check again.
PLACES = ("shown_in", "shown_as")

_NAMES = "|".join(KIND_NAMES)
_DOCUMENTS = "|".join(DOCUMENT_TYPES)
KIND_CHECKS = [
    re.compile(rf"\b(?:is not|is|==|!=|not in|in)\s+\(?[^\n)]*\b(?:{_NAMES})\b"),  # … is XLA_DUMP, … in (A, B)
    re.compile(rf"\b(?:{_NAMES})\s+(?:is not|is|==|!=|not in|in)\b"),  # XLA_DUMP in (…)
    re.compile(r"\.kind\s+(?:is not|is)\s+[A-Z][A-Z_]+\b"),  # source.kind is SOME_KIND
    re.compile(r"\bkind\.name\s*(?:==|!=|\bin\b|\bnot in\b)"),  # source.kind.name == "xla_dump"
    re.compile(rf"\{{\s*(?:{_NAMES})\s*:"),  # a dispatch table keyed by kind: {XLA_DUMP: …}
    # a session's kind by its name: session.kind == "capture", … not in ("torch_trace", "capture")
    re.compile(r"\bsession\.kind\s*(?:==|!=|\bnot in\b|\bin\b)"),
    # an opened document asked its type: isinstance(document, RankTraces), isinstance(d, (A, B)), type(d) is A
    re.compile(rf"\bisinstance\([^,]+,\s*\(?[\w., ]*\b(?:{_DOCUMENTS})\b"),
    re.compile(rf"\btype\([^)]*\)\s*(?:is not|is|==|!=)\s*(?:{_DOCUMENTS})\b"),
    # where a kind is shown compared with one place: source.kind.shown_in == "modes"
    re.compile(rf"\b(?:{'|'.join(PLACES)})\s*(?:==|!=|\bnot in\b|\bin\b)"),
]


def _defines_a_kind(text: str) -> bool:
    """A reader module exporting its kind belongs to the registry."""
    return re.search(r"^[A-Z_]+ = (?:InputKind|file_kind)\(", text, re.MULTILINE) is not None


def _kind_checks() -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path in REGISTRY or _defines_a_kind(text):
            continue
        lines = [line.strip() for line in text.splitlines()
                 if not line.lstrip().startswith("#") and any(check.search(line) for check in KIND_CHECKS)]
        if lines:
            found[path] = lines
    return found


def test_no_code_outside_the_registry_asks_which_kind_it_holds():
    found = _kind_checks()
    for path, pending in PENDING.items():
        left = [line for line in found.pop(path, []) if pending not in line]
        assert not left, f"{path.relative_to(ROOT)} asks which kind it holds: {left}"
    assert not found, "kind checks outside the registry (route by what the kind offers instead):\n" + "\n".join(
        f"{path.relative_to(ROOT)}: {line}" for path, lines in found.items() for line in lines)


def test_the_pending_exemptions_are_still_needed():
    found = _kind_checks()
    for path, pending in PENDING.items():
        assert any(pending in line for line in found.get(path, [])), \
            f"{path.relative_to(ROOT)} no longer has `{pending}`: remove it from PENDING"


def test_the_checks_find_a_kind_check():
    """The patterns catch the checks they are for (else the tests above could not fail)."""
    samples = ["if source.kind is XLA_DUMP:", "if source.kind is not RANK_LOGS:", "if XLA_DUMP in (a.kind, b.kind):",
               "view = self.xla_view if source.kind is XLA_DUMP else self.gpu_view", "if kind.name == 'modes':",
               "summarize = {XLA_DUMP: (summarize_dump, render_dump_text)}[source.kind]",
               'if session.kind == "capture" and manifest is None:', 'if not files and session.kind != "capture":',
               'if self.session.kind not in ("torch_trace", "capture"):', "if session.kind in KINDS_CACHED:",
               "if isinstance(document, RankTraces):", "if not isinstance(document, ProfilerTrace):",
               "elif isinstance(opened, (TritonTrace, XlaDump)):", "if type(document) is XlaDump:",
               "if isinstance(session, Session):", 'if source.kind.shown_in == "modes":',
               'if kind.shown_as != "ranks":', 'tab = "gpu" if shown_in in ("gpu", "xla") else "session"']
    for sample in samples:
        assert any(check.search(sample) for check in KIND_CHECKS), sample
    for fine in ["if kind is ItemKind.OPEN:", "p.kind is not ProblemKind.GRAPH_BREAK", "if not source.kind.per_rank:",
                 'view = {"xla": self.xla_view}[source.kind.shown_in]', 'if event.kind == "specialization":',
                 "identity = [session.kind, about, digests]", "if session.settled_by_manifest:",
                 "if isinstance(value, dict):", "isinstance(analysis, SessionAnalysis)",
                 "if isinstance(error, OSError):",
                 "pages[source.kind.shown_as](document)", "shown_in: str = \"session\""]:
        assert not any(check.search(fine) for check in KIND_CHECKS), fine


def test_every_kind_that_is_no_session_offers_a_summary_and_a_tab():
    """`summary PATH` and the app's open route a non-session input by what its kind offers: a kind
    added without its summary document or tab would fail there; it fails here first."""
    for kind in sources.KINDS:
        offered = kind_documents.document_of(kind)
        if kind.opens_session:
            assert offered is None and kind.shown_in == "session", kind.name
        else:
            assert offered is not None and kind.shown_in in ("xla", "gpu", "modes") and kind.elsewhere, kind.name
    # the GPU tab shows three kinds, each on its own page: a kind shown there names its page
    gpu_pages = {kind.name: kind.shown_as for kind in sources.KINDS if kind.shown_in == "gpu"}
    assert set(gpu_pages.values()) == {"triton", "profile", "ranks"} and len(gpu_pages) == 3, gpu_pages


def test_every_kind_that_is_no_session_names_the_document_it_opens_to():
    """Its summary says what it takes, so the checks above know the document types to look for."""
    unnamed = [kind.name for kind in sources.KINDS if not kind.opens_session and _document_type(kind) is None]
    assert not unnamed, f"their summary's first parameter names no type: {unnamed}"
    assert {"XlaDump", "TritonTrace", "ProfilerTrace", "RankTraces", "ModeFolders", "Session"} <= set(DOCUMENT_TYPES)


def test_each_reader_module_exports_its_kind():
    """A kind is defined beside the reader that opens it (the bundle, which opens what the registry
    detects inside it, is the registry's own)."""
    for kind in sources.KINDS:
        homes = [path for path in (PACKAGE / "core/readers").glob("*.py")
                 if re.search(rf"^\w+ = (?:InputKind|file_kind)\(\"{kind.name}\"", path.read_text(), re.MULTILINE)]
        expected_home = "sources.py" if kind is sources.BUNDLE else None
        assert len(homes) == 1 and (expected_home is None or homes[0].name == expected_home), (kind.name, homes)
