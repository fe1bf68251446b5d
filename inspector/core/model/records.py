"""A JSON object decoded once into a typed, frozen record (after mitmproxy's `from_state`/`get_state`):
readers of a saved document use attributes, and `get_state()` writes back what was read, key order and
fields no attribute names included. The session's run results, the analysis's results and the summary
document are made of these: an analysis result is the very record the summary serialises, and a summary
read back (the summary cache) decodes into the same class."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

LIVE = {"state": False}  # `field(metadata=LIVE)`: held by a record made in code, never written or read


def live(default: Any = (), **kwargs: Any) -> Any:
    """A field an analysis keeps beside the record's saved ones (the breaks behind a site, the units of a
    group): not part of its JSON object, so a record read back has it at its default."""
    return field(default=default, metadata=LIVE, compare=False, repr=False, **kwargs)


@dataclass(frozen=True)
class Record:
    """One JSON object of a saved document. `NESTED` says which named fields hold records: a
    record class, `[Class]` for a list of them, `{str: Class}` for an object of them by free keys;
    any other field is kept as the JSON value it was. A record made in code writes its fields in the
    order they are declared: every field without a default, those with one only when not at it (all
    of them for a `WHOLE` record)."""

    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, kw_only=True)  # fields no attribute names
    order: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)  # the keys as read

    NESTED: ClassVar[Mapping[str, Any]] = {}
    # True: a record made in code writes every field, at its default too: a part whose document has
    # always held each key (a script reads `"total_s": null`, not a missing key)
    WHOLE: ClassVar[bool] = False

    @classmethod
    def from_state(cls: type[_R], state: Mapping[str, Any]) -> _R:
        """The record of a JSON object; a field the object lacks (an older document) is at its default,
        None for a field that has none."""
        named = _named(cls)
        values = {key: _decode(cls.NESTED.get(key), value) for key, value in state.items() if key in named}
        absent = {key: None for key, default in named.items() if default is MISSING and key not in values}
        return cls(**values, **absent, extra={key: value for key, value in state.items() if key not in named},
                   order=tuple(state))

    def get_state(self) -> dict:
        """The JSON object: the keys read, in their order; a record made in code (no order) writes its
        fields without a default and those not at theirs, then its extra ones."""
        named = _named(type(self))
        added = [name for name, default in named.items()
                 if name not in self.order and ((self.WHOLE and not self.order) or getattr(self, name) != default)]
        kept = [key for key in self.extra if key not in self.order]
        return {key: _encode(getattr(self, key)) if key in named else self.extra[key]
                for key in (*self.order, *added, *kept)}


_R = TypeVar("_R", bound=Record)


def state_of(record: Record | None) -> dict | None:
    """The record's JSON object, or None where the file had none."""
    return record.get_state() if record is not None else None


def _named(cls: type[Record]) -> dict[str, Any]:
    """The saved attributes a record class names, with their defaults (MISSING for none; the base's
    bookkeeping and the live fields apart)."""
    return {f.name: (f.default_factory() if f.default_factory is not MISSING else f.default)
            for f in fields(cls) if f.name not in ("extra", "order") and f.metadata.get("state", True)}


def _decode(kind: Any, value: Any) -> Any:
    if value is None or kind is None:
        return value
    if isinstance(kind, list):
        return tuple(kind[0].from_state(item) for item in value)
    if isinstance(kind, dict):
        return {key: kind[str].from_state(item) for key, item in value.items()}
    return kind.from_state(value)


def _encode(value: Any) -> Any:
    if hasattr(value, "get_state"):  # a record, or an analysis's own object a record holds (a speedup estimate)
        return value.get_state()
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _encode(item) for key, item in value.items()}
    return value
