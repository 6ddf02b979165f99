"""Run a tool, kill it with SIGKILL once it has forked a child, and say
whether any child outlived it: 'no orphan' or 'orphan PID'."""
import os
import signal
import subprocess
import sys
import time


def children(pid):
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found += open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            pass
    return [int(c) for c in found]


tool = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 2.0
forked = []
while not forked and time.monotonic() < deadline and tool.poll() is None:
    forked = children(tool.pid)
    time.sleep(0.01)
if not forked:
    sys.exit("the tool forked no child")
tool.send_signal(signal.SIGKILL)
tool.wait()
time.sleep(0.5)
alive = [c for c in forked if os.path.exists(f"/proc/{c}") and open(f"/proc/{c}/stat").read().split()[2] != "Z"]
print("orphan " + " ".join(map(str, alive)) if alive else "no orphan")
for c in alive:
    os.kill(c, signal.SIGKILL)
