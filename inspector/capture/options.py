"""The capture options' choices, owned here once: the runner (loaded by file path in the user's
interpreter), the CLI and the settings dialog all read them. Standard library only."""

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DYNAMIC = ("auto", "true", "false")
DEVICES = ("cpu", "cuda")
ROUND_TIME_S = 0.05  # seconds of calls per timing round: eager and compiled alternate, one round each
