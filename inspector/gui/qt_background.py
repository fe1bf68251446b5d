"""Where the app puts work off, in one place: off the UI thread (`run_in_background`, and
`LatestRequest` when only the latest answer may be shown), with its result back on the UI thread as a
signal; or later on the UI thread, a step per turn of the event loop (`in_turns`, `next_turn`).

Results cross threads as plain Python objects built once by the worker and not mutated after; an
exception in the worker arrives as a message, never lost on the other thread. Neither the work nor its
result owns a Qt object that no parent owns: one dropped on a worker is deleted later on the UI
thread, inside whatever Qt is doing then (gui/qt_garbage.py)."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal


# How long a thread waiting for the GIL waits before the holder must let go (Python's default: 5 ms).
# Qt calls into Python for each cell a Python model paints and each Python-drawn item, taking the GIL
# anew each time; with a worker computing in Python meanwhile, each call waits up to the interval, so a
# repaint of the Ranks table or its lanes lasts as long as its calls' waits add up to: a shorter interval
# keeps it short (docs/benchmarks.md, "The 50 ms stall target met").
# Workers lose a little only while the UI thread is busy: idle, it waits in Qt without the GIL.
UI_SWITCH_INTERVAL_S = 0.001


def answer_the_ui_first() -> None:
    """Set the app's GIL switch interval (UI_SWITCH_INTERVAL_S): called once the app's window exists."""
    sys.setswitchinterval(UI_SWITCH_INTERVAL_S)


def in_turns(steps: Iterator, receiver: QObject) -> None:
    """Run `steps` (a generator) one step per turn of the event loop, the first now: how the UI thread
    puts off the rest of a long piece of work, answering the user between its steps. An exception a step
    raises ends the steps and is reported as a slot's is (sys.excepthook); the steps end, too, with
    `receiver` (a deleted object's turns are not run)."""
    try:
        next(steps)
    except StopIteration:
        return
    except Exception:  # reported, as Qt reports an exception in a slot, not lost
        sys.excepthook(*sys.exc_info())
        return
    QTimer.singleShot(0, receiver, lambda: in_turns(steps, receiver))


def next_turn(receiver: QObject, work: Callable[[], None]) -> None:
    """`work` in the next turn of the event loop, after what is already posted (a repaint asked for,
    say): a one-step `in_turns`."""
    def steps() -> Iterator[None]:
        yield
        work()
    in_turns(steps(), receiver)


class _Signals(QObject):
    done = Signal(object)
    failed = Signal(str, str)  # one-line message, traceback


def plain_words(error: Exception) -> str:
    """What went wrong, for a person: a file-system error as its reason and path, our own errors
    (ValueError and kin, whose texts are written for users) as they are; only an unexpected error
    keeps its Python name, since that is all there is to report."""
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    if isinstance(error, (OSError, ValueError)) and str(error):
        return str(error)
    return f"Unexpected internal error ({type(error).__name__}: {error}). Please report it with the file you opened."


class _Task(QRunnable):
    def __init__(self, work: Callable[[], object], signals: _Signals):
        super().__init__()
        self.work, self.signals = work, signals

    def run(self) -> None:
        try:
            result = self.work()
        except Exception as error:  # reported to the UI, not swallowed
            self._deliver(self.signals.failed, plain_words(error), traceback.format_exc())
        else:
            self._deliver(self.signals.done, result)

    @staticmethod
    def _deliver(signal, *args) -> None:
        """Emit `signal`, unless the view that asked has been deleted meanwhile (a window closed while
        its work ran): then nobody is left to tell, and the answer is dropped."""
        try:
            signal.emit(*args)
        except RuntimeError:  # "Signal source has been deleted"
            pass


def run_in_background(work: Callable[[], object], on_done: Callable[[object], None],
                      on_failed: Callable[[str, str], None], parent: QObject) -> _Signals:
    """Start `work` on the global thread pool; the callbacks run on the UI thread."""
    signals = _Signals(parent)
    signals.done.connect(on_done)
    signals.failed.connect(on_failed)
    QThreadPool.globalInstance().start(_Task(work, signals))
    return signals


class LatestRequest:
    """Background work of which only the latest request's answer may be shown: a view that asks
    again (another unit, stage or text) before a slower earlier answer arrives must not have that
    earlier answer replace the newer one. Failures of superseded requests are dropped too."""

    def __init__(self, parent: QObject):
        self.parent = parent
        self.latest = 0

    def run(self, work: Callable[[], object], on_done: Callable[[object], None],
            on_failed: Callable[[str, str], None],
            on_superseded: Callable[[object], None] | None = None) -> int:
        """Start `work`; returns its request number. A result that arrives after a newer request
        goes to `on_superseded` (to let go of what it holds: a session's extracted bundle, say)."""
        request = self.supersede()

        def done(result) -> None:
            if request == self.latest:
                on_done(result)
            elif on_superseded is not None:
                on_superseded(result)

        run_in_background(work, done, lambda message, tb: on_failed(message, tb) if request == self.latest else None,
                          self.parent)
        return request

    def supersede(self) -> int:
        """Forget the answers still on their way (the view shows something else now)."""
        self.latest += 1
        return self.latest
