"""Fields where the project's facts still differ from torch's own record, by case, each with its
reason (docs/fidelity.md lists them): routed to whoever fixes them. The tests hold every other field
of their cases equal to torch's record; remove an entry when its fix lands."""

KNOWN: dict[tuple[str, str], str] = {
    ("fullgraph_error", "outcomes"):
        "an `Unsupported` error runs the frame eagerly unless the code was compiled with fullgraph=True, and "
        "neither the log nor torch's record of the run says whether it was: we say `eager unless fullgraph`, "
        "the program saw the error raised (the capture would have to record torch.compile's arguments)",
}
