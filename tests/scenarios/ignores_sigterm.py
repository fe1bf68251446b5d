"""Ignores SIGTERM and hangs: a cancel must still end it (SIGKILL after the grace)."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ignoring SIGTERM; now hanging", flush=True)
time.sleep(600)
