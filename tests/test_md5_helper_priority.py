"""The second-core md5 helper works at the reader's own priority: on a machine loaded by other
programs it gets a share of the CPU beside the reader's (at the lowest priority it got next to none
there, and the reader ended up hashing every payload itself)."""

from __future__ import annotations

import os
import select
import time
from pathlib import Path

import pytest

from inspector.core.readers import digest_helper
from inspector.core.readers.torch_trace import read_trace_log

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"


@pytest.mark.skipif(os.name != "posix", reason="the helper runs on POSIX only")
def test_the_md5_helper_runs_at_the_readers_priority(monkeypatch):
    monkeypatch.setattr(digest_helper, "HELPER_MIN_BYTES", 0)
    monkeypatch.setattr(digest_helper, "helper_allowed", lambda: True)
    index = read_trace_log(LOG, verify_md5=False)  # the payload ranges, their md5s not checked yet
    record = next(record for record in index.records if record.has_payload)
    data = LOG.read_bytes()
    with open(LOG, "rb") as handle:
        helper = digest_helper.DigestHelper.start(handle)
        assert helper is not None
        try:
            helper.check(record, data, record.payload_start, record.payload_end, False)
            deadline = time.monotonic() + 30
            while helper.answered == 0 and not helper.closed and time.monotonic() < deadline:
                helper.send()  # the child is past any change of priority once it answers
                select.select([helper.outs], [], [], 1.0)
            assert helper.answered == 1 and record.payload_intact is True
            assert os.getpriority(os.PRIO_PROCESS, helper.process.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        finally:
            helper.stop()
