"""The app installs no Python event filter. Qt calls an object's event filters for every event the object
receives, ChildRemoved included while Qt deletes the object's children; Python entered there may run
deletions PySide queued from another thread's garbage collection, on which Qt deadlocks on its own lock
(seen as a test run that hung in a window's teardown). A widget that needs to react to another's events
does it through a layout (Qt's own C++ follows the size) or its own handlers (`resizeEvent`,
`showEvent`, which Qt does not call for a deletion). Read from the source, since PySide gives no list of
the filters an object has."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILTER = re.compile(r"\binstallEventFilter\s*\(|\bdef\s+eventFilter\s*\(")


def test_no_module_of_the_app_installs_or_defines_an_event_filter():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "inspector").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if FILTER.search(line)]
    assert not found, "a Python event filter (use a layout or the widget's own handler):\n" + "\n".join(found)
