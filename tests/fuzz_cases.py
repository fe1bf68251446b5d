"""Structure-aware mutations of real inputs for the fuzz suite (tests/test_fuzz.py) and its longer
run (bench/bench_fuzz.py): logs are mutated record by record (envelope values swapped for hostile
ones, payloads edited with or without a fixed md5, lines cut, duplicated, reordered, prefixed with a
BOM or NULs), capture sessions field by field (manifest, results, graphs) and through planted FIFOs
and links out of the folder, bundles entry by entry and byte by byte. Every case is built from a
seed, so a failing case is rebuilt exactly from its id.

Every case plants a link to `secret` (a file outside the opened folder): its marker must never reach
an output."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import shutil
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
CORPUS = ROOT.parent / "shared" / "corpus" / "tlparse-fixtures"
SECRET_MARKER = "SECRET-0f-another-folder-7d1c"

# Values an attacker or a broken writer might put where a field goes.
HOSTILE_VALUES = [None, [], {}, "", "text", -1, 0, 2**70, 1e308 * 10, float("nan"), -1e308 * 10, True,
                  [[[[[]]]]], {"a": {"b": {"c": {}}}}, "\x1b]0;pwned\x07\x1b[2J", "\u202eevil",
                  "<a href=file:///etc/passwd>x</a>", "../../../../etc/passwd", "/proc/self/environ",
                  "/dev/zero", "\0\0\0", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "9" * 400, {"value": [1, 2]}, [None, "x", 3.5]]
DEEP = "[" * 50_000 + "]" * 50_000
# Texts that made a regular expression or a loop quadratic (issue 28), put in any record's payload: a
# 40 KB one of them took seconds, 1 MB hours. Linear reading keeps each case well under a second.
HOSTILE_TEXTS = ["Graph break in user code at " * 1500, "Graph break (" * 3000, "x == 1" + " " * 40_000 + "y",
                 "L[" + "] == " * 8000, "L['" + "]" * 40_000, "        # File: " + "a.py:1 in f " * 3000,
                 "ENTRY %main (" + ")->" * 10_000, "\n" * 40_000, "tensor '" * 5000, "x == 1 #" + " #" * 20_000,
                 "0/0: x\n" + "  y\n" * 10_000, "User code traceback:\n" + " \n" * 20_000]
# A line without a line break longer than any real record (the reader skips it in one pass).
LONG_LINE_BYTES = (16 << 20) + 1


def seed_logs() -> list[Path]:
    """The real logs mutations start from: the bundled capture's log, and the corpus when present."""
    logs = [next((BUNDLED / "trace").glob("*.log"))]
    if CORPUS.is_dir():
        logs.append(CORPUS / "inductor_provenance_jit_cuda_log.txt")
        logs += sorted((CORPUS / "multi_rank_logs").glob("*.log"))
    return logs


@dataclass
class Record:
    """One record of a log: the glog prefix, its JSON envelope text and payload lines (without tabs)."""

    prefix: str
    envelope: str
    payload: list[str]

    def render(self) -> str:
        return "\n".join([self.prefix + self.envelope] + ["\t" + line for line in self.payload])


def split_records(text: str) -> list[Record]:
    records: list[Record] = []
    for line in text.split("\n"):
        if line.startswith("\t") and records:
            records[-1].payload.append(line[1:])
        elif "] {" in line:
            head, _, rest = line.partition("] ")
            records.append(Record(head + "] ", rest, []))
        elif line:
            records.append(Record("", line, []))
    return records


def fix_md5(record: Record) -> None:
    """Give the record's envelope the md5 of its (edited) payload, as torch would have written it."""
    try:
        envelope = json.loads(record.envelope)
    except (ValueError, RecursionError):
        return
    if isinstance(envelope, dict) and "has_payload" in envelope:
        envelope["has_payload"] = hashlib.md5("\n".join(record.payload).encode()).hexdigest()
        record.envelope = json.dumps(envelope)


def _hostile(rng: random.Random):
    return copy.deepcopy(rng.choice(HOSTILE_VALUES))  # a fresh copy: later mutations must not share it


def _replace_somewhere(document, rng: random.Random):
    """`document` with one value at a random path replaced by a hostile one (or a key renamed)."""
    if not isinstance(document, (dict, list)) or not document:
        return _hostile(rng)
    keys = list(document.keys()) if isinstance(document, dict) else list(range(len(document)))
    key = rng.choice(keys)
    if rng.random() < 0.5 and isinstance(document[key], (dict, list)) and document[key]:
        document[key] = _replace_somewhere(document[key], rng)
    elif isinstance(document, dict) and rng.random() < 0.15:
        document[rng.choice(["chromium_event", "artifact", "dynamo_start", "compilation_metrics", "str",
                             "dynamo_output_graph", "inductor_output_code", key + "_x"])] = document.pop(key)
    else:
        document[key] = _hostile(rng)
    return document


def mutate_json_text(text: str, rng: random.Random) -> str:
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return text
    for _ in range(rng.randint(1, 3)):
        document = _replace_somewhere(document, rng)
    return json.dumps(document)


def mutate_log(text: str, rng: random.Random) -> str:
    records = split_records(text)
    if not records:
        return text
    for _ in range(rng.randint(1, 4)):
        index = rng.randrange(len(records))
        record = records[index]
        action = rng.choice(["value", "value", "value", "payload", "payload_fixed", "cut_line", "drop", "duplicate",
                             "swap", "garbage", "deep_envelope", "deep_payload", "escape", "crlf", "kind",
                             "hostile_text"])
        if action == "value":
            record.envelope = mutate_json_text(record.envelope, rng)
        elif action in ("payload", "payload_fixed") and record.payload:
            line = rng.randrange(len(record.payload))
            record.payload[line] = mutate_json_text(record.payload[line], rng) if rng.random() < 0.3 else (
                record.payload[line][: rng.randrange(len(record.payload[line]) + 1)]
                + rng.choice(["", "(", "{", "\x00", "é"]))
            if action == "payload_fixed":
                fix_md5(record)
        elif action == "cut_line":
            record.envelope = record.envelope[: rng.randrange(len(record.envelope) + 1)]
        elif action == "drop":
            records.pop(index)
        elif action == "duplicate":
            records.insert(index, Record(record.prefix, record.envelope, list(record.payload)))
        elif action == "swap" and len(records) > 1:
            other = rng.randrange(len(records))
            records[index], records[other] = records[other], records[index]
        elif action == "garbage":
            records.insert(index, Record("", rng.choice(["\x00" * 16, "\ufeff", "random junk", "\t orphan",
                                                         "V1202"]), []))
        elif action == "deep_envelope":
            record.envelope = '{"artifact": ' + DEEP + "}"
        elif action == "deep_payload":
            record.payload = [DEEP]
            fix_md5(record)
        elif action == "escape":
            record.envelope = (record.envelope.replace('"', '"\\u001b[2J\\u202e', 1) if '"' in record.envelope
                               else record.envelope)
        elif action == "crlf":
            record.payload = [line + "\r" for line in record.payload]
        elif action == "kind":
            record.envelope = mutate_json_text(record.envelope, rng)
        elif action == "hostile_text":
            record.payload = rng.choice(HOSTILE_TEXTS).split("\n")
            fix_md5(record)
    if rng.random() < 0.03:
        records.insert(rng.randrange(len(records) + 1), Record("", "\0" * LONG_LINE_BYTES, []))
    out = "\n".join(record.render() for record in records) + "\n"
    if rng.random() < 0.1:
        out = rng.choice(["\ufeff", "\x00" * 16]) + out
    if rng.random() < 0.15:
        out = out[: rng.randrange(len(out) + 1)]
    return out


def log_case(seed: int, folder: Path, secret: Path) -> Path:
    """A folder holding one mutated log, a link to `secret` named like a log, and maybe a FIFO."""
    rng = random.Random(seed)
    source = rng.choice(seed_logs())
    text = source.read_text(encoding="utf-8", errors="replace")
    if source.stat().st_size > 1 << 20:  # a slice of the big log keeps a case fast
        text = "\n".join(text.split("\n")[: rng.randint(200, 2000)])
    folder.mkdir(parents=True)
    log = folder / f"dedicated_log_torch_trace_rank_{rng.randint(0, 3)}.log"
    log.write_text(mutate_log(text, rng), encoding="utf-8", errors="surrogateescape")
    (folder / "dedicated_log_torch_trace_rank_8.log").symlink_to(secret)
    if rng.random() < 0.3:
        os.mkfifo(folder / "dedicated_log_torch_trace_rank_9.log")
    return folder if rng.random() < 0.6 else log


def session_case(seed: int, folder: Path, secret: Path) -> Path:
    """A copy of the bundled capture session with its manifest, results, graphs or log mutated, plus
    links out of the folder and FIFOs named like its files."""
    rng = random.Random(seed)
    shutil.copytree(BUNDLED, folder)
    for _ in range(rng.randint(1, 3)):
        target = rng.choice(["manifest.json", "results.json", "results.json", "graphs", "trace", "plant"])
        if target in ("manifest.json", "results.json"):
            file = folder / target
            choice = rng.random()
            if not _plain(file):
                continue  # an earlier step made it a FIFO or a link
            if choice < 0.7:
                file.write_text(mutate_json_text(file.read_text(), rng))
            elif choice < 0.8:
                file.write_text(rng.choice([DEEP, "[]", "null", "{", "\"text\"", ""]))
            elif choice < 0.9:
                file.unlink()
                file.symlink_to(rng.choice([secret, Path("/dev/zero"), Path("/proc/self/environ")]))
            else:
                file.unlink()
                os.mkfifo(file)
        elif target == "graphs":
            graph = rng.choice(sorted((folder / "graphs").glob("*.json")))
            if not _plain(graph):
                continue
            graph.write_text(rng.choice([mutate_json_text(graph.read_text(), rng), DEEP, "{\"nodes\": 5}"]))
        elif target == "trace":
            log = next((folder / "trace").glob("dedicated_log_torch_trace_example.log"))
            lines = log.read_text().split("\n")
            log.write_text(mutate_log("\n".join(lines[: rng.randint(200, 3000)]), rng))
        else:
            name = rng.choice(["trace/dedicated_log_torch_trace_rank_5.log", "graphs/0_0.json", "results.json"])
            planted = folder / name
            if planted.exists() or planted.is_symlink():
                planted.unlink()
            if rng.random() < 0.5:
                planted.symlink_to(secret)
            else:
                os.mkfifo(planted)
    if rng.random() < 0.5:
        manifest = folder / "manifest.json"
        try:
            document = json.loads(manifest.read_text()) if _plain(manifest) else None
        except (ValueError, RecursionError):
            document = None
        if isinstance(document, dict):
            document["script"] = rng.choice([str(secret), "../outside/secret.py", "/proc/self/environ", "/dev/zero"])
            manifest.write_text(json.dumps(document))
    return folder


def _plain(file: Path) -> bool:
    """A regular file, not a link (the generator itself must not read a FIFO it planted)."""
    return not file.is_symlink() and file.is_file()


def bundle_case(seed: int, folder: Path, secret: Path) -> Path:
    """A .tcinspect of a (maybe mutated) session, then damaged entry by entry or byte by byte."""
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    session = session_case(seed, folder / "session", secret) if rng.random() < 0.5 else BUNDLED
    bundle = folder / "case.tcinspect"
    with warnings.catch_warnings(), zipfile.ZipFile(bundle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore")  # duplicate names are part of the point
        for file in sorted(session.rglob("*")):
            if _plain(file):
                name = file.relative_to(session).as_posix()
                choice = rng.random()
                if choice < 0.05:
                    name = rng.choice(["../" + name, "/" + name, name + "/", "a" * 300, name.replace("/", "\\")])
                elif choice < 0.08:
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o120777 << 16
                    archive.writestr(info, str(secret))
                    continue
                archive.write(file, name)
        if rng.random() < 0.2:
            archive.writestr("trace", b"a file where a folder is")
    if rng.random() < 0.5:
        data = bytearray(bundle.read_bytes())
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data))]
        bundle.write_bytes(bytes(data))
    return bundle
