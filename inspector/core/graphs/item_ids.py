"""The ids of what a graph view draws: a node by its FX name, a folded group as `group:KEY`, an open
group's frame as `open:KEY`. Plain strings (the layers index thousands of them; an FX name holds no
colon, so no node id looks like a group's), made and read here only."""

from __future__ import annotations

from enum import Enum


class ItemKind(str, Enum):
    NODE = "node"
    GROUP = "group"  # a folded group, drawn as one box
    OPEN = "open"  # an open group, drawn as a frame around its content


_GROUP, _OPEN = "group:", "open:"


def group_item(key: str) -> str:
    return _GROUP + key


def open_item(key: str) -> str:
    return _OPEN + key


def item_kind(item: str) -> ItemKind:
    if item.startswith(_GROUP):
        return ItemKind.GROUP
    if item.startswith(_OPEN):
        return ItemKind.OPEN
    return ItemKind.NODE


def item_key(item: str) -> str:
    """A group's key (its module path), or a node's name."""
    kind = item_kind(item)
    return item[len(_GROUP):] if kind is ItemKind.GROUP else item[len(_OPEN):] if kind is ItemKind.OPEN else item


def is_group(item: str) -> bool:
    """A group, folded or open (not a node)."""
    return item_kind(item) is not ItemKind.NODE


def toggled(expanded: set[str], item: str) -> set[str] | None:
    """The open groups after `item` is double-clicked: a folded group opens, an open group's frame folds
    it and every group inside it; None for a node (it has nothing to open)."""
    kind, key = item_kind(item), item_key(item)
    if kind is ItemKind.OPEN:
        return {k for k in expanded if k != key and not k.startswith(key + "/")}
    if kind is ItemKind.GROUP:
        return expanded | {key}
    return None
