"""What a reader could not read: counts per category plus a few examples, so a damaged log opens with
everything readable and says exactly what it skipped instead of failing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# Category -> the sentence a user reads next to its count, in the plural (`said_of` says it of one).
CATEGORIES = {
    "empty_file": "empty files",
    "bad_prefix": "lines without the glog prefix (not a structured-trace line)",
    "bad_json": "records whose JSON could not be decoded",
    "truncated": "records cut off at the end of the file (the run probably died)",
    "md5_mismatch": "payloads whose md5 does not match (damaged or edited)",
    "non_utf8": "lines with bytes that are not UTF-8 (replaced)",
    "orphan_payload": "payload lines with no record announcing them",
    "overlong_line": "lines longer than any real record (skipped unread)",
    "line_cap": "files with more lines than the reader's cap (the rest left unread)",
    "decompressed_cap": "files larger uncompressed than the reader's cap (the rest left unread)",
    "damaged_gzip": "gzip streams damaged part-way (read up to the damage)",
    "trailing_garbage": "files with bytes after the end of their gzip stream that are no gzip (left unread)",
    "cut_ir": "IR texts longer than the reader's cap (kept up to it)",
    "kept_cap": "parts of a trace past the reader's cap on what it keeps (counted, not kept)",
    "bad_trace_field": "trace fields with an unexpected type or value (left out)",
    "oversized_text": "break or recompile reasons far longer than torch writes (read on their first MiB only)",
    "missing_string": "stack frames naming a file id the string table does not hold",
    "bad_record": "records with an unexpected shape for their kind",
    "unmatched_span_end": "compile-stage ends without a matching start",
    "unreadable_graph_lines": "graph lines the FX parser could not read",
    "unreadable_file": "files that could not be read",
    "unsafe_file": "files left out (not a regular file: a FIFO or device, or a link leading outside the opened folder)",
    "bad_field": "fields of manifest.json or results.json with an unexpected type (left out)",
    "unreadable_hlo_lines": "HLO lines the parser could not read",
    "truncated_hlo": "HLO files cut off inside a computation (the dump was interrupted)",
    "missing_hlo": "XLA modules with HLO before or after optimisation missing",
}

MAX_EXAMPLES = 5


def said_of(count: int, meaning: str) -> str:
    """A category's sentence (CATEGORIES, plural) as it follows its count: of one item, its first plural
    word made singular ("1 gzip stream damaged…"; every sentence above names what it counts by that
    word), and the pronouns that point back to it ("its kind", not "their kind")."""
    if count != 1:
        return meaning
    words = meaning.split(" ")
    for index, word in enumerate(words):
        if word.endswith("s") and not word.endswith("ss"):
            words[index] = word[:-1]
            break
    return " ".join({"their": "its", "them": "it"}.get(word, word) for word in words)


@dataclass
class ReadProblems:
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    # what lazily read parts have counted already: a part read again (another analysis of the same
    # session) is not counted twice
    noted: set = field(default_factory=set, repr=False, compare=False)

    def add(self, category: str, example: str = "", once: object = None) -> None:
        """Count one unreadable item of `category`; with `once`, only the first time that key is given."""
        if once is not None:
            if once in self.noted:
                return
            self.noted.add(once)
        self.counts[category] += 1
        if example:
            shown = self.examples.setdefault(category, [])
            if len(shown) < MAX_EXAMPLES:
                shown.append(example)

    def merge(self, other: ReadProblems, prefix: str = "") -> None:
        for category, count in other.counts.items():
            self.counts[category] += count
            shown = self.examples.setdefault(category, [])
            for example in other.examples.get(category, []):
                if len(shown) < MAX_EXAMPLES:
                    shown.append(f"{prefix}{example}")

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def describe(self) -> list[str]:
        """One line per category, most frequent first ("1 record whose JSON…", "3 records whose JSON…")."""
        return [f"{count} {said_of(count, CATEGORIES.get(category, category))}"
                for category, count in self.counts.most_common()]

    def get_state(self) -> dict:
        return {category: {"count": count, "meaning": CATEGORIES.get(category, category),
                           "examples": self.examples.get(category, [])}
                for category, count in self.counts.most_common()}
