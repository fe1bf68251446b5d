"""Each tab's tooltip says what the tab shows: the Ranks, XLA and GPU tabs said only their own names."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


def test_every_tabs_tooltip_says_more_than_its_name(window):
    tabs = window.tabs
    bare = []
    for index in range(tabs.count()):
        name, tip = tabs.tabText(index), tabs.tabToolTip(index)
        words = tip.split(" (Ctrl+")[0]
        if len(words.split()) < 4 or words.strip() == name:
            bare.append((name, tip))
    assert tabs.count() >= 13 and not bare, bare
