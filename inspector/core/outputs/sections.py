"""The section model outputs are written in: a titled figure with the lines under it, rendered as text
for the terminal and as HTML for a pane, so two front ends word and count a thing the same way."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class Section:
    """One block of an output: `title: figure`, then its lines (a section without a title is a header
    whose lines stand alone)."""
    title: str
    figure: str = ""
    lines: tuple[str, ...] = ()

    @property
    def heading(self) -> str:
        """`title: figure`, or the title alone."""
        return f"{self.title}: {self.figure}" if self.figure else self.title


def as_text(sections: list[Section]) -> str:
    """Sections for a terminal: a blank line between them, lines under a title indented."""
    blocks = []
    for section in sections:
        head = [section.heading] if section.title else []
        indent = "  " if section.title else ""
        blocks.append("\n".join([*head, *(indent + line for line in section.lines)]))
    return "\n\n".join(blocks)


def as_html(sections: list[Section]) -> str:
    """Sections for a rich-text pane: titles bold, everything else escaped (log text is never markup)."""
    parts = []
    for section in sections:
        head = ([f"<b>{escape(section.title)}:</b> {escape(section.figure)}" if section.figure
                 else f"<b>{escape(section.title)}</b>"] if section.title else [])
        parts.append("<br>".join([*head, *(escape(line) for line in section.lines)]))
    return "<br><br>".join(parts)
