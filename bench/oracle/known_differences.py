"""Fields where the project's facts still differ from torch's own record, by case, each with its
reason (docs/fidelity.md lists them): routed to whoever fixes them. The tests hold every other field
of their cases equal to torch's record; remove an entry when its fix lands."""

KNOWN: dict[tuple[str, str], str] = {
    ("fullgraph_error", "outcomes"):
        "an `Unsupported` error runs the frame eagerly unless the code was compiled with fullgraph=True, and "
        "neither the log nor torch's record of the run says whether it was: we say `eager unless fullgraph`, "
        "the program saw the error raised (the capture would have to record torch.compile's arguments)",
    ("aoti_cpu", "compiles"):
        "AOTInductor compiles outside any Dynamo frame: torch's compilation-metrics record of it has compile_id "
        "null, which the harness drops, while the summary lists the compile as `-/-` (as tlparse writes it); the "
        "same one compile, named two ways (the harness should map null to `-/-`)",
    ("aoti_cpu", "kernels"):
        "torch's record counts the kernels of output code loaded as Python (PyCodeCache); AOTInductor's is C++ "
        "compiled into the package, which that hook never sees, so the record says 0; the summary reads the "
        "output code from the log: 1 generated C++ kernel (2 extern calls apart)",
    ("ddp_gloo_single_process", "torch_breaks"):
        "torch's `unimplemented` counter holds 3 `Attempt to trace generator` (GB0003) events, Dynamo declining "
        "contextlib's generator frames inside DDP's forward: the summary lists them as frames skipped, not "
        "breaks, while the harness counts every `unimplemented` event as a break (3 breaks + 3 skips = 6)",
    ("ddp_gloo_single_process", "gb_ids"):
        "GB0003 (`Attempt to trace generator`): the same 3 skipped generator frames, which the summary keeps "
        "apart from the break sites' types",
    ("ddp_gloo_single_process", "breaks"):
        "torch compiled a resume function only after the break in contextlib's `__init__` (:105); after the "
        "restarts in `inner` (external_utils.py:69, GB0156) and contextlib's `helper` (:301, GB0007) it compiled "
        "none, while the summary lists both as break sites; why torch resumed nowhere there (the rest of those "
        "frames ran eagerly) is not yet established",
}
