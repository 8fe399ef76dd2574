"""Start `kane view` in a subprocess and read what it prints until it names its URL (shared by the viewer tests)."""

import os
import subprocess
import sys
import time


def start_view(args, timeout=60.0):
    """(the process, its output lines up to and including "kane view: open ..."): ``args`` after `kane view`; the
    caller terminates the process."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "kane.cli", "view", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline and not any("kane view: open" in ln for ln in lines):
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
    return proc, lines
