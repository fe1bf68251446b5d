"""Hostile-record probe (issue 28): the bundled log with one record's payload replaced by a hostile
text, for every record kind that carries a payload and every text below, at 100 KB and 1 MB; each
case is read and put through the summary, the text, HTML, Markdown and SARIF outputs, the problems and
every graph and output code. A case that grows more than 20× for 10× the text is flagged SUPERLINEAR;
one over 40 s is cut and flagged HANG. Run: .venv/bin/python bench/probe_hostile_records.py [TEXT…]"""

from __future__ import annotations

import json
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_cases import Record, fix_md5, split_records  # noqa: E402
from inspector.core.analysis.session_analysis import SessionAnalysis  # noqa: E402
from inspector.core.outputs.ci_reports import markdown, sarif_log  # noqa: E402
from inspector.core.outputs.html_report import render_report  # noqa: E402
from inspector.core.outputs.summary import summarize  # noqa: E402
from inspector.core.outputs.summary_text import render_text  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402

LOG = next((ROOT / "resources" / "sessions" / "mlp_breaks" / "trace").glob("*.log"))
SIZES = (100_000, 1_000_000)
CASE_SECONDS = 40
TEXTS = {
    "words": lambda n: "Graph break in user code at x.py:1 " * (n // 35),
    "spaces": lambda n: "x == 1" + " " * n + "y",
    "brackets": lambda n: "L['" + "]" * n,
    "frames": lambda n: 'File "x.py", line 1, in f\n    y = 1\n' * (n // 36),
    "hashes": lambda n: " # a.py:1 in g" * (n // 14),
    "tensor": lambda n: "tensor 'a' size mismatch at index 1. expected " * (n // 46),
    "colons": lambda n: ":" * n,
    "newlines": lambda n: "\n" * n,
    "parens": lambda n: "(" * n,
    "quotes": lambda n: '"' * n,
    "fx_nodes": lambda n: '        add: "f32[4]" = torch.add(x, ' * (n // 38),
}


def _kind(record: Record) -> str:
    found = re.match(r'\{"(\w+)"', record.envelope)
    name = found[1] if found else "?"
    return f"artifact:{json.loads(record.envelope)['artifact']['name']}" if name == "artifact" else name


def _exercise(path: Path) -> None:
    analysis = SessionAnalysis(open_path(path))
    summary = summarize(analysis)
    render_text(summary), render_report(analysis), markdown(summary), sarif_log(summary)
    list(analysis.issues)
    for unit in analysis.session.units:
        for graph in unit.graphs.values():
            graph.graph
        for code in unit.output_code:
            code.code


def _timed(path: Path) -> float | None:
    def hang(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, hang)
    signal.alarm(CASE_SECONDS)
    started = time.perf_counter()
    try:
        _exercise(path)
    except TimeoutError:
        return None
    finally:
        signal.alarm(0)
    return time.perf_counter() - started


def main(only: list[str]) -> int:
    base = split_records(LOG.read_text(encoding="utf-8"))
    kinds: dict[str, int] = {}
    for index, record in enumerate(base):
        if record.payload:
            kinds.setdefault(_kind(record), index)
    flagged = 0
    with tempfile.TemporaryDirectory() as folder:
        case = Path(folder) / "dedicated_log_torch_trace_probe.log"
        for kind, index in kinds.items():
            for name, make in TEXTS.items():
                if only and name not in only:
                    continue
                times = []
                for size in SIZES:
                    records = [Record(r.prefix, r.envelope, list(r.payload)) for r in base]
                    records[index].payload = make(size).split("\n")
                    fix_md5(records[index])
                    case.write_text("\n".join(r.render() for r in records) + "\n", encoding="utf-8")
                    times.append(_timed(case))
                small, big = times
                verdict = ("HANG" if big is None or small is None else
                           "SUPERLINEAR" if big > 20 * max(small, 0.05) else "")
                flagged += bool(verdict)
                shown = " ".join("—" if t is None else f"{t:.3f}" for t in times)
                print(f"{kind:60} {name:9} {shown} s  {verdict}", flush=True)
    print(f"{flagged} case(s) flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
