"""Stop a tool with SIGTERM while its output's temporary file exists, and
check that it removed it: the target is intact (the old bytes) and no
`.loom-*` file is left in the directory. Freezing the tool with SIGSTOP as
soon as the temporary file shows makes the check exact: a try in which the
rename already happened is repeated.

    interrupt-write.py DIR TARGET -- TOOL ARGS...
"""
import os
import signal
import subprocess
import sys
import time

directory, target = sys.argv[1], sys.argv[2]
command = sys.argv[sys.argv.index("--") + 1:]
old = open(target, "rb").read()


def temporaries():
    return [n for n in os.listdir(directory) if n.startswith(".loom-")]


for attempt in range(40):
    tool = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    caught = False
    while tool.poll() is None:
        if temporaries():
            tool.send_signal(signal.SIGSTOP)
            caught = bool(temporaries()) and open(target, "rb").read() == old
            tool.send_signal(signal.SIGTERM)
            tool.send_signal(signal.SIGCONT)
            break
        time.sleep(0.0005)
    status = tool.wait()
    if caught:
        left = temporaries()
        intact = open(target, "rb").read() == old
        print(f"interrupted (status {status}); temporary files left: {len(left)}; target intact: {intact}")
        sys.exit(0)
    # Too late (the rename happened): put the old bytes back and try again.
    open(target, "wb").write(old)
sys.exit("never caught the temporary file in 40 tries")
