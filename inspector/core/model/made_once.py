"""A value made on first use, once, even when two threads ask for it at the same moment.

A unit's parsed graph, output code and span forest are shared by views on the UI thread and by
background workers (a graph layout, a search, a summary). Views match nodes, kernels and spans by
identity, so a second parse made by a thread that asked while the first was still parsing would hold
copies that match nothing the other views show: the Graph tab then waited forever for "its" graph."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class MadeOnce(Generic[T]):
    __slots__ = ("_lock", "_made", "_value")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made = False
        self._value: T | None = None

    @property
    def made(self) -> bool:
        return self._made

    @property
    def value(self) -> T | None:
        """The value if it has been made, else None (never makes it)."""
        return self._value

    def put(self, value: T) -> None:
        """Keep `value`, made elsewhere, unless a value was made here first (views may hold that one)."""
        with self._lock:
            if not self._made:
                self._value, self._made = value, True

    def get(self, make: Callable[[], T]) -> T:
        if not self._made:
            with self._lock:
                if not self._made:  # another thread may have made it while this one waited
                    self._value = make()
                    self._made = True
        return self._value
