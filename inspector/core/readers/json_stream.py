"""One big JSON document read a piece at a time: the items of one array (a profiler trace's
`traceEvents`, hundreds of MB of them) handed over one by one, and the document's other top-level
values decoded apart, so memory holds one item at a time and what the caller keeps of it, never
the whole document as objects. Damage is reported, not raised, wherever what came before still
holds: text that ends inside the array ends it (`cut`), an item that is not JSON is skipped up to
the next item (`bad_items`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from inspector.core.readers import json_codec

MAX_ITEM_CHARS = 16 << 20  # one item or one top-level value: a profiler event is well under a KB
BATCH_CHARS = 1 << 20  # items decoded in one call
_LAST_ITEM_CHARS = 1 << 16  # how far back from the end of a batch its last item boundary is looked for
_TRIM_CHARS = 1 << 20  # consumed text dropped from the buffer once this much has piled up
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NEXT_ITEM = re.compile(r"\}\s*,\s*(?=\{)")  # where one object item ends and the next begins
_NEAR_END = 8  # a decode error this close to the text read so far may just be a value read in half
_decoder = json.JSONDecoder()


class NotJson(ValueError):
    """The text is not JSON where it has to be (outside the array's items): nothing past it can be read."""


@dataclass
class StreamEnd:
    """How reading the document went, beyond the items handed over."""

    found_array: bool = False  # the array was there (a document without it is not what was asked for)
    cut: bool = False  # the text ended inside the document (a file still being written, or cut short)
    bad_items: int = 0  # items that were not JSON (skipped to the next one)
    bad_examples: list[str] = field(default_factory=list)
    stopped: str = ""  # why reading ended before the document did ("" when it did not)
    trailing: bool = False  # text that is not whitespace follows the document (not read)


class _Text:
    """The document's text as read so far, from `parts` (str), and a position in it."""

    def __init__(self, parts: Iterator[str]):
        self.parts, self.buffer, self.at, self.ended, self.dropped = parts, "", 0, False, 0

    def more(self, wanted: int) -> bool:
        """At least `wanted` characters after the position unless the text ends first; whether any came."""
        if self.at > _TRIM_CHARS:
            self.dropped += self.at
            self.buffer, self.at = self.buffer[self.at:], 0
        pieces, have = [self.buffer], len(self.buffer) - self.at
        while have < wanted and not self.ended:
            part = next(self.parts, None)
            if part is None:
                self.ended = True
            elif part:
                pieces.append(part)
                have += len(part)
        if len(pieces) == 1:
            return False
        self.buffer = "".join(pieces)
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the text), not consumed."""
        while True:
            self.at = _WHITESPACE.match(self.buffer, self.at).end()
            if self.at < len(self.buffer):
                return self.buffer[self.at]
            if not self.more(1):
                return ""

    def value(self):
        """The JSON value at the position, consumed. Raises EOFError when the text ends inside it,
        ValueError when it is not JSON (the position left where it was)."""
        wanted = 4096
        self.peek()
        while True:
            try:
                value, end = _decoder.raw_decode(self.buffer, self.at)
            except json.JSONDecodeError as error:
                in_half = error.msg.startswith("Unterminated string") or error.pos >= len(self.buffer) - _NEAR_END
                if not in_half:
                    raise ValueError(f"{error.msg} at character {self.dropped + error.pos}") from None
            except RecursionError:
                raise ValueError(f"nested too deeply at character {self.dropped + self.at}") from None
            else:
                if end < len(self.buffer) or self.ended or not isinstance(value, (int, float)):
                    self.at = end
                    return value  # a number that ends the text read so far may go on: read on
            if self.ended:
                raise EOFError
            if len(self.buffer) - self.at > MAX_ITEM_CHARS:
                raise ValueError(f"a value longer than {MAX_ITEM_CHARS >> 20} MiB "
                                 f"at character {self.dropped + self.at}")
            wanted = max(wanted, 2 * (len(self.buffer) - self.at))  # doubling: a long value is decoded O(log n) times
            self.more(wanted)

    def skip_to_next_item(self) -> bool:
        """Past a damaged item to the start of the next one; False when none follows within reach."""
        while True:
            found = _NEXT_ITEM.search(self.buffer, self.at + 1)
            if found:
                self.at = found.end()
                return True
            reach = len(self.buffer) - self.at
            if self.ended or reach > MAX_ITEM_CHARS or not self.more(2 * reach + 4096):
                return False


def array_items(parts: Iterator[str], array_key: str, header: dict, keep: tuple[str, ...], end: StreamEnd) -> Iterator:
    """The items of the array at the top-level key `array_key` of a JSON object (or of a top-level
    array), one at a time; the top-level values named in `keep` go into `header`, the others are
    decoded and let go. What went wrong along the way is noted in `end`; NotJson is raised where the
    text is not the JSON document it has to be before any item could be read."""
    text = _Text(parts)
    opening = text.peek()
    if opening == "[":
        end.found_array = True
        text.at += 1
        yield from _items(text, end)
    elif opening == "{":
        text.at += 1
        yield from _object(text, array_key, header, keep, end)
    else:
        raise NotJson("not a JSON object or array" if opening else "empty")
    if not end.cut and not end.stopped:
        end.trailing = text.peek() != ""  # the rest read through: a reader of the bytes sees their end


def _object(text: _Text, array_key: str, header: dict, keep: tuple[str, ...], end: StreamEnd) -> Iterator:
    """The top-level object whose '{' was just read, to its '}'."""
    while not end.cut and not end.stopped:
        token = text.peek()
        if token == "}":
            text.at += 1
            return
        if token == ",":
            text.at += 1
            continue
        try:
            key = text.value() if token == '"' else None
            if not isinstance(key, str) or text.peek() != ":":
                raise ValueError(f"no key where one belongs at character {text.dropped + text.at}")
            text.at += 1
            if key == array_key and text.peek() == "[":
                end.found_array = True
                text.at += 1
                yield from _items(text, end)
                continue
            value = text.value()
        except EOFError:
            end.cut = True
            return
        except ValueError as error:
            if not end.found_array:
                raise NotJson(str(error)) from None
            end.stopped = f"not JSON after the events: {error}"
            return
        if key in keep:
            header[key] = value


def _batch(text: _Text) -> list | None:
    """The whole object items in the next BATCH_CHARS or so of text, consumed, when they decode as
    JSON (None, nothing consumed, when they do not or no item ends in reach)."""
    if text.peek() != "{":
        return None
    text.more(BATCH_CHARS)
    tail = text.buffer.rfind("}", text.at, text.at + BATCH_CHARS)
    last = None
    for last in _NEXT_ITEM.finditer(text.buffer, max(text.at, tail - _LAST_ITEM_CHARS), text.at + BATCH_CHARS):
        pass
    if last is None:
        return None
    try:
        items = json_codec.loads("[" + text.buffer[text.at:last.start() + 1] + "]")
    except ValueError:
        return None
    text.at = last.end()
    return items


def _items(text: _Text, end: StreamEnd) -> Iterator:
    """The items of the array whose '[' was just read; ends after its ']'. Runs of whole items are
    decoded a batch at a time (one decoder call for a MiB of items); where a batch is not JSON, its
    items are decoded one by one, so the damage costs only the item it is in."""
    one_by_one_until = 0
    while True:
        if text.at + text.dropped >= one_by_one_until:
            batch = _batch(text)
            if batch is not None:
                yield from batch
                continue
            one_by_one_until = text.dropped + text.at + BATCH_CHARS + _TRIM_CHARS
        token = text.peek()
        if token == "]":
            text.at += 1
            return
        if token == ",":
            text.at += 1
            continue
        if token == "":
            end.cut = True
            return
        try:
            item = text.value()
        except EOFError:
            end.cut = True
            return
        except ValueError as error:
            end.bad_items += 1
            if len(end.bad_examples) < 5:
                end.bad_examples.append(str(error))
            if not text.skip_to_next_item():
                end.stopped = f"no readable item after the damage ({error})"
                return
            continue
        yield item
