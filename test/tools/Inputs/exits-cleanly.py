"""Run a command; succeed when it exits 0, or exits 1 with an `error:`
diagnostic on stderr. A signal (crash, stack overflow) or any other exit
code fails."""
import subprocess
import sys

result = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if result.returncode == 0:
    sys.exit(0)
if result.returncode == 1 and b"error:" in result.stderr:
    sys.exit(0)
sys.stderr.write(f"{sys.argv[1:]} exited with {result.returncode}\n")
sys.stderr.buffer.write(result.stderr[-2000:])
sys.exit(1)
