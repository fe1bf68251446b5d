"""A capture's manifest and results are decoded once into typed records: what the file said comes
back out of get_state() unchanged (the summary's measurements are the file's), and a damaged field is
counted and left out before any record meets it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inspector.core.model.run_results import Manifest, ProfileOp, RunResults, Timing
from inspector.core.outputs.summary import summarize
from inspector.core.readers.session_loader import open_path

BUNDLED = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "mlp_breaks"


def test_the_bundled_results_and_manifest_round_trip_key_for_key_in_order():
    for name, record in (("results.json", RunResults), ("manifest.json", Manifest)):
        state = json.loads((BUNDLED / name).read_text())
        again = record.from_state(state).get_state()
        assert again == state and list(again) == list(state), name
        assert record.from_state(again) == record.from_state(state), name
    results = open_path(BUNDLED).results
    assert results.eager.median_s == 4.017500009467767e-05 and results.compiled.n == 20
    assert results.correctness[1].inputs == "inputs[0]" and results.profile["compiled"].time_key == "self_cpu_us"
    assert results.get_state()["grad_mode"] == "no_grad"  # a field no attribute names is kept as read
    assert summarize(open_path(BUNDLED))["measurements"] == json.loads((BUNDLED / "results.json").read_text())


def test_a_damaged_or_unknown_field_is_counted_and_left_out_the_rest_decoded(tmp_path):
    folder = tmp_path / "session"
    shutil.copytree(BUNDLED, folder)
    state = json.loads((folder / "results.json").read_text())
    state["eager"]["min_s"] = "fast"  # wrong type: counted, left out of the timing
    state["timing"] = {"rounds": [{"eager_s": 1e-3, "compiled_s": [1]}]}  # so is a round's time
    state["from_a_newer_capture"] = {"kept": [1, 2]}  # unknown: kept as it was
    (folder / "results.json").write_text(json.dumps(state))
    session = open_path(folder)
    results = session.results
    assert session.problems.counts["bad_field"] == 2
    assert results.eager.min_s is None and results.eager.median_s == state["eager"]["median_s"]
    assert results.timing.rounds[0].eager_s == 1e-3 and results.timing.rounds[0].compiled_s is None
    written = results.get_state()
    assert "min_s" not in written["eager"] and written["from_a_newer_capture"] == {"kept": [1, 2]}
    assert summarize(session)["measurements"] == written


def test_a_record_made_in_code_writes_its_fields_and_an_absent_field_stays_absent():
    assert Timing(median_s=1e-3, n=5).get_state() == {"median_s": 1e-3, "n": 5}
    op = ProfileOp(name="aten::mm", extra={"self_cpu_us": 3.0})
    assert op.time("self_cpu_us") == 3.0 and op.get_state() == {"name": "aten::mm", "self_cpu_us": 3.0}
    assert RunResults.from_state({"eager": {"median_s": 1.0}}).get_state() == {"eager": {"median_s": 1.0}}
    assert RunResults.from_state({"allclose": None}).get_state() == {"allclose": None}  # null is not absence
