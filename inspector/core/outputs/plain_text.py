"""Log text made safe to show as text: control characters (terminal escape sequences that retitle or
clear a terminal) and bidirectional overrides (U+202E, which makes text read differently than it is)
are replaced by visible escapes such as ``\\x1b`` and ``\\u202e``, and so are lone surrogates (a
log's JSON may hold ``"\\ud800"``; a file name an undecodable byte) that no terminal encoding can
print, and the noncharacters U+FFFE/U+FFFF (which, like controls, XML forbids). Newlines and tabs
stay."""

from __future__ import annotations

BIDI_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS = [code for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if code not in (0x09, 0x0A)]
_SURROGATES = range(0xD800, 0xE000)
_VISIBLE = {code: f"\\x{code:02x}" for code in _CONTROLS} | {
    code: f"\\u{code:04x}" for code in (*BIDI_CONTROLS, *_SURROGATES, 0xFFFE, 0xFFFF)}


def show_controls(text: str) -> str:
    """`text` with every control, bidi and surrogate character shown as its escape."""
    return text.translate(_VISIBLE)


def elided(text: str, limit: int, whole_in: str = "--json") -> str:
    """`text` cut to its first `limit` characters, saying how many were left out and where it is whole:
    a 4 MB guard expression fills no terminal, nor a table's row (the JSON summary keeps it whole)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters; {whole_in} has it whole)"
