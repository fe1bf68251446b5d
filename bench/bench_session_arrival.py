"""Where the UI thread's time goes while the desktop app opens a job: the longest stalls (how late a
10 ms timer came, and when), every view slot's time on the UI thread, how long the views took to
take the session (from its arrival to sigLoaded) and their longest slot meanwhile, and, for each
stall, what the UI thread and the other threads were running as it began (issue 27's 50 ms target).

    python bench/bench_session_arrival.py JOB [--rounds R] [--anchor]

JOB is a folder of rank logs (`bench/make_many_ranks.py OUT --ranks 1024`) or any input the app
opens. The first view is the first session every view shows: a big log's preview, else the session. Each round
opens it in a fresh app process, offscreen at 1280×720. With --anchor the rounds
alternate with the same build with every tab taking the session at once (QtShownLater off), the way
the app worked before hidden tabs waited to be opened, so the two are compared on the same machine
load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The app in a child process. View slots are wrapped before the window is built (each binds its slot
# when it connects); a watchdog thread samples the stacks when the UI thread is 60 ms late.
APP = r"""
import functools, importlib, inspect, json, os, pkgutil, sys, threading, time, traceback
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
import inspector.gui.views as views
from inspector.gui import qt_main_window, qt_session_model
from inspector.gui.qt_settings import AppSettings
try:
    from inspector.gui.qt_shown_later import QtShownLater
except ImportError:  # a build from before hidden tabs waited to be opened: every tab takes the session at once
    QtShownLater = None

slots = []
def timed(cls, name):
    original = getattr(cls, name)
    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            result = original(self, *args, **kwargs)
        finally:
            slots.append((time.perf_counter() - started, f"{cls.__name__}.{name}", time.perf_counter()))
        return timed_steps(result, f"{cls.__name__}.{name}") if inspect.isgenerator(result) else result
    setattr(cls, name, wrapper)
def timed_steps(steps, name):  # a view that takes a session in steps, one a turn: each step timed
    while True:
        started = time.perf_counter()
        try:
            next(steps)
        except StopIteration:
            return
        finally:
            slots.append((time.perf_counter() - started, name + " (a step)", time.perf_counter()))
        yield

modules = [importlib.import_module(f"inspector.gui.views.{m.name}") for m in pkgutil.iter_modules(views.__path__)
           if m.name.startswith("qt_")] + [importlib.import_module("inspector.gui.views.graph.qt_graph_view"),
                                           qt_main_window]
for module in modules:
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ == module.__name__:
            for name in [n for n in vars(cls) if n.startswith("_on_") and callable(getattr(cls, n))]:
                timed(cls, name)
timed(qt_session_model.QtSessionModel, "set_loaded")
handed = qt_session_model.QtSessionModel.set_loaded
def set_loaded(self, loaded):  # when the worker's session reaches the UI thread (sigLoaded: every view has it)
    marks["handing_s"] = time.perf_counter() - started  # the last: the whole session, after any preview
    return handed(self, loaded)
qt_session_model.QtSessionModel.set_loaded = set_loaded
if sys.argv[3] == "anchor" and QtShownLater is not None:
    QtShownLater.run = lambda self, update: update()

app = QApplication([])
from inspector.gui.qt_garbage import collect_on_ui_thread
collect_on_ui_thread(app)  # as the app collects garbage (gui/qt_garbage.py)
window = qt_main_window.QtMainWindow(AppSettings(QSettings(sys.argv[2], QSettings.Format.IniFormat)))
window.resize(1280, 720)
window.show()
app.processEvents()
last, ticks, samples, main_id, stop = [time.perf_counter()], [], [], threading.get_ident(), []
def tick():
    now = time.perf_counter()
    ticks.append((now - last[0] - 0.010, now))
    last[0] = now
def watchdog():
    sampled = None
    while not stop:
        time.sleep(0.003)
        if time.perf_counter() - last[0] > 0.06 and sampled != last[0]:
            sampled = last[0]
            frames = sys._current_frames()
            samples.append({"at": time.perf_counter(), "threads": {
                "ui" if tid == main_id else str(tid): [line.strip() for line in traceback.format_stack(frame)[-3:]]
                for tid, frame in frames.items() if tid != threading.get_ident()}})
timer = QTimer()
timer.timeout.connect(tick)
timer.start(10)
threading.Thread(target=watchdog, daemon=True).start()
started, marks = time.perf_counter(), {}
window.model.sigOverview.connect(lambda *_: marks.setdefault("overview_s", time.perf_counter() - started))
def on_loaded(loaded):  # the first view (a big log's preview), then the whole session
    marks.setdefault("first_view_s", time.perf_counter() - started)
    if loaded.session.preview is None:
        marks.setdefault("details_s", time.perf_counter() - started)
window.model.sigLoaded.connect(on_loaded)
window.open_path(Path(sys.argv[1]))
while "details_s" not in marks and time.perf_counter() - started < 600:
    app.processEvents()
    time.sleep(0.002)
end = time.perf_counter() + 1.0
while time.perf_counter() < end:
    app.processEvents()
    time.sleep(0.002)
stop.append(True)
print(json.dumps({**marks, "stalls": sorted(((late, at - started) for late, at in ticks), reverse=True)[:6],
                  "slots": sorted(((t, name, at - started) for t, name, at in slots), reverse=True)[:12],
                  "all_slots": [(t, name, at - started) for t, name, at in slots],
                  "samples": [{**s, "at": s["at"] - started} for s in samples[:8]]}))
"""


def one_round(job: Path, mode: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", APP, str(job), str(Path(tmp) / "settings.ini"), mode],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _handing(result: dict) -> float:
    """From the session reaching the UI thread to every view having it (sigLoaded)."""
    return result["details_s"] - result["handing_s"]


def _longest_slot(result: dict) -> float:
    """The longest view slot while the session was handed to the views (set_loaded itself left out:
    it holds the first view's slot)."""
    return max((t for t, name, at in result["all_slots"] if name != "QtSessionModel.set_loaded"
                and result["handing_s"] <= at <= result["details_s"] + 0.001), default=0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("job", type=Path)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--anchor", action="store_true", help="alternate with every tab taking the session at once")
    args = parser.parse_args()
    modes = ["build", "anchor"] if args.anchor else ["build"]
    results: dict[str, list[dict]] = {mode: [] for mode in modes}
    for number in range(args.rounds):
        for mode in modes:
            result = one_round(args.job, mode)
            results[mode].append(result)
            worst = result["stalls"][0]
            print(f"round {number + 1} {mode:6}: overview {result.get('overview_s', float('nan')):.2f} s, "
                  f"first view {result['first_view_s']:.2f} s, "
                  f"details {result['details_s']:.2f} s, longest stall {worst[0] * 1000:.0f} ms at {worst[1]:.2f} s, "
                  f"every view had the session {_handing(result) * 1000:.0f} ms after it came, "
                  f"longest view slot meanwhile {_longest_slot(result) * 1000:.0f} ms")
            for seconds, name, at in result["slots"][:6]:
                print(f"    {seconds * 1000:7.1f} ms  {name}  at {at:.2f} s")
            for sample in result["samples"][:3]:
                ui = " | ".join(sample["threads"].get("ui", []))[-160:]
                others = [" | ".join(stack)[-160:] for name, stack in sample["threads"].items() if name != "ui"]
                print(f"    stall at {sample['at']:.2f} s: ui … {ui}"
                      + "".join(f"\n        other … {o}" for o in others[:1]))
    for mode, rounds in results.items():
        stalls = [r["stalls"][0][0] * 1000 for r in rounds]
        handings = [_handing(r) * 1000 for r in rounds]
        longest = [_longest_slot(r) * 1000 for r in rounds]
        print(f"{mode}: longest stall median {statistics.median(stalls):.0f} ms "
              f"({min(stalls):.0f}–{max(stalls):.0f}); "
              f"every view had the session after median {statistics.median(handings):.0f} ms "
              f"({min(handings):.0f}–{max(handings):.0f}); longest view slot meanwhile median "
              f"{statistics.median(longest):.0f} ms ({min(longest):.0f}–{max(longest):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
