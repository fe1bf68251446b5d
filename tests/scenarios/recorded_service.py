"""A service-like loop under the production recorder: the MLP example (two break sites, a batch-size
recompile) compiled and called, plus a second recorder with a tiny size limit to exercise rotation.
Writes torch's own counters to argv[3] for the test to check against.

usage: recorded_service.py EVENTS_FILE SMALL_EVENTS_FILE COUNTERS_JSON"""

import json
import runpy
import sys
from pathlib import Path

import torch

from inspector.capture.recorder import Recorder, install

events, small, counters_file = (Path(arg) for arg in sys.argv[1:4])
recorder = install(events, summary_every_s=3600)
rotating = Recorder(small, max_bytes=1500, backups=2, summary_every_s=3600)
example = runpy.run_path(str(Path(__file__).resolve().parents[2] / "resources" / "examples" / "mlp_breaks.py"))
torch.set_num_threads(1)
model, inputs = example["inspector_model"]()
compiled = torch.compile(model)
with torch.no_grad():
    compiled(*inputs)
    for more in example["inspector_inputs"]():
        compiled(*more)
    for _ in range(20):  # steady state: no compile, nothing written
        compiled(*inputs)
recorder.close()
rotating.close()
counters = torch._dynamo.utils.counters
counters_file.write_text(json.dumps({
    "breaks": sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values()),
    "compiles": len(torch._dynamo.utils.get_compilation_metrics()),
    "recompiles": sum(1 for m in torch._dynamo.utils.get_compilation_metrics() if m.recompile_reason),
    "fx_graph_miss": counters["inductor"]["fxgraph_cache_miss"],
    "fx_graph_hit": counters["inductor"]["fxgraph_cache_hit"]}))
