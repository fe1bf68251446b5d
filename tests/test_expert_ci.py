"""CI outputs: `check --junit` parsed back, `check --sarif` validated against the SARIF 2.1.0 schema
with results at the user's source lines, `summary --markdown` for a pull-request comment."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import MULTI_RANK
from inspector.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_SESSION = ROOT / "resources" / "sessions" / "mlp_breaks"
SARIF_SCHEMA = Path(__file__).parent / "inputs" / "sarif-schema-2.1.0.json"


def test_check_junit_has_one_testcase_per_check_and_the_failures(tmp_path, capsys):
    out = tmp_path / "checks.xml"
    code = main(["check", str(BUNDLED_SESSION), "--max-breaks", "0", "--max-compile-time", "1000", "--junit", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert code == 1
    suite = ET.parse(out).getroot().find("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert list(cases) == [line.split()[1].rstrip(":") for line in printed]
    assert int(suite.get("tests")) == len(cases) == 3 and int(suite.get("failures")) == 1
    failure = cases["max-breaks"].find("failure")
    assert failure is not None and failure.get("message") == "4 graph break(s), allowed 0"
    assert cases["complete"].find("failure") is None and cases["max-compile-time"].find("failure") is None


def test_check_sarif_is_valid_and_points_at_the_break_and_recompile_lines(tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "breaks.sarif"
    main(["check", str(BUNDLED_SESSION), "--sarif", str(out), "--source-root", "/work/main"])
    capsys.readouterr()
    log = json.loads(out.read_text())
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    results = log["runs"][0]["results"]
    located = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
    # the example ran from /work/main when the bundled session was captured: paths become repository-relative
    assert ("graph-break/GB0170", "resources/examples/mlp_breaks.py", 19) in located
    assert ("graph-break/GB0025", "resources/examples/mlp_breaks.py", 21) in located
    assert ("recompile/size", "resources/examples/mlp_breaks.py", 17) in located
    rules = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["graph-break/GB0170"]["helpUri"].endswith("/gb/gb0170.html")
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "SRCROOT" for r in results)


def test_sarif_outside_the_source_root_keeps_absolute_file_uris(tmp_path, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "breaks.sarif"
    main(["check", str(BUNDLED_SESSION), "--sarif", str(out), "--source-root", str(tmp_path)])
    capsys.readouterr()
    log = json.loads(out.read_text())
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"file:///work/main/resources/examples/mlp_breaks.py"}


def test_sarif_of_a_corpus_log_with_many_recompiles_is_valid(tmp_path, capsys, corpus):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "ranks.sarif"
    main(["check", str(MULTI_RANK), "--sarif", str(out)])
    capsys.readouterr()
    log = json.loads(out.read_text())
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    messages = [r["message"]["text"] for r in log["runs"][0]["results"]]
    assert any(m.startswith("Recompiled ×14 (kernel): x size dim 0 2 → 3") for m in messages)


def test_summary_markdown_is_a_pull_request_comment(capsys):
    assert main(["summary", "--markdown", str(BUNDLED_SESSION)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("### torch.compile Inspector: mlp_breaks")
    assert ("| `mlp_breaks.py:19` | [GB0170](https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html)"
            in text)
    assert "`torch._dynamo.mark_dynamic(x, 0)`" in text and "set_stance" in text
    assert "| guard checks (Dynamo cache lookup) |" in text
    assert "recompile_limit = 8" in text
