"""Starts two processes that leave the capture's process group, then hangs: a child in a new session
(start_new_session=True) and a double-forked daemon whose parent is gone. Their pids go to the file
named by $SCENARIO_PIDS. A timeout or a cancel must end both."""

import os
import subprocess
import sys
import time

sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
child = subprocess.Popen(sleeper, start_new_session=True)
# the daemon: a middle process that starts it in a new session and exits at once, orphaning it
started = ("import subprocess, sys; print(subprocess.Popen(sys.argv[1:], start_new_session=True, "
           "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)")
middle = subprocess.run([sys.executable, "-c", started, *sleeper], capture_output=True, text=True, check=True)
with open(os.environ["SCENARIO_PIDS"], "w") as handle:
    handle.write(f"{child.pid} {middle.stdout.strip()}\n")
print("daemons started; now hanging", flush=True)
time.sleep(600)
