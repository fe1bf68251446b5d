"""`summary --json` carries each compile's guards as torch logged them (`dynamo_cpp_guards_str`), in
`units[].compile.code[]` (`kind: guards`), as docs/per-compile.md says: the text read straight from the
log is the oracle; a guards text longer than CODE_JSON_CHARS is cut there, the cut marked."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from cli_runner import run_cli
from conftest import MULTI_RANK

from inspector.core.analysis.compile_detail import CODE_JSON_CHARS

LOG = MULTI_RANK / "dedicated_log_torch_trace_rank_1.log"
RECORD = re.compile(r'\] (\{"dynamo_cpp_guards_str".*\})$')


def logged_guards(lines: list[str]) -> dict[str, str]:
    """Compile id → the guards payload torch wrote (the tab-indented lines after the record)."""
    found = {}
    for index, line in enumerate(lines):
        match = RECORD.search(line)
        if match:
            record = json.loads(match.group(1))
            body = []
            for following in lines[index + 1:]:
                if not following.startswith("\t"):
                    break
                body.append(following[1:])
            compile_id = f"[{record['frame_id']}/{record['frame_compile_id']}]"
            found[compile_id + (f"_{record['attempt']}" if record.get("attempt") else "")] = "\n".join(body)
    return found


def json_guards(log: Path) -> dict[str, str]:
    done = run_cli("summary", str(log), "--json", "--no-cache")
    assert done.returncode == 0, done.stderr[-3000:]
    units = json.loads(done.stdout)["units"]
    return {unit["compile_id"]: entry.get("text") for unit in units for entry in unit["compile"]["code"]
            if entry["kind"] == "guards"}


@pytest.fixture
def log() -> Path:
    if not LOG.is_file():
        pytest.skip("the public multi-rank corpus is not here")
    return LOG


def test_every_units_guards_in_the_json_are_the_text_torch_logged(log):
    logged = logged_guards(log.read_text().split("\n"))
    assert len(logged) == 15
    assert json_guards(log) == logged
    assert all(text.lstrip().startswith("TREE_GUARD_MANAGER:") for text in logged.values())


def test_a_guards_text_longer_than_the_json_keeps_is_cut_and_the_cut_says_how_much(log, tmp_path):
    """The same real log, its first unit's guards made longer than CODE_JSON_CHARS (md5 rewritten)."""
    lines = log.read_text().split("\n")
    first = next(index for index, line in enumerate(lines) if RECORD.search(line))
    end = first + 1
    while lines[end].startswith("\t"):
        end += 1
    extra = [f"| +- GUARD_{n}: L['x'].size()[0] == {n}" for n in range(CODE_JSON_CHARS // 30)]
    body = [line[1:] for line in lines[first + 1:end]] + extra
    payload = "\n".join(body)
    record = json.loads(RECORD.search(lines[first]).group(1))
    record["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    lines[first] = lines[first][:RECORD.search(lines[first]).start(1)] + json.dumps(record)
    lines[first + 1:end] = ["\t" + line for line in body]
    folder = tmp_path / "log"
    folder.mkdir()
    long_log = folder / log.name
    long_log.write_text("\n".join(lines))
    shown = json_guards(long_log)["[0/0]"]
    assert len(payload) > CODE_JSON_CHARS
    assert shown == f"{payload[:CODE_JSON_CHARS]}\n# … cut: {len(payload) - CODE_JSON_CHARS:,} more characters\n"
