"""Log text shown by Qt as text, never as markup: Qt guesses rich text for tooltips (and a crafted
break reason could then carry a link to a local file), so a tooltip gets its text escaped inside an
explicit rich-text wrapper; labels that show log text are set to Qt.PlainText where they are made."""

from __future__ import annotations

from html import escape


def plain_tip(text: str | None) -> str:
    """A tooltip string that Qt renders exactly as `text` reads ('' stays '', hiding the tooltip)."""
    if not text:
        return ""
    return "<p style='white-space:pre-wrap'>" + escape(text) + "</p>"


def html_text(value) -> str:
    """`value` as text inside a rich-text pane: escaped, so a log's markup or links show as written."""
    return escape("" if value is None else str(value))
