"""The capture options, declared once: name, type, default, choices, help. The runner's argparse
(loaded by file path in the user's interpreter), the CLI's `capture` and `modes` arguments,
`CaptureSettings` and the settings dialog are all derived from `OPTIONS`. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
COMPARED_MODES = ("default", "reduce-overhead", "max-autotune")  # what `modes` compares unless told
DYNAMIC = ("auto", "true", "false")
DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class Option:
    """One capture option. `runner` options are passed to runner.py on its command line; the others
    act in the launcher (the timeout) or in the child's environment (the thread count). `default`
    None means "not set" (the type then is optional); booleans are flags that flip the default."""

    name: str
    type: type
    default: object
    help: str
    label: str
    choices: tuple = ()
    runner: bool = True
    flag: str | None = None  # the command-line flag, when it is not --name
    minimum: float = 0

    @property
    def cli_flag(self) -> str:
        if self.flag:
            return self.flag
        if self.type is bool and self.default:
            return f"--no-{self.name}"
        return f"--{self.name.replace('_', '-')}"

    def argv(self, value) -> list[str]:
        """This option's part of a command line for `value` (nothing when it is the default)."""
        if self.type is bool:
            return [self.cli_flag] if bool(value) != bool(self.default) else []
        if value is None:
            return []
        return [self.cli_flag, f"{value:g}" if isinstance(value, float) else str(value)]

    def coerce(self, value):
        """`value` as this option's type, or ValueError (a stored setting may have been edited by hand)."""
        if value is None and self.default is None:
            return None
        if self.type is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{self.name}: {value!r} is not true or false")
            return value
        if self.type in (int, float) and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"{self.name}: {value!r} is not a number")
        value = self.type(value)
        if self.choices and value not in self.choices:
            raise ValueError(f"{self.name}: {value!r} is not one of {', '.join(self.choices)}")
        if self.type in (int, float) and not self.minimum <= value < float("inf"):
            raise ValueError(f"{self.name}: {value!r} is not a finite number ≥ {self.minimum:g}")
        return value


OPTIONS: tuple[Option, ...] = (
    Option("mode", str, "default", "torch.compile mode", "Mode", MODES),
    Option("dynamic", str, "auto", "dynamic shapes: auto (torch decides), true or false", "Dynamic shapes", DYNAMIC),
    Option("fullgraph", bool, False, "fail on the first graph break (torch.compile fullgraph=True)", "fullgraph"),
    Option("backend", str, "inductor", "torch.compile backend", "Backend"),
    Option("device", str, "cpu", "device the entry point's model and inputs are moved to", "Device", DEVICES),
    Option("runs", int, 20, "timing rounds of eager and of compiled (they alternate)", "Timing rounds", minimum=1),
    Option("round_time", float, 0.05, "seconds of calls in each timing round", "Round time (s)", minimum=0.001),
    Option("warmup", int, 3, "untimed calls before each measurement", "Warm-up calls"),
    Option("profile", bool, True, "profile eager and compiled (per-kernel times)", "Profile"),
    Option("timeout_s", float, None, "stop the run after this many seconds (exit status 124)", "Timeout (s)",
           runner=False, flag="--timeout", minimum=0.001),
    Option("threads", int, None, "OMP_NUM_THREADS for the run (recorded either way)", "Threads", runner=False,
           minimum=1),
)


def add_arguments(parser, runner_only: bool = False, skip: tuple[str, ...] = ()) -> None:
    """Add the options to an argparse parser (only those runner.py takes when `runner_only`; not those
    named in `skip`)."""
    import argparse

    def converter(option: Option):
        def convert(text: str):
            try:
                return option.coerce(option.type(text))
            except ValueError as error:
                raise argparse.ArgumentTypeError(str(error).split(": ", 1)[-1]) from None
        return convert

    for option in OPTIONS:
        if (runner_only and not option.runner) or option.name in skip:
            continue
        help_text = option.help + ("" if option.default is None or option.type is bool
                                   else f" (default {option.default})")
        if option.type is bool:
            help_text = f"turn off: {help_text}" if option.default else help_text
            parser.add_argument(option.cli_flag, dest=option.name, help=help_text,
                                action="store_false" if option.default else "store_true")
        else:
            parser.add_argument(option.cli_flag, dest=option.name, type=converter(option), default=option.default,
                                choices=option.choices or None, help=help_text,
                                metavar=None if option.choices else option.cli_flag.lstrip("-").upper())


def runner_argv(values: dict) -> list[str]:
    """The runner's command-line options for `values` (a mapping of option name to value)."""
    return [part for option in OPTIONS if option.runner
            for part in option.argv(values.get(option.name, option.default))]
