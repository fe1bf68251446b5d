"""One way to shorten a name at a boundary (qt_elide), for the Session tree and for the Kernels charts'
row labels alike: a chart's label too long for its room keeps its kernel's name and line whole and never
shows half a bracket (`extern_kernels.addmm line 103 …`, not `… line 103 (54% …`), while the tree keeps
`forward (resumed …`."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


def test_a_row_label_is_cut_between_words_with_its_brackets_closed(qapp):
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    from inspector.gui.views.qt_elide import ELLIPSIS, elide_at_boundary

    metrics = QFontMetrics(QApplication.font())
    label = "extern_kernels.addmm line 103 (54% of [0/1])"
    room = metrics.horizontalAdvance(f"extern_kernels.addmm line 103 (54% of {ELLIPSIS}")
    assert elide_at_boundary(label, metrics, room, balanced=True) == f"extern_kernels.addmm line 103 {ELLIPSIS}"
    assert elide_at_boundary(label, metrics, metrics.horizontalAdvance(label), balanced=True) == label
    # a first word that does not fit is cut at the right, as before
    assert elide_at_boundary(label, metrics, metrics.horizontalAdvance("extern_kern"), balanced=True) \
        .startswith("extern")
    # the Session tree's frames keep the head of a bracket: it says what the frame is
    frame = "forward (resumed at line 19)"
    room = metrics.horizontalAdvance(f"forward (resumed {ELLIPSIS}")
    assert elide_at_boundary(frame, metrics, room) == f"forward (resumed {ELLIPSIS}"

