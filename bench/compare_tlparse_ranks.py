"""Side by side with tlparse: what `tlparse --all-ranks-html` and our rank report find on the same folder
of per-rank TORCH_TRACE logs, one table per folder, so a gap shows and can gate (issue 27).

    .venv/bin/python bench/compare_tlparse_ranks.py [FOLDER ...] [--no-corpus] [--markdown FILE]

Every multi-rank folder of ../shared/corpus is compared, then each FOLDER given. For each, tlparse
writes its multi-rank report into a temporary folder and `compile-inspector summary --json` runs with
TCI_NO_CACHE=1. Read from tlparse: its landing page (index.html: the divergence warnings and their
rank groups, the graph runtime analysis, the execution-order diagnostics, the tensor-metadata
groups) and the per-rank compile_directory.json, from which the compile-id groups are formed by
tlparse's own rule (the set of compile ids per rank; the page only says that they diverge). Read
from ours: `per_rank.divergence[]`, each finding's `kind` and `ranks`.

A finding class is one kind of difference tlparse looks for; each is matched with the kinds of ours
that report it. Both sides are compared as partitions of the ranks: a rank's group is the set of
findings naming it (ours) or the group tlparse lists it in. Verdicts: `yes` (both find nothing, or
the same groups), `groups differ` (both find it, other groups), `no: we miss it`, `no: only ours`,
`n/a` (a class we do not compare, on a log with nothing for it).
Runtime estimates are listed without a verdict by tlparse (fastest and slowest rank per graph), so
that row compares tlparse's slowest ranks with our `runtime` findings and never gates.

Exit status: 0 when no class tlparse finds is missing from ours, 1 when one is (each printed),
2 when nothing could be compared (no tlparse, no folder, or a tool failed on a folder).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
RANK_LOG = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)[^/]*\.log$")  # tlparse's discovery rule

Groups = list[list[int]]


@dataclass(frozen=True)
class FindingClass:
    key: str
    label: str
    our_kinds: tuple[str, ...]
    gates: bool = True  # False: tlparse lists figures without a verdict of its own


CLASSES = (
    FindingClass("compile_ids", "diverging compile ids", ("compile_ids", "recompiles")),
    FindingClass("cache", "cache hit/miss pattern", ("cache", "cache_pattern")),
    FindingClass("collectives", "collective op sequence", ("collectives", "collective_sequence")),
    FindingClass("tensor_meta", "inductor tensor metadata", ("tensor_meta",)),
    FindingClass("runtime", "runtime estimates (slowest rank)", ("runtime",), gates=False),
    FindingClass("exec_order", "graph execution order", ("execution_order",)),
)
OURS_ONLY = ("logs", "outcome", "graphs", "guards", "straggler")  # kinds tlparse has no class for


@dataclass
class Side:
    """One tool's view of one finding class."""

    found: bool
    groups: Groups = field(default_factory=list)  # a partition of the ranks, or [] when found is False
    text: str = ""  # what to print when groups do not say it (runtime, exec order, "not compared")


@dataclass
class Row:
    label: str
    tlparse: Side | None  # None: a class of ours tlparse does not have
    ours: Side
    verdict: str
    gates: bool = False  # True: tlparse finds this class and we do not

    def cells(self) -> tuple[str, str, str, str]:
        theirs = "— (no such check)" if self.tlparse is None else _side_text(self.tlparse)
        return self.label, theirs, _side_text(self.ours), self.verdict


@dataclass
class Comparison:
    folder: Path
    ranks: list[int]
    rows: list[Row]
    notes: list[str]
    error: str = ""

    @property
    def missed(self) -> list[Row]:
        return [row for row in self.rows if row.gates]


# --- ranks and groups ---------------------------------------------------------------------------


def ranks_text(ranks: list[int]) -> str:
    """`0–2, 4, 6–9`: runs of three or more as ranges, as our report writes them."""
    parts: list[str] = []
    ranks = sorted(ranks)
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{ranks[i]}–{ranks[j]}")
        else:
            parts.extend(str(r) for r in ranks[i : j + 1])
        i = j + 1
    return ", ".join(parts)


def ordered(groups: Groups) -> Groups:
    """Largest group first, then by lowest rank: the same partition always prints the same."""
    return sorted((sorted(g) for g in groups if g), key=lambda g: (-len(g), g[0]))


def groups_text(groups: Groups) -> str:
    return " | ".join(ranks_text(g) for g in ordered(groups))


def _side_text(side: Side) -> str:
    if side.text:
        return side.text
    return groups_text(side.groups) if side.found else "none"


def partition(ranks: list[int], members: list[list[int]]) -> Groups:
    """Ranks grouped by which of the `members` lists name them (ranks named by none form one group)."""
    by_signature: dict[tuple[int, ...], list[int]] = {}
    for rank in ranks:
        signature = tuple(i for i, named in enumerate(members) if rank in named)
        by_signature.setdefault(signature, []).append(rank)
    return ordered(list(by_signature.values()))


def _rank_list(text: str) -> list[int]:
    return [int(r) for r in re.findall(r"\d+", text)]


# --- tlparse ------------------------------------------------------------------------------------


def find_tlparse() -> str | None:
    here = Path(sys.executable).parent / "tlparse"
    return str(here) if here.exists() else shutil.which("tlparse")


def tlparse_version(tlparse: str) -> str:
    out = subprocess.run([tlparse, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    return out or "tlparse (version unknown)"


def run_tlparse(tlparse: str, folder: Path, out: Path) -> str:
    """tlparse's multi-rank report of `folder` into `out`; '' on success, else why it failed."""
    proc = subprocess.run([tlparse, str(folder), "--all-ranks-html", "-o", str(out), "--overwrite", "--no-browser"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not (out / "index.html").exists():
        return f"tlparse exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}"
    return ""


def _list_after(page: str, marker: str) -> Groups:
    """The `<li>Ranks: …</li>` items of the first list after `marker` on tlparse's page."""
    at = page.find(marker)
    if at < 0:
        return []
    start = page.find("<ul>", at)
    end = page.find("</ul>", start)
    if start < 0 or end < 0:
        return []
    return [_rank_list(item) for item in re.findall(r"<li>\s*Ranks:\s*([\d,\s]+)</li>", page[start:end])]


def _section(page: str, heading: str) -> str:
    """The text of tlparse's page from `<h3>heading</h3>` to the next heading, tags stripped."""
    match = re.search(rf"<h3>\s*{re.escape(heading)}\s*</h3>(.*?)(?=<h3>|</div>\s*<script|\Z)", page, re.S)
    if not match:
        return ""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", match.group(1)))).strip()


def compile_id_groups(out: Path, ranks: list[int]) -> Groups:
    """Ranks grouped by their set of compile ids: tlparse's rule (compile_directory.json's keys, less
    `unknown…`), which its page states only as a yes/no warning."""
    by_ids: dict[frozenset[str], list[int]] = {}
    for rank in ranks:
        path = out / f"rank_{rank}" / "compile_directory.json"
        try:
            keys = json.loads(path.read_text(encoding="utf-8")).keys()
        except (OSError, ValueError):
            keys = ()
        ids = frozenset(k for k in keys if k != "unknown" and not k.startswith("unknown_"))
        by_ids.setdefault(ids, []).append(rank)
    return ordered(list(by_ids.values()))


def read_tlparse(out: Path, ranks: list[int]) -> tuple[dict[str, Side], list[str]]:
    """What tlparse's multi-rank report says, per finding class, and notes on how it was read."""
    page = (out / "index.html").read_text(encoding="utf-8", errors="replace")
    notes: list[str] = []
    sides: dict[str, Side] = {}

    flagged = "Diverging Compilation IDs detected" in page
    groups = compile_id_groups(out, ranks)
    if flagged != (len(groups) > 1):
        notes.append("tlparse's compile-id warning and the groups formed from its compile_directory.json disagree")
    sides["compile_ids"] = Side(flagged, groups if flagged else [])

    cache = _list_after(page, "Diverging Cache hit/miss patterns")
    sides["cache"] = Side(bool(cache), ordered(cache))
    collectives = _list_after(page, "Collective operation sequence groups")
    has_schedules = (out / "collective_schedules.json").exists()
    sides["collectives"] = Side(bool(collectives), ordered(collectives),
                                "" if collectives or has_schedules else "none (no collective schedule artifacts)")
    tensor_meta = _list_after(page, "Groups with identical signatures")
    sides["tensor_meta"] = Side(bool(tensor_meta), ordered(tensor_meta))

    runtime = _section(page, "Graph Runtime Analysis")
    if not runtime:
        sides["runtime"] = Side(False, text="none (no runtime estimates)")
    elif "Runtime analysis not available" in runtime:
        sides["runtime"] = Side(True, text="not compared: ranks have different numbers of graphs")
    else:
        graphs = re.findall(r"Graph (\S+): ([\d.]+) ms delta \(Fastest: Rank (\d+) - ([\d.]+) ms, "
                            r"Slowest: Rank (\d+) - ([\d.]+) ms\)", runtime)
        slow = [(g, float(d), int(fast), float(fast_ms), int(slow), float(slow_ms))
                for g, d, fast, fast_ms, slow, slow_ms in graphs if float(d) > 0]
        if slow:
            slowest = sorted({s[4] for s in slow})
            text = "; ".join(f"{g}: slowest {s} {s_ms} ms, fastest {f} {f_ms} ms" for g, _, f, f_ms, s, s_ms in slow)
            sides["runtime"] = Side(True, partition(ranks, [slowest]), text)
        else:
            sides["runtime"] = Side(False, text=f"no delta ({len(graphs)} graphs)")

    order = _section(page, "Graph Execution-Order Diagnostics")
    if not order or "Execution-order analysis unavailable" in order:
        sides["exec_order"] = Side(False, text="none (no execution-order artifacts)")
    else:
        said = []
        if "execution order differs" in order:
            said.append("order differs")
        for what, pattern in (("schedule mismatch", r"Schedule mismatch across ranks: ([Rank\d,\s]+)"),
                              ("cache mismatch", r"Cache hit/miss mismatch across ranks: ([Rank\d,\s]+)")):
            match = re.search(pattern, order)
            if match:
                said.append(f"{what}: ranks {ranks_text(_rank_list(match.group(1)))}")
        sides["exec_order"] = Side(bool(said), text="; ".join(said) if said else "consistent across ranks")
    return sides, notes


# --- ours ---------------------------------------------------------------------------------------


def run_ours(folder: Path) -> tuple[dict | None, str]:
    """`compile-inspector summary --json folder`, uncached; (document, '') or (None, why it failed)."""
    env = dict(os.environ, TCI_NO_CACHE="1")
    proc = subprocess.run([sys.executable, "-m", "inspector", "summary", "--json", str(folder)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    try:
        return json.loads(proc.stdout), ""
    except ValueError:
        return None, f"summary exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-400:]}"


def our_side(findings: list[dict], kinds: tuple[str, ...], ranks: list[int]) -> Side:
    named = [sorted(f.get("ranks") or []) for f in findings if f.get("kind") in kinds]
    if not kinds:
        return Side(False, text="not compared yet")
    return Side(bool(named), partition(ranks, named) if named else [])


# --- the comparison -----------------------------------------------------------------------------


def verdict(theirs: Side, ours: Side) -> tuple[str, bool]:
    if not theirs.found and not ours.found:
        return "yes", False
    if theirs.found and not ours.found:
        return "no: we miss it", True
    if not theirs.found:
        return "no: only ours", False
    if not theirs.groups or not ours.groups:  # one side states no partition (runtime, exec order)
        return "both find it", False
    return ("yes", False) if ordered(theirs.groups) == ordered(ours.groups) else ("groups differ", False)


def compare(folder: Path, tlparse: str) -> Comparison:
    ranks = sorted(int(m.group(1)) for p in folder.iterdir() if (m := RANK_LOG.match(p.name)))
    with tempfile.TemporaryDirectory(prefix="tlparse_cmp_") as tmp:
        out = Path(tmp) / "out"
        failed = run_tlparse(tlparse, folder, out)
        if failed:
            return Comparison(folder, ranks, [], [], error=failed)
        theirs, notes = read_tlparse(out, ranks)
    document, failed = run_ours(folder)
    if document is None:
        return Comparison(folder, ranks, [], notes, error=failed)
    per_rank = document.get("per_rank") or {}
    findings = per_rank.get("divergence") or []
    our_ranks = sorted(f["rank"] for f in per_rank.get("figures") or [])
    if our_ranks != ranks:
        notes.append(f"tlparse read ranks {ranks_text(ranks)}, we read {ranks_text(our_ranks) or 'none'}")
    universe = sorted(set(ranks) | set(our_ranks))

    rows: list[Row] = []
    for cls in CLASSES:
        side = our_side(findings, cls.our_kinds, universe)
        said, missing = verdict(theirs[cls.key], side)
        if not cls.our_kinds and not missing:
            said = "n/a: no data, and we do not compare it"
        if not cls.gates:
            said += " (not gated)"
        label = cls.label + (f" [ours: {', '.join(cls.our_kinds)}]" if cls.our_kinds else "")
        rows.append(Row(label, theirs[cls.key], side, said, gates=missing and cls.gates))
    for kind in OURS_ONLY:
        side = our_side(findings, (kind,), universe)
        if side.found:
            rows.append(Row(f"{kind} (ours only)", None, side, "—"))
    return Comparison(folder, universe, rows, notes)


def corpus_folders() -> list[Path]:
    """Folders of the shared corpus holding two rank logs or more."""
    if not CORPUS.is_dir():
        return []
    found = {p.parent for p in CORPUS.rglob("dedicated_log_torch_trace_rank_*.log") if RANK_LOG.match(p.name)}
    return sorted(f for f in found if sum(1 for p in f.iterdir() if RANK_LOG.match(p.name)) >= 2)


def shown_path(folder: Path) -> str:
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        try:
            return prefix + str(folder.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(folder)


HEADER = ("finding class", "tlparse", "ours", "agree")


def text_table(comparison: Comparison) -> str:
    lines = [f"{shown_path(comparison.folder)}  ({len(comparison.ranks)} ranks)"]
    if comparison.error:
        return "\n".join(lines + [f"  could not compare: {comparison.error}"])
    cells = [HEADER] + [row.cells() for row in comparison.rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    for i, c in enumerate(cells):
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
        if i == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    lines += [f"  note: {n}" for n in comparison.notes]
    lines += [f"  MISSED: tlparse finds {row.label} ({row.cells()[1]}), we do not" for row in comparison.missed]
    return "\n".join(lines)


def markdown(comparisons: list[Comparison], version: str) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    out = [f"Compared with {version} (`tlparse --all-ranks-html`) and `compile-inspector summary --json` "
           "(TCI_NO_CACHE=1) by `bench/compare_tlparse_ranks.py`.", ""]
    for comparison in comparisons:
        out.append(f"**`{shown_path(comparison.folder)}`** ({len(comparison.ranks)} ranks)")
        out.append("")
        if comparison.error:
            out += [f"Could not compare: {comparison.error}", ""]
            continue
        out.append("| " + " | ".join(HEADER) + " |")
        out.append("| " + " | ".join("---" for _ in HEADER) + " |")
        out += ["| " + " | ".join(cell(c) for c in row.cells()) + " |" for row in comparison.rows]
        out.append("")
        out += [f"- note: {n}" for n in comparison.notes]
        out += [f"- **missed**: tlparse finds {row.label}, we do not" for row in comparison.missed]
        if comparison.notes or comparison.missed:
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, help="more folders of per-rank logs")
    parser.add_argument("--no-corpus", action="store_true", help="compare only the folders given")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the tables as Markdown")
    args = parser.parse_args(argv)

    tlparse = find_tlparse()
    if tlparse is None:
        print("tlparse is not installed (pip install tlparse): nothing compared", file=sys.stderr)
        return 2
    folders = ([] if args.no_corpus else corpus_folders()) + [f.resolve() for f in args.folders]
    if not folders:
        print("no multi-rank folder to compare (no corpus here, none given)", file=sys.stderr)
        return 2
    version = tlparse_version(tlparse)
    print(f"{version} against compile-inspector summary --json\n")
    comparisons = [compare(folder, tlparse) for folder in folders]
    for comparison in comparisons:
        print(text_table(comparison) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(comparisons, version), encoding="utf-8")
    if any(c.error for c in comparisons):
        return 2
    return 1 if any(c.missed for c in comparisons) else 0


if __name__ == "__main__":
    sys.exit(main())
