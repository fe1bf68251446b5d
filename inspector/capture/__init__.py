"""Capture: run a model script in the user's own Python under TORCH_TRACE and save a session folder.

`runner` runs inside the user's interpreter (standard library and torch only); `launcher` runs in the
app or the CLI (standard library only) and starts, watches, times out and records the run.
"""
