#!/usr/bin/env python3
"""Runs an adapter as a child and relays its protocol lines unchanged, appending each to a log:
`> LINE` for what the server sent, `< LINE` for what the adapter answered. The tests use it to
check every message of a real run against the schemas in schemas/provider-protocol/.

Usage: record_adapter.py LOG PROGRAM [ARG...]
"""

import ctypes
import subprocess
import sys
import threading

PR_SET_PDEATHSIG = 1
SIGKILL = 9


def die_with_parent():
    # The adapter dies with the recorder, as it would with the server.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, SIGKILL)


def main():
    log_path, program = sys.argv[1], sys.argv[2:]
    log = open(log_path, "ab", buffering=0)
    lock = threading.Lock()
    child = subprocess.Popen(
        program, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=die_with_parent
    )

    def record(mark, line):
        with lock:
            log.write(mark + line if line.endswith(b"\n") else mark + line + b"\n")

    def requests():
        for line in sys.stdin.buffer:
            record(b"> ", line)
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=requests, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        record(b"< ", line)
        out.write(line)
        out.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
