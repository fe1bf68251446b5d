"""The capture's record of torch's in-process state changes nothing torch does: its hooks pass every
value through, are taken out at the end of the run, and an error inside one is counted, not raised."""

from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

from conftest import ROOT


def _runner():
    spec = importlib.util.spec_from_file_location("_runner_under_test", ROOT / "inspector" / "capture" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hooks_are_removed_and_a_failing_hook_is_counted_not_raised(tmp_path, torch_runtime):
    import torch
    from torch._dynamo import convert_frame, utils
    from torch._inductor.codecache import PyCodeCache

    runner = _runner()
    before = (convert_frame.get_and_maybe_log_recompilation_reasons, PyCodeCache.__dict__["load_by_key_path"])
    limit = utils._compilation_metrics.maxlen
    with runner.TorchRecorder(torch, tmp_path) as record:
        assert convert_frame.get_and_maybe_log_recompilation_reasons is not before[0]
        record._note_recompile = None  # the recording step fails from here on
        reasons = convert_frame.get_and_maybe_log_recompilation_reasons([], _Frame(), None)
        assert reasons == []  # torch's answer passes through although our step raised
        utils._compilation_metrics.append({"compile_id": "9/9"})
    assert (convert_frame.get_and_maybe_log_recompilation_reasons, PyCodeCache.__dict__["load_by_key_path"]) == before
    assert type(utils._compilation_metrics) is collections.deque and utils._compilation_metrics.maxlen == limit
    assert {"compile_id": "9/9"} in utils.get_compilation_metrics()
    utils.clear_compilation_metrics()
    written = json.loads((tmp_path / "torch_record.json").read_text())
    assert written["compilation_metrics"] == [{"compile_id": "9/9"}]
    assert len(written["hook_errors"]) == 1 and written["hook_errors"][0].startswith("recompile: TypeError")


class _Frame:
    """The frame torch hands to its recompile-reason function: only its code and locals are read."""

    f_code = _runner.__code__
    f_locals: dict = {}
