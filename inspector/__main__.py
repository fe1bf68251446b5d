"""`python -m inspector`, the `compile-inspector` command (pyproject.toml's console script) and the
frozen app (packaging/entry.py) start here: the command line's `main`, imported inside `run` so that a
Ctrl-C while it imports, or reads its arguments, ends as one during the command does, one line and exit
130, not a traceback."""


def run() -> int:
    try:
        from inspector.cli import main

        return main()  # which says a Ctrl-C during the command itself
    except KeyboardInterrupt:  # one as the command imports or reads its arguments
        from inspector.cli_text import say_interrupted

        return say_interrupted()


if __name__ == "__main__":  # not again in the worker processes the per-rank index spawns
    raise SystemExit(run())
