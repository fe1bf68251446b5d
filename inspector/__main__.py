from inspector.cli import main

if __name__ == "__main__":  # not again in the worker processes the per-rank index spawns
    raise SystemExit(main())
