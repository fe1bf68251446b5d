"""Syntax highlighting of output code, graphs and IR with Pygments, done lazily by region.

Output code is a Python wrapper holding kernels as strings: C++ for CPU, Triton (Python) for GPU
(AOTInductor's is C++ throughout).
The kernel spans from `output_code` cut the text into regions, each lexed with its own language
only when a line of it is first shown — so a file of megabytes opens at once and highlights as you
scroll (docs/benchmarks.md, "Compile timeline and code pane")."""

from __future__ import annotations

import threading
from bisect import bisect_right
from dataclasses import dataclass

from pygments.lexers import CppLexer, PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token

from inspector.core.model.output_code import OutputCode

# Pygments token → the category a view colours, most specific first.
CATEGORIES = ((Comment, "comment"), (String, "string"), (Number, "number"), (Keyword.Type, "type"),
              (Keyword, "keyword"), (Name.Decorator, "decorator"), (Name.Function, "function"),
              (Name.Class, "function"), (Name.Builtin, "builtin"), (Operator, "operator"))
LEXERS = {"python": PythonLexer, "cpp": CppLexer}
LEX_AHEAD_CHARS = 512 << 10  # ~12k lines: a text up to this is lexed whole on the worker, before it shows
SHOWN_FIRST_LINES = 200  # of a longer text, the lines lexed ahead (what shows first, and some)


@dataclass(frozen=True)
class Region:
    first: int  # 0-based line index, inclusive
    last: int  # inclusive
    language: str  # python | cpp | text


def output_code_regions(code: OutputCode, line_count: int) -> list[Region]:
    """Kernel bodies in their own language, the wrapper around them as Python; AOTInductor's code,
    wrapper and kernels (or their launchers), is C++ throughout."""
    if code.wrapper == "cpp":
        return [Region(0, line_count - 1, "cpp")]
    regions: list[Region] = []
    cursor = 0
    for kernel in sorted((k for k in code.kernels if k.fused), key=lambda k: k.start_line):
        body_first, body_last = kernel.start_line, kernel.end_line - 2  # inside the ''' … ''' string
        if body_first <= cursor or body_last < body_first:
            continue
        regions.append(Region(cursor, body_first - 1, "python"))
        regions.append(Region(body_first, body_last, "cpp" if kernel.kind == "cpp" else "python"))
        regions.append(Region(body_last + 1, body_last + 1, "text"))  # the line closing the kernel string
        cursor = body_last + 2
    if cursor < line_count:
        regions.append(Region(cursor, line_count - 1, "python"))
    return regions


def compile_lexers() -> None:
    """Pygments compiles a lexer's rules when its class's first instance is made (once a process, a
    stall the UI would feel: docs/benchmarks.md, "The 50 ms stall target met"): the load worker calls
    this, so the UI thread's first highlight of an opened session does not freeze for it. One thread
    compiles them; another that calls meanwhile waits for it (pygments does not guard its compiling)."""
    with _COMPILING:
        for lexer in LEXERS.values():
            lexer()
        _COMPILED.set()


def compile_lexers_meanwhile() -> None:
    """Lexers compiled on a thread of their own as the app starts: the first open's load worker then
    finds them made, and does not add their compiling to the time the open takes to show."""
    threading.Thread(target=compile_lexers, name="compile lexers", daemon=True).start()


_COMPILING = threading.Lock()
_COMPILED = threading.Event()  # every lexer of LEXERS is compiled: made from here on without the lock


def _category(token) -> str | None:
    for parent, name in CATEGORIES:
        if token in parent:
            return name
    return None


class LazyHighlighter:
    """Per-line (column, length, category) spans, lexing each region on first use."""

    def __init__(self, lines: list[str], regions: list[Region]):
        self.lines = lines
        self.regions = regions
        self._starts = [region.first for region in regions]
        self._done: dict[int, list[list[tuple[int, int, str]]]] = {}

    @classmethod
    def for_text(cls, text: str, language: str, code: OutputCode | None = None) -> LazyHighlighter:
        lines = text.split("\n")
        if code is not None:
            regions = output_code_regions(code, len(lines))
        else:
            regions = [Region(0, len(lines) - 1, language)]
        return cls(lines, regions)

    def lexed_ahead(self) -> LazyHighlighter:
        """Lex now, on the worker that made it, what the UI thread would else lex as the text is first
        shown: every region of a text up to LEX_AHEAD_CHARS, else the regions of its first
        SHOWN_FIRST_LINES. A region is lexed whole when first shown, and lexing a user's long source file
        (one region) or a C++ kernel of output code on the UI thread is a visible freeze."""
        short = sum(len(line) + 1 for line in self.lines) <= LEX_AHEAD_CHARS
        for position, region in enumerate(self.regions):
            if not short and region.first >= SHOWN_FIRST_LINES:
                break
            if position not in self._done:
                self._done[position] = self._lex(region)
        return self

    def line_spans(self, index: int) -> list[tuple[int, int, str]]:
        position = bisect_right(self._starts, index) - 1
        if position < 0 or index > self.regions[position].last:
            return []
        if position not in self._done:
            self._done[position] = self._lex(self.regions[position])
        return self._done[position][index - self.regions[position].first]

    def _lex(self, region: Region) -> list[list[tuple[int, int, str]]]:
        rows: list[list[tuple[int, int, str]]] = [[] for _ in range(region.last - region.first + 1)]
        lexer_class = LEXERS.get(region.language)
        if lexer_class is None:
            return rows
        text = "\n".join(self.lines[region.first:region.last + 1])
        if not _COMPILED.is_set():  # the start-up thread may be compiling them right now
            compile_lexers()
        lexer = lexer_class(stripnl=False, ensurenl=False)
        row, column = 0, 0
        for _index, token, value in lexer.get_tokens_unprocessed(text):
            category = _category(token) if token is not Token.Text else None
            parts = value.split("\n")
            for number, part in enumerate(parts):
                if number:
                    row, column = row + 1, 0
                if part and category and row < len(rows):
                    rows[row].append((column, len(part), category))
                column += len(part)
        return rows
