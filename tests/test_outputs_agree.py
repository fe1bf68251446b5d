"""Every output of one session states the same counts (#23). Each input is rendered every way a user
meets it — `summary --json`, the terminal text, `summary --markdown`, `report` (HTML), `check --sarif`
and `--junit`, and the app's Summary dashboard — and each rendering is read back the way a person
reads it: the numbers under their labels, not the dict behind them. Every count an output states must
be the JSON document's: graph breaks (each occurrence) and break sites, recompiles, cache hits and
misses (of the one cache the label names, or of all caches together where it says so), kernels, and
the speedup verdict. A count whose label does not say which of two meanings it has is a disagreement
too: a reader cannot tell sites from occurrences, or the FX-graph cache from every cache."""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import CUDA_LOG, MULTI_RANK, ROOT, SCENARIOS, run_traced
from cli_runner import run_cli

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"  # what `make run` opens: a capture with measurements
BUNDLED_LOG = next((BUNDLED / "trace").glob("*.log"))  # its raw TORCH_TRACE log, checked in
CHECKED_IN_LOGS = sorted((ROOT / "tests" / "inputs").glob("**/*.log"))  # none yet: tlparse's way, one per fixed bug
# The corpus, a representative few (each opens in well under a second): the single-rank GPU log (Triton
# kernels, provenance) and the 4-rank folder (recompiles, cache hits, an eager fallback on two ranks).
# The corpus holds no export/AOTInductor log: that one is made by a fixture below (a real export).
CORPUS_INPUTS = [CUDA_LOG, MULTI_RANK]

VERDICTS = ("faster", "slower", "inconclusive", "unmeasured")


# --- what one output states ------------------------------------------------------------------------

@dataclass(frozen=True)
class Stated:
    """One count as an output shows it: the figure, its value, and the words it was read from."""

    output: str
    figure: str  # breaks | sites | recompiles | recompile groups | units | kernels | cache <name> | verdict | S
    value: object
    where: str


class Reading:
    """What a reader took from one output: the counts with their labels, and counts without one."""

    def __init__(self, output: str):
        self.output = output
        self.raw = ""  # the whole output as shown
        self.stated: list[Stated] = []
        self.unlabelled: list[str] = []

    def add(self, figure: str, value, where: str) -> None:
        self.stated.append(Stated(self.output, figure, value, where.strip()))

    def figures(self) -> set[str]:
        return {stated.figure for stated in self.stated}


def expected_counts(doc: dict) -> dict:
    """The JSON document's counts, under the names the readers use."""
    caches = {name: (entry["hit"], entry["miss"]) for name, entry in doc["cache"].items()}
    counts = {
        "breaks": len(doc["graph_breaks"]), "sites": len(doc["break_sites"]), "recompiles": len(doc["recompiles"]),
        "recompile groups": len(doc["recompile_groups"]), "units": len(doc["units"]),
        "kernels": doc["kernels"]["total"], "verdict": doc["speedup"]["state"], "S": doc["speedup"]["value"],
        "cache all": (sum(hit for hit, _ in caches.values()),
                      sum(miss for _, miss in caches.values())) if caches else None,
    }
    counts.update({f"cache {name}": pair for name, pair in caches.items()})
    return counts


def disagreements(reading: Reading, expected: dict) -> list[str]:
    wrong = [f"{reading.output}: a count without a label saying what it counts: {text}" for text in reading.unlabelled]
    for stated in reading.stated:
        want = expected.get(stated.figure)
        if stated.figure == "S":
            same = (want is None) == (stated.value is None) and (
                want is None or math.isclose(stated.value, want, rel_tol=0.01, abs_tol=0.005))
        else:
            same = stated.value == want
        if not same:
            wrong.append(f"{reading.output}: {stated.figure} = {stated.value!r}, the JSON says {want!r}  "
                         f"(read from: {stated.where[:160]!r})")
    return wrong


# --- reading sentences and figure rows (shared by every output) -------------------------------------

HEADLINE_COUNTS = re.compile(r"(\d+) graph-break site\(s\), (\d+) recompile\(s\), (\d+) kernels\.")


def verdict_word(sentence: str) -> str | None:
    """faster / slower / inconclusive / unmeasured, as a sentence of the verdict says it."""
    if re.search(r"not measured", sentence, re.I):
        return "unmeasured"
    if "INCONCLUSIVE" in sentence:
        return "inconclusive"
    if "SLOWER" in sentence:
        return "slower"
    if re.search(r"\bfaster\b", sentence):
        return "faster"
    return None


def read_speedup_sentence(reading: Reading, sentence: str) -> None:
    """"Compiled is SLOWER: S = 0.302× …", "Compiled is 3.31× SLOWER than eager …",
    "Speedup not measured: …"."""
    word = verdict_word(sentence)
    if word:
        reading.add("verdict", word, sentence)
    if word == "unmeasured":
        reading.add("S", None, sentence)
        return
    found = re.search(r"\bS = (\d+(?:\.\d+)?)×", sentence)
    if found:
        reading.add("S", float(found[1]), sentence)
        return
    found = re.search(r"Compiled is (\d+(?:\.\d+)?)× (SLOWER|faster)", sentence)  # how many times, not S
    if found:
        times = float(found[1])
        reading.add("S", 1 / times if found[2] == "SLOWER" else times, sentence)


def read_headline(reading: Reading, headline: str) -> None:
    """The one sentence the Markdown, the report and the dashboard open with."""
    found = HEADLINE_COUNTS.search(headline)
    assert found, f"{reading.output}: no counts in the headline {headline!r}"
    reading.add("sites", int(found[1]), found[0])
    reading.add("recompiles", int(found[2]), found[0])
    reading.add("kernels", int(found[3]), found[0])
    read_speedup_sentence(reading, headline[:found.start()])


def read_figure_rows(reading: Reading, rows: list[tuple[str, str, str, str]]) -> None:
    """The verdict table (label, value, formula, source), as the text, the report and the dashboard show it."""
    for label, shown, formula, source in rows:
        row = f"{label} | {shown} | {formula} | {source}"
        if label == "S":
            number = re.match(r"(\d+(?:\.\d+)?(?:e-?\d+)?)\s*×", shown)
            reading.add("S", float(number[1]) if number else None, row)
            word = verdict_word(source)
            if word:
                reading.add("verdict", word, row)
        elif label == "K":
            found = re.search(r"(\d+) ops, (\d+) kernels", source)
            if found:
                reading.add("kernels", int(found[2]), row)
        elif label == "T_overhead":
            found = re.search(r"(\d+) break site\(s\)", source)
            if found:
                reading.add("sites", int(found[1]), row)
        elif "cache" in label:
            found = re.search(r"(\d+) hit, (\d+) miss", source)
            if "FX graph cache" in formula:
                which = "cache fx_graph"
            elif re.search(r"every cache|all caches", formula):
                which = "cache all"
            else:
                reading.unlabelled.append(row)
                continue
            if found:
                reading.add(which, (int(found[1]), int(found[2])), row)
            elif "no cache events" in source:
                reading.add(which, None, row)


# --- the terminal text -------------------------------------------------------------------------------

def _block(lines: list[str], start: int) -> list[str]:
    """The lines after `start` up to the next blank line."""
    block = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        block.append(line)
    return block


def read_text(text: str) -> Reading:
    reading = Reading("text")
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if found := re.match(r"Compile units: (\d+)\b", line):
            reading.add("units", int(found[1]), line)
            units = [row for row in _block(lines, index) if row.startswith("  ")]
            reading.add("units", len(units), f"{len(units)} unit rows")
            reading.add("kernels", sum(int(k) for row in units for k in re.findall(r"  (\d+) kernels  ", row)),
                        "the unit rows' kernels, summed")
        elif found := re.fullmatch(r"Graph breaks: (\d+) at (\d+) site\(s\)", line):
            reading.add("breaks", int(found[1]), line)
            reading.add("sites", int(found[2]), line)
            sites = [int(m[1]) for row in _block(lines, index) if (m := re.match(r"  \S.*  ×(\d+)  \[", row))]
            reading.add("sites", len(sites), f"{len(sites)} site rows under {line!r}")
            reading.add("breaks", sum(sites), f"the ×N of the site rows under {line!r}, summed")
        elif line.startswith("Break types ("):
            block = _block(lines, index)
            counted = [int(m[1]) for row in block if (m := re.match(r"  \S.*  ×(\d+)$", row))]
            unknown = [row for row in block if re.match(r"  \S.*: type not identified", row)]
            reading.add("sites", len(counted) + len(unknown), f"the site rows under {line!r}")
            if not unknown:
                reading.add("breaks", sum(counted), f"the ×N of the site rows under {line!r}, summed")
        elif found := re.match(r"Recompiles: (\d+)", line):
            reading.add("recompiles", int(found[1]), line)
            block = _block(lines, index)
            more = [int(m[1]) for row in block if (m := re.match(r"  … (\d+) more", row))]
            listed = [row for row in block if re.match(r"  \S", row) and not row.startswith("  … ")]
            reading.add("recompiles", len(listed) + sum(more), f"{len(listed)} listed + {more} more")
        elif found := re.fullmatch(r"Recompiles by cause: (\d+) in (\d+) group\(s\)", line):
            reading.add("recompiles", int(found[1]), line)
            reading.add("recompile groups", int(found[2]), line)
            groups = [int(m[1]) for row in _block(lines, index)
                      if (m := re.match(r"  (?:rank \S+ )?frame .*  ×(\d+)", row))]
            reading.add("recompile groups", len(groups), f"the group rows under {line!r}")
            reading.add("recompiles", sum(groups), f"the ×N of the group rows under {line!r}, summed")
        elif found := re.match(r"Kernels: (\d+) \(([^)]*)\)", line):
            reading.add("kernels", int(found[1]), line)
            kinds = [int(n) for n in re.findall(r"(\d+) \w+", found[2])]
            reading.add("kernels", sum(kinds), f"the kinds in {line!r}, summed")
        elif found := re.match(r"Cache (\S+): (\d+) hit, (\d+) miss", line):
            reading.add(f"cache {found[1]}", (int(found[2]), int(found[3])), line)
        elif line.startswith("Per rank ("):
            read_rank_table(reading, _block(lines, index))
        elif line == "Was it worth it?":
            rows = []
            for row in _block(lines, index):
                if found := re.match(r"  (.{18}) (.{18}) (.*?)  \[(.*)\]$", row):
                    rows.append(tuple(part.strip() for part in found.groups()))
                elif not rows and row.startswith("  ") and not row.startswith("    "):
                    read_speedup_sentence(reading, row)  # the verdict sentence above the figures
            read_figure_rows(reading, rows)
    return reading


def read_rank_table(reading: Reading, block: list[str]) -> None:
    """The per-rank rows: their sums are the run's counts, where the header says what each column counts."""
    notes = " ".join(row for row in block if row.strip().startswith("("))
    header = next(row for row in block if row.split()[:1] == ["rank"])
    assert header.split()[:8] == ["rank", "units", "breaks", "recompiles", "cache", "hit", "miss", "failed"], header
    rows = [row.split() for row in block[block.index(header) + 1:]
            if row.split() and row.split()[0].lstrip("?").isdigit()]
    total = [sum(int(row[column]) for row in rows) for column in range(1, 6)]
    reading.add("units", total[0], "the per-rank units, summed")
    if re.search(r"breaks: .*not (break )?sites", notes):
        reading.add("breaks", total[1], "the per-rank breaks, summed")
    else:
        reading.unlabelled.append(f"per-rank 'breaks' column (sites or occurrences?): {header.strip()} {notes}")
    reading.add("recompiles", total[2], "the per-rank recompiles, summed")
    if re.search(r"cache: .*every cache", notes):
        reading.add("cache all", (total[3], total[4]), "the per-rank cache hit / miss, summed")
    else:
        reading.unlabelled.append(f"per-rank cache columns (which cache?): {header.strip()} {notes}")


# --- Markdown ----------------------------------------------------------------------------------------

def _md_rows(lines: list[str], start: int) -> list[list[str]]:
    """The body rows of the first table after line `start` (cells split at unescaped pipes)."""
    return _md_table(lines, start)[1:]


def _md_table(lines: list[str], start: int) -> list[list[str]]:
    """The first table after line `start`, its header first (cells split at unescaped pipes)."""
    rows, inside = [], False
    for line in lines[start + 1:]:
        if line.startswith("|"):
            inside = True
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(set(cell) <= {"-", " "} for cell in cells):
                rows.append(cells)
        elif inside or (line.strip() and not line.startswith("|")):
            break
    return rows


def read_markdown(text: str) -> Reading:
    reading = Reading("markdown")
    lines = text.splitlines()
    read_headline(reading, lines[2])
    for index, line in enumerate(lines):
        if line == "| figure | value |":
            for label, shown in _md_rows(lines, index - 1):
                if label == "S":
                    number = re.match(r"(\d+(?:\.\d+)?(?:e-?\d+)?)\s*×", shown)
                    reading.add("S", float(number[1]) if number else None, f"| S | {shown} |")
        elif found := re.fullmatch(r"\*\*Graph breaks:\*\* (\d+) at (\d+) site\(s\)", line):
            reading.add("breaks", int(found[1]), line)
            reading.add("sites", int(found[2]), line)
            rows = _md_rows(lines, index)
            reading.add("sites", len(rows), f"{len(rows)} rows of the break table")
            reading.add("breaks", sum(int(row[2]) for row in rows), "the count column of the break table, summed")
        elif found := re.fullmatch(r"\*\*Recompiles by cause:\*\* (\d+) in (\d+) group\(s\)", line):
            reading.add("recompiles", int(found[1]), line)
            reading.add("recompile groups", int(found[2]), line)
            header, *rows = _md_table(lines, index) or [[]]
            reading.add("recompile groups", len(rows), f"{len(rows)} rows of the recompile table")
            count = header.index("count") if rows else 0  # after a rank column in a run of ranks
            reading.add("recompiles", sum(int(row[count]) for row in rows),
                        "the count column of the recompile table, summed")
    return reading


# --- the HTML report ---------------------------------------------------------------------------------

class _Blocks(HTMLParser):
    """The report as a reader sees it: headings, paragraphs and tables (rows of cell texts), in order;
    the timeline's SVG left out."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, object]] = []
        self._text: list[str] | None = None
        self._tag = ""
        self._rows: list[list[str]] | None = None
        self._svg = 0

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self._svg += 1
        elif self._svg:
            return
        elif tag == "table":
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._text = []
        elif tag in ("h1", "h2", "p", "li", "pre", "title"):
            self._tag, self._text = tag, []
        elif tag == "br" and self._text is not None:
            self._text.append("\n")

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg -= 1
        elif self._svg:
            return
        elif tag == "table" and self._rows is not None:
            self.blocks.append(("table", self._rows))
            self._rows = None
        elif tag in ("td", "th") and self._rows is not None and self._text is not None:
            self._rows[-1].append("".join(self._text).strip())
            self._text = None
        elif tag == self._tag and self._text is not None:
            self.blocks.append((tag, "".join(self._text).strip()))
            self._tag, self._text = "", None

    def handle_data(self, data):
        if self._text is not None and not self._svg:
            self._text.append(data)


def read_html(page: str) -> Reading:
    reading = Reading("html")
    parser = _Blocks()
    parser.feed(page)
    blocks = parser.blocks
    read_headline(reading, next(text for tag, text in blocks if tag == "h1"))
    sections: dict[str, list[tuple[str, object]]] = {}
    heading = ""
    for tag, content in blocks:
        if tag == "h2":
            heading = content
            sections[heading] = []
        elif heading:
            sections[heading].append((tag, content))
    for heading, body in sections.items():
        tables = [rows for tag, rows in body if tag == "table"]
        paragraphs = [text for tag, text in body if tag == "p"]
        if heading == "Was it worth it?":
            for text in paragraphs:
                read_speedup_sentence(reading, text)
            read_figure_rows(reading, [tuple(row) for row in tables[0][1:]])
        elif found := re.fullmatch(r"Graph breaks: (\d+) at (\d+) site\(s\)", heading):
            reading.add("breaks", int(found[1]), heading)
            reading.add("sites", int(found[2]), heading)
            sites = [int(m[1]) for text in paragraphs if (m := re.match(r"\S.* ×(\d+) \[", text))]
            reading.add("sites", len(sites), f"the site paragraphs under {heading!r}")
            reading.add("breaks", sum(sites), f"the ×N of the site paragraphs under {heading!r}, summed")
        elif heading == "Break types":
            counted = [int(m[1]) for text in paragraphs if (m := re.match(r"\S.* ×(\d+): ", text))]
            unknown = [text for text in paragraphs if text.endswith(": type not identified")]
            reading.add("sites", len(counted) + len(unknown), "the site paragraphs under 'Break types'")
            if not unknown:
                reading.add("breaks", sum(counted), "the ×N of the site paragraphs under 'Break types', summed")
        elif found := re.fullmatch(r"Recompiles: (\d+)", heading):
            reading.add("recompiles", int(found[1]), heading)
            header, *rows = tables[0]
            unit = [index for index, name in enumerate(header) if name in ("Rank", "Unit")]
            distinct = {tuple(row[index] for index in unit) for row in rows}
            reading.add("recompiles", len(distinct), f"the distinct {'/'.join(header[i] for i in unit)} of the table "
                                                      f"under {heading!r}")
        elif found := re.fullmatch(r"Recompiles by cause: (\d+) in (\d+) group\(s\)", heading):
            reading.add("recompiles", int(found[1]), heading)
            reading.add("recompile groups", int(found[2]), heading)
            header, *rows = tables[0]
            count = header.index("Count")
            reading.add("recompile groups", len(rows), f"the rows of the table under {heading!r}")
            reading.add("recompiles", sum(int(row[count]) for row in rows),
                        f"the Count column under {heading!r}, summed")
        elif re.fullmatch(r"Compile units: \d+.*", heading):
            header, *rows = tables[0]
            kernels = header.index("Kernels")
            reading.add("units", len(rows), "the rows of 'Compile units'")
            reading.add("kernels", sum(int(row[kernels]) for row in rows),
                        "the Kernels column of 'Compile units', summed")
        elif found := re.fullmatch(r"Kernels: (\d+)", heading):
            reading.add("kernels", int(found[1]), heading)
            if int(found[1]) <= 500:  # the table lists the first 500
                reading.add("kernels", len(tables[0]) - 1, f"the rows of the table under {heading!r}")
    return reading


# --- SARIF and JUnit ---------------------------------------------------------------------------------

def read_sarif(log: dict) -> Reading:
    reading = Reading("sarif")
    results = log["runs"][0]["results"]
    breaks = [r["message"]["text"] for r in results if r["ruleId"].startswith("graph-break/")]
    reading.add("sites", len(breaks), f"{len(breaks)} graph-break results")
    reading.add("breaks", sum(int(re.match(r"Graph break ×(\d+)", text)[1]) for text in breaks),
                "the ×N of the graph-break results, summed")
    recompiles = [r["message"]["text"] for r in results if r["ruleId"].startswith("recompile/")]
    reading.add("recompile groups", len(recompiles), f"{len(recompiles)} recompile results")
    reading.add("recompiles", sum(int(re.match(r"Recompiled ×(\d+)", text)[1]) for text in recompiles),
                "the ×N of the recompile results, summed")
    return reading


def read_junit(xml: str) -> Reading:
    """`check --max-breaks … --min-speedup …`: each check's reason states the figure it checked."""
    reading = Reading("junit")
    for case in ET.fromstring(xml).iter("testcase"):
        texts = [element.text or "" for element in case.iter("system-out")]
        texts += [element.get("message", "") for element in case if element.tag in ("failure", "skipped")]
        reason = " ".join(texts)
        if case.get("name") == "max-breaks":
            found = re.search(r"(\d+) graph break\(s\)", reason)
            reading.add("breaks", int(found[1]), reason)
        elif case.get("name") == "min-speedup":
            if "not measured" in reason:
                reading.add("verdict", "unmeasured", reason)
                reading.add("S", None, reason)
            else:
                reading.add("S", float(re.search(r"speedup (\d+(?:\.\d+)?)×", reason)[1]), reason)
    return reading


# --- the app's Summary dashboard ---------------------------------------------------------------------

def read_dashboard(dashboard) -> Reading:
    reading = Reading("dashboard")
    table = dashboard.table
    reading.raw = "\n".join([dashboard.title.text(), dashboard.timing.text(), *(
        " | ".join(table.item(row, column).text() for column in range(4)) for row in range(table.rowCount()))])
    read_headline(reading, dashboard.title.text())
    if dashboard.timing.text():
        read_speedup_sentence(reading, dashboard.timing.text().splitlines()[0])
    read_figure_rows(reading, [tuple(table.item(row, column).text() for column in range(4))
                               for row in range(table.rowCount())])
    return reading


# --- rendering every output of one input -------------------------------------------------------------

def _cli(*args: str) -> str:
    done = run_cli(*args)
    assert done.returncode in (0, 1, 4), done.stderr  # 1: a check failed; 4: inconclusive
    return done.stdout


def render_all(path: Path, tmp_path: Path) -> tuple[dict, list[Reading]]:
    """The JSON document and every other output of `path`, each read as a reader reads it."""
    doc = json.loads(_cli("summary", str(path), "--json"))
    text = _cli("summary", str(path))
    md = _cli("summary", str(path), "--markdown")
    _cli("report", str(path), "-o", str(tmp_path / "report.html"))
    _cli("check", str(path), "--max-breaks", "1000000", "--min-speedup", "0.0001",
         "--junit", str(tmp_path / "checks.xml"), "--sarif", str(tmp_path / "results.sarif"))
    page, sarif, junit = (tmp_path / name for name in ("report.html", "results.sarif", "checks.xml"))
    shown = [(read_text, text), (read_markdown, md), (read_html, page.read_text()),
             (lambda raw: read_sarif(json.loads(raw)), sarif.read_text()), (read_junit, junit.read_text())]
    readings = []
    for read, raw in shown:
        readings.append(read(raw))
        readings[-1].raw = raw
    return doc, readings


# What each output must be seen to state (so a reader that found nothing cannot pass for one that agrees).
MUST_STATE = {
    "text": {"breaks", "sites", "recompiles", "recompile groups", "units", "kernels", "verdict", "S"},
    "markdown": {"breaks", "sites", "recompiles", "recompile groups", "kernels", "verdict", "S"},
    "html": {"breaks", "sites", "recompiles", "recompile groups", "units", "kernels", "verdict", "S"},
    "sarif": {"breaks", "sites", "recompiles", "recompile groups"},
    "junit": {"breaks", "S"},
    "dashboard": {"sites", "recompiles", "kernels", "verdict", "S"},
}


def assert_agree(doc: dict, readings: list[Reading]) -> None:
    expected = expected_counts(doc)
    # the document agrees with itself first: sites sum to the breaks, groups to the recompiles, units to the kernels
    assert sum(site["count"] for site in doc["break_sites"]) == expected["breaks"]
    assert [site["count"] for site in doc["break_types"]["sites"]] == [site["count"] for site in doc["break_sites"]]
    assert sum(unit["breaks"] for unit in doc["units"]) == expected["breaks"]
    assert sum(group["count"] for group in doc["recompile_groups"]) == expected["recompiles"]
    assert (sum(unit["kernels"] for unit in doc["units"]) == sum(doc["kernels"]["by_kind"].values())
            == expected["kernels"])
    assert doc["speedup"]["state"] in VERDICTS
    if doc["per_rank"]:
        figures = doc["per_rank"]["figures"]
        assert sum(row["breaks"] for row in figures) == expected["breaks"]
        assert sum(row["recompiles"] for row in figures) == expected["recompiles"]
        assert (sum(row["cache_hits"] for row in figures), sum(row["cache_misses"] for row in figures)) == \
            expected["cache all"]
    wrong = []
    for reading in readings:
        missing = MUST_STATE[reading.output] - reading.figures()
        if missing:
            wrong.append(f"{reading.output}: states no {', '.join(sorted(missing))} (or the reader lost it)")
        wrong += disagreements(reading, expected)
    if doc["cache"]:  # the text names every cache; the others show the FX-graph cache's at most
        shown = {s.figure for s in readings[0].stated if s.figure.startswith("cache ") and s.figure != "cache all"}
        if shown != {f"cache {name}" for name in doc["cache"]}:
            wrong.append(f"text: shows the caches {sorted(shown)}, the JSON has {sorted(doc['cache'])}")
    assert not wrong, "\n".join(wrong)


def _inputs():
    yield pytest.param(BUNDLED, id="bundled-session")
    yield pytest.param(BUNDLED_LOG, id="bundled-session-log")
    for log in CHECKED_IN_LOGS:
        yield pytest.param(log, id=f"inputs-{log.name}")
    for path in CORPUS_INPUTS:
        yield pytest.param(path, id=f"corpus-{path.name}")


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not present (../shared/corpus is not beside this checkout)")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """`render_all` of an input, made once per module: the tests of this module only read what it returns."""
    made: dict[Path, tuple[dict, list[Reading]]] = {}

    def of(path: Path) -> tuple[dict, list[Reading]]:
        if path not in made:
            made[path] = render_all(path, tmp_path_factory.mktemp("outputs"))
        return made[path]
    return of


@pytest.mark.parametrize("path", list(_inputs()))
def test_every_output_states_the_json_counts(path, rendered):
    _need(path)
    doc, readings = rendered(path)
    assert_agree(doc, readings)


@pytest.fixture(scope="module")
def aoti_log(tmp_path_factory, inductor_cache) -> Path:
    """A torch.export + AOTInductor log (no Dynamo frame: [-/-]); the corpus holds none, so it is made."""
    return run_traced(SCENARIOS / "export_aoti.py", tmp_path_factory.mktemp("aoti"), inductor_cache).trace_dir


def test_every_output_of_an_export_log_states_the_json_counts(aoti_log, tmp_path):
    doc, readings = render_all(aoti_log, tmp_path)
    assert doc["units"] and doc["units"][0]["compile_id"] == "[-/-]" and doc["kernels"]["total"]
    assert_agree(doc, readings)


def dashboard_reading(path: Path, qtbot) -> Reading:
    """The app's Summary tab, built offscreen from the same analysis the load worker hands it."""
    from inspector.core.loading import analyse
    from inspector.core.readers.session_loader import open_path
    from inspector.gui.qt_session_model import QtSessionModel
    from inspector.gui.views.qt_dashboard import QtDashboard

    model = QtSessionModel()
    dashboard = QtDashboard(model)
    qtbot.addWidget(dashboard)
    with qtbot.waitSignal(model.sigLoaded, timeout=60_000):
        model.set_loaded(analyse(open_path(path)))
    return read_dashboard(dashboard)


def _has_qt() -> bool:
    try:
        import PySide6  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("path", [BUNDLED, *CORPUS_INPUTS], ids=lambda p: p.name)
def test_the_dashboard_states_the_json_counts(path, request, rendered):
    _need(path)
    if not _has_qt():
        pytest.skip("PySide6 is not installed")
    doc, _ = rendered(path)
    reading = dashboard_reading(path, request.getfixturevalue("qtbot"))
    missing = MUST_STATE["dashboard"] - reading.figures()
    assert not missing, f"the dashboard states no {missing}"
    wrong = disagreements(reading, expected_counts(doc))
    assert not wrong, "\n".join(wrong)


# --- no output says another verdict anywhere (a figure's note included) -----------------------------

# a JUnit <skipped message="INCONCLUSIVE: …"> is a gate's outcome, not the verdict: a gate is INCONCLUSIVE
# whenever it has no interval to read, while the verdict of one older capture still states its point's direction
VERDICT_WORDS = ((re.compile(r'(?<!message=")\bINCONCLUSIVE\b'), "inconclusive"), (re.compile(r"\bSLOWER\b"), "slower"),
                 (re.compile(r"Compiled is (?:\S+× )?faster"), "faster"))


def other_verdicts(reading: Reading, state: str) -> list[str]:
    """Every place an output calls the run faster, SLOWER or INCONCLUSIVE when the JSON's verdict is another."""
    wrong = []
    for line in reading.raw.splitlines():
        for word, meaning in VERDICT_WORDS:
            if meaning != state and (found := word.search(line)):
                wrong.append(f"{reading.output}: says {found[0]!r} where the verdict is {state!r}: "
                             f"…{line[max(0, found.start() - 100):found.end() + 60].strip()}…")
    return wrong


@pytest.mark.parametrize("path", list(_inputs()))
def test_no_output_states_another_verdict(path, request, rendered):
    _need(path)
    doc, readings = rendered(path)
    if _has_qt():
        readings = [*readings, dashboard_reading(path, request.getfixturevalue("qtbot"))]
    wrong = [line for reading in readings for line in other_verdicts(reading, doc["speedup"]["state"])]
    assert not wrong, "\n".join(wrong)
