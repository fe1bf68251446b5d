"""The developers' guide keeps lines of the app's code at 120 characters or fewer: a reader sees a whole line
without scrolling, in a side-by-side diff too."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120


def test_no_line_of_the_app_is_over_120_characters():
    long = [f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
            for path in sorted((ROOT / "inspector").rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > LIMIT]
    assert not long, f"{len(long)} line(s) over {LIMIT} characters:\n" + "\n".join(long)
