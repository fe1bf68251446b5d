"""The summary's `schema_version` is 5 since S_max, `regions` per call, K and the guards in `code[]`
changed meaning; a summary the cache kept as version 4 is never served to this code, and a saved
version-4 document still reads."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.cached_summary import session_summary, summary_identity
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers import index_cache
from inspector.core.readers.session_loader import open_path
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_the_summary_states_version_5_and_the_changelog_names_each_change():
    summary = json.loads(run_cli("summary", str(BUNDLED), "--json").stdout)
    assert summary["schema_version"] == 5
    schema = (ROOT / "docs" / "summary-schema.md").read_text()
    assert schema.startswith("# `compile-inspector summary --json` — schema version 5")
    change = schema.split("- **5**:", 1)[1].split("- **4**:", 1)[0]
    for field in ("`amdahl`", "`regions.call_us`", "`regions.eager_outside_us`", "`kernels.fusion_ratio`",
                  "`units[].compile.code[]`"):
        assert field in change, field


def test_a_version_4_summary_in_the_cache_is_made_afresh(tmp_path):
    session = open_path(BUNDLED)
    identity = summary_identity(SessionAnalysis(session))
    assert identity is not None
    fresh = session_summary(session)
    stale = {**fresh, "schema_version": 4, "verdict": []}  # what version-4 code kept under this key
    index_cache.store_summary(identity, stale)
    assert index_cache.load_summary(identity)["schema_version"] == 4  # the entry is there
    served = session_summary(open_path(BUNDLED))
    assert served["schema_version"] == 5 and served["verdict"] == fresh["verdict"]


def test_a_saved_version_4_summary_still_reads():
    document = json.loads(run_cli("summary", str(BUNDLED), "--json").stdout)
    saved = Summary.from_state({**document, "schema_version": 4})
    assert saved.get_state()["verdict"] == Summary.from_state(document).get_state()["verdict"]
