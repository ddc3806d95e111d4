#!/usr/bin/env python3
"""A deliberately broken REA provider protocol adapter, for the server's bound tests.

It serves three fixed procedures and breaks on purpose when asked about these addresses
(by procedure_info or decompile): 0xdead exits, 0xbeef hangs, 0xbad answers a line that is not
JSON, 0xf100d writes a line of 8 MiB, 0xa11c allocates and touches 1 GiB, 0x5105 answers after
3 s, 0xe77 answers a protocol error, 0x1d answers under another id. `--mode slow-start` sleeps
10 s before reading anything; `--mode hang-list` never answers list_procedures; `--mode
slow-list` answers list_procedures after 0.8 s (past a 500 ms completion bound, within the
grace of its own); `--mode missing-decompile` does not offer decompile. procedure_info of 0x1000 is named after the
process id, so a test can tell a restarted adapter from the first one. decompile of 0xe1
answers as code the adapter's working directory and environment, as JSON.
"""

import json
import os
import sys
import time

PROCEDURES = [(0x1000, "alpha"), (0x1100, "beta"), (0x1200, "gamma")]


def main():
    mode = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--mode" else "normal"
    if mode == "slow-start":
        time.sleep(10)
    document = None
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        method, params, rid = request["method"], request.get("params") or {}, request["id"]
        answer = {"jsonrpc": "2.0", "id": rid}
        address = int(params.get("address", "0x0"), 16)
        if method in ("procedure_info", "decompile"):
            if address == 0xDEAD:
                os._exit(3)
            if address == 0xBEEF:
                time.sleep(3600)
            if address == 0xBAD:
                out.write("this is not json\n")
                out.flush()
                continue
            if address == 0xF100D:
                out.write("x" * (8 << 20))
                out.flush()
                time.sleep(3600)
            if address == 0xA11C:
                hog = bytearray(1 << 30)
                for i in range(0, len(hog), 4096):
                    hog[i] = 1
            if address == 0x5105:
                time.sleep(3)
            if address == 0x1D:
                answer["id"] = rid + 1000
        if method == "describe":
            operations = ["list_documents", "list_procedures", "procedure_info", "decompile"]
            if mode == "missing-decompile":
                operations.remove("decompile")
            answer["result"] = {"name": "fake", "version": "1.0", "protocol": 1, "operations": operations}
        elif method == "open":
            document = params["document"]
            os.stat(params["path"])
            answer["result"] = {"documents": [{"name": document, "format": "elf", "architecture": "x86_64"}]}
        elif method == "list_documents":
            answer["result"] = {"documents": [{"name": document, "format": "elf", "architecture": "x86_64"}]}
        elif method == "list_procedures":
            if mode == "hang-list":
                time.sleep(3600)
            if mode == "slow-list":
                time.sleep(0.8)
            answer["result"] = {
                "procedures": [{"address": hex(a), "name": n} for a, n in PROCEDURES],
                "next_cursor": None,
            }
        elif method == "procedure_info":
            if address == 0xE77:
                answer["error"] = {"code": -32000, "message": "the tool behind the adapter failed"}
            else:
                name = f"pid-{os.getpid()}" if address == 0x1000 else "other"
                answer["result"] = {"address": hex(address), "name": name, "size": 16, "segment": ".text"}
        elif method == "decompile":
            code = "int alpha(void)\n{\n    return puts(\"hello\");\n}\n"
            if address == 0xE1:
                code = json.dumps({"cwd": os.getcwd(), "env": dict(os.environ)})
            answer["result"] = {
                "address": hex(address),
                "name": "alpha",
                "code": code,
                "warnings": ["WARNING: a warning, passed through verbatim"],
                "complete": True,
                "reason": None,
            }
        elif method == "close":
            answer["result"] = {}
        else:
            answer["error"] = {"code": -32601, "message": "no such method"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
