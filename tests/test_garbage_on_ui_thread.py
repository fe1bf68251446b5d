"""Cyclic garbage that holds Qt objects is freed on the UI thread, never by a worker that allocates:
PySide defers a Qt object freed on a worker to the UI thread's next call into Python, and running it
there from inside a paint deadlocks Qt (gui/qt_garbage.py). These tests hold the policy the app and
every GUI test run under."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import QObject  # noqa: E402

from inspector.core.gc_policy import collector_paused  # noqa: E402
from inspector.gui.qt_garbage import UiThreadCollector, collected_on_ui_thread  # noqa: E402


def _cycle_with_a_qt_object(freed_on: list[str]) -> None:
    """A Python object and a Qt object holding each other, as a closed window and its plot menus do,
    dropped at once: only the cyclic collector can free them. The thread that does is noted."""
    class Part:
        pass

    part = Part()
    part.qt = QObject()
    part.qt.part = part
    weakref.finalize(part, lambda: freed_on.append(threading.current_thread().name))


def _worker_allocates(kept: list, objects: int) -> None:
    """What a worker reading a log does to the collector: many tracked objects, kept alive a while."""
    def allocate() -> None:
        kept.append([[] for _ in range(objects)])
    worker = threading.Thread(target=allocate, name="a worker")
    worker.start()
    worker.join()


def test_without_the_policy_a_workers_allocation_frees_the_cycle_on_the_worker():
    """The hazard itself, so the test below it can fail: with automatic collection, the worker that
    allocates past the threshold is the one that frees the Qt object."""
    assert gc.isenabled()
    freed_on, kept = [], []
    gc.collect()
    _cycle_with_a_qt_object(freed_on)
    _worker_allocates(kept, 50_000)
    assert freed_on == ["a worker"]


def test_under_the_policy_the_ui_threads_timer_frees_the_cycle_and_no_worker_does(qtbot):
    freed_on, kept = [], []
    with collected_on_ui_thread():
        assert not gc.isenabled()
        gc.collect()
        _cycle_with_a_qt_object(freed_on)
        _worker_allocates(kept, 50_000)
        assert freed_on == []  # the worker's allocations collected nothing
        qtbot.waitUntil(lambda: freed_on != [], timeout=5000)  # the timer's pass, on this thread
    assert freed_on == [threading.main_thread().name]


def test_at_the_end_what_is_left_is_freed_on_the_ui_thread(qtbot):
    """A GUI test's end: the garbage its windows left goes on the UI thread, before any later worker
    allocates. (This test itself runs under the GUI tests' policy, which it leaves on.)"""
    freed_on = []
    with collected_on_ui_thread() as collector:
        collector.timer.stop()  # only the end frees it here
        _cycle_with_a_qt_object(freed_on)
    assert freed_on == [threading.main_thread().name]
    assert not gc.isenabled()


def test_after_the_block_automatic_collection_resumes(qapp):
    """No qtbot, so no policy around the test: the block's own end turns automatic collection back on,
    as the command line and the tests that follow a GUI test need it."""
    assert gc.isenabled()
    with collected_on_ui_thread():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_no_pass_runs_while_a_session_is_built_and_one_runs_when_due_after(qtbot):
    """The UI thread's passes keep the loader's pause (core/gc_policy.py): a pass over a session half
    built would walk all of it on the UI thread, a frozen frame."""
    passes = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(info["generation"])

    kept = []
    with collected_on_ui_thread() as collector:
        collector.timer.stop()  # its passes are run by hand here
        gc.callbacks.append(count)
        try:
            with collector_paused():  # as a load does, on its worker
                kept.append([[] for _ in range(5_000)])  # past the threshold: a pass would be due
                collector.collect_due()
                assert passes == []
            kept.append([[] for _ in range(5_000)])
            collector.collect_due()
            assert len(passes) == 1
        finally:
            gc.callbacks.remove(count)


def test_the_collector_refuses_a_thread_other_than_the_ui_thread(qtbot):
    """Made on a worker, its timer would never fire there, and collection would stay off for good."""
    refused = []

    def make() -> None:
        try:
            UiThreadCollector()
        except RuntimeError as error:
            refused.append(str(error))
    worker = threading.Thread(target=make)
    worker.start()
    worker.join()
    assert refused and "UI thread" in refused[0]
