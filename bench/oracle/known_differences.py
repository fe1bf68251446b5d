"""Fields where the project's facts still differ from torch's own record, by case, each with its
reason (docs/fidelity.md lists them): routed to whoever fixes them. The tests hold every other field
of their cases equal to torch's record; remove an entry when its fix lands."""

KNOWN = {
    ("modulelist_index_and_scale", "failed_guards"):
        "the log's recompile_reasons name only the first failed guard of each cache entry; torch's record "
        "(every guarded source checked) also names self.scale 1.0 -> 0.5 (issue 47 item 2, analysis side)",
    ("custom_op_without_fake", "gb_ids"):
        "a compile that failed (TorchRuntimeError, no fake kernel) is counted by torch under `unimplemented` "
        "with its type GB4315; we give the failure no break type (issue 47 item 8, analysis side)",
    ("fullgraph_error", "gb_ids"):
        "a graph break under fullgraph=True raises Unsupported to the caller; torch counts it under "
        "`graph_break` (GB0025), we give the failed compile no break type (issue 47 items 5/7, analysis side)",
}
