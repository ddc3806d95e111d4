#!/usr/bin/env python3
"""The reference adapter of the REA provider protocol (docs/PROVIDER_PROTOCOL.md), over angr.

Newline-delimited JSON-RPC 2.0 on stdin and stdout, one request at a time. The server starts
it, gives it a private copy of a binary it has already opened and checked (`open`), and asks
for procedures (from angr's CFGFast, built once in the background from `open` on) and for
pseudo-C (`decompile`). Addresses on the wire are the file's linked addresses in canonical
form (`0x`, lowercase, no leading zeros): angr maps position-independent binaries at 0x400000,
so every address is translated both ways.

Bounds: every request that needs the CFG waits for it at most its `timeout_ms`; the CFG itself
is bounded by --cfg-timeout (default 120 s), after which the adapter answers and exits (the
server starts a new one on the next call); `decompile` is stopped by a timer at `timeout_ms`
and answers `complete: false`. The server kills the process if it does not answer in time.
A failure that comes from the address-space limit the server set (`RLIMIT_AS`: a
MemoryError, a library that cannot be mapped, which z3 reports as "libz3.so not found") is
answered as error -32006 naming the limit, and the adapter exits.
"""

import argparse
import json
import logging
import mmap
import os
import resource
import signal
import sys
import threading
import time

PROTOCOL = 1

UNKNOWN_DOCUMENT = -32001
NO_PROCEDURE = -32002
INVALID_CURSOR = -32003
NOT_READY = -32004
CFG_FAILED = -32005
OUT_OF_MEMORY = -32006
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
FAILED = -32000

MAX_WARNINGS = 100
MAX_WARNING_CHARS = 1000
MAX_NAME_CHARS = 256
MAX_PAGE = 10000

# angr's messages that mean the pseudo-C misses code or is wrong.
INCOMPLETE_MARKERS = (
    "Structuring failed",
    "will miss code blocks",
    "output will be wrong",
)


# What a failure that comes from the address-space limit says; a library whose mapping fails
# may also say nothing of it (z3: "libz3.so not found"), hence the probe below.
MEMORY_MARKERS = ("Cannot allocate memory", "failed to map segment", "bad_alloc", "out of memory")

# A failure while less than this much address space is left is the limit's.
PROBE_BYTES = 64 << 20


def memory_limit():
    """The address-space limit in bytes, or None when there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def out_of_memory(error):
    """Whether `error` comes from the address-space limit."""
    if memory_limit() is None:
        return False
    seen, depth = error, 0
    while seen is not None and depth < 16:
        if isinstance(seen, MemoryError) or any(m in str(seen) for m in MEMORY_MARKERS):
            return True
        seen, depth = seen.__cause__ or seen.__context__, depth + 1
    try:
        probe = mmap.mmap(-1, PROBE_BYTES)
    except (OSError, ValueError, MemoryError):
        return True
    probe.close()
    return False


def memory_error(error):
    """The answer to a failure that comes from the address-space limit: what failed (the
    code says why, and the server names the limit)."""
    text = str(error)
    return AdapterError(OUT_OF_MEMORY, f"{type(error).__name__}: {text}" if text else type(error).__name__)


class AdapterError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class TimeBound(BaseException):
    """Raised by the timer in the main thread. A BaseException, so the `except Exception`
    handlers inside angr's analyses do not swallow it."""


class Collector(logging.Handler):
    """Keeps the warnings and errors angr logs while a call runs."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        if len(self.records) < MAX_WARNINGS:
            try:
                text = record.getMessage()
            except Exception:  # a message whose arguments do not format
                text = str(record.msg)
            self.records.append(clean(f"{record.levelname}: {text}", MAX_WARNING_CHARS))


def clean(text, limit):
    """Text without control characters but tab and newline, at most `limit` characters."""
    text = "".join(c if c in "\t\n" or (ord(c) >= 0x20 and ord(c) != 0x7F) else " " for c in text)
    # C1 controls too.
    text = "".join(c if not (0x80 <= ord(c) <= 0x9F) else " " for c in text)
    return text[:limit]


class Binary:
    def __init__(self, angr, path, document, cfg_timeout):
        self.angr = angr
        self.document = document
        self.project = angr.Project(path, auto_load_libs=False, load_debug_info=False)
        main = self.project.loader.main_object
        self.linked_base = main.linked_base
        self.mapped_base = main.mapped_base
        self.main = main
        self.cfg = None
        self.cfg_error = None
        self.cfg_out_of_memory = None
        self.cfg_done = threading.Event()
        self.cfg_started = time.monotonic()
        self.cfg_timeout = cfg_timeout
        self.functions = None
        threading.Thread(target=self._build_cfg, name="cfg", daemon=True).start()

    def _build_cfg(self):
        try:
            cfg = self.project.analyses.CFGFast(normalize=True, data_references=True)
            self.cfg = cfg
            self.functions = sorted(
                (f for f in cfg.kb.functions.values() if self._listed(f)),
                key=lambda f: f.addr,
            )
        except Exception as error:  # angr failures are reported, never raised
            self.cfg_error = f"{type(error).__name__}: {error}"
            if out_of_memory(error):
                self.cfg_out_of_memory = error
        finally:
            self.cfg_done.set()

    def _listed(self, function):
        if function.is_simprocedure or function.is_syscall:
            return False
        return self.main.min_addr <= function.addr <= self.main.max_addr

    def to_file(self, address):
        return address - self.mapped_base + self.linked_base

    def to_angr(self, address):
        return address - self.linked_base + self.mapped_base

    def wait_cfg(self, timeout_ms):
        """Waits for the CFG at most `timeout_ms`; raises when it is not there."""
        left = self.cfg_timeout - (time.monotonic() - self.cfg_started)
        wait = max(0.0, min(timeout_ms / 1000.0, left))
        self.cfg_done.wait(wait)
        if not self.cfg_done.is_set():
            if time.monotonic() - self.cfg_started >= self.cfg_timeout:
                raise AdapterError(
                    CFG_FAILED,
                    f"angr's CFG did not finish within {self.cfg_timeout:g} s; the adapter stops",
                )
            raise AdapterError(
                NOT_READY,
                f"angr's CFG is still being built ({time.monotonic() - self.cfg_started:.1f} s so far); ask again later",
            )
        if self.cfg_out_of_memory is not None:
            raise memory_error(self.cfg_out_of_memory)
        if self.cfg_error is not None:
            raise AdapterError(CFG_FAILED, f"angr's CFG failed: {self.cfg_error}")
        return self.cfg

    def name(self, function):
        if getattr(function, "is_default_name", False) or function.name is None:
            return None
        name = function.name
        if function.is_plt:
            name = f"{name}@plt"
        return clean(name, MAX_NAME_CHARS)

    def function_at(self, address, timeout_ms):
        self.wait_cfg(timeout_ms)
        function = self.cfg.kb.functions.function(addr=self.to_angr(address))
        if function is None or not self._listed(function):
            raise AdapterError(NO_PROCEDURE, f"no procedure starts at {hex(address)}")
        return function

    def rename(self, names):
        """Gives each function that starts at one of `names`' addresses (file addresses) the
        investigator's name; returns (function, its name before) to restore afterwards."""
        renamed = []
        for address, name in names:
            function = self.cfg.kb.functions.function(addr=self.to_angr(address))
            if function is not None and function.name != name:
                renamed.append((function, function.name))
                function.name = name
        return renamed

    def segment(self, address):
        section = self.project.loader.find_section_containing(address)
        if section is not None and section.name:
            return clean(section.name, MAX_NAME_CHARS)
        segment = self.project.loader.find_segment_containing(address)
        return None if segment is None else "segment"


def address_param(params, name="address"):
    text = params.get(name)
    if not isinstance(text, str) or not text.startswith("0x"):
        raise AdapterError(INVALID_PARAMS, f"`{name}` must be a 0x address")
    try:
        return int(text[2:], 16)
    except ValueError:
        raise AdapterError(INVALID_PARAMS, f"`{name}` must be a 0x address") from None


MAX_NAMES = 1024


def names_param(params):
    """The optional `names` of `decompile`: [(file address, name)], each checked."""
    names = params.get("names", [])
    if not isinstance(names, list) or len(names) > MAX_NAMES:
        raise AdapterError(INVALID_PARAMS, f"`names` must be a list of at most {MAX_NAMES} entries")
    checked = []
    for entry in names:
        if not isinstance(entry, dict):
            raise AdapterError(INVALID_PARAMS, "each of `names` must be an object")
        name = entry.get("name")
        if not isinstance(name, str) or not name or len(name) > MAX_NAME_CHARS:
            raise AdapterError(INVALID_PARAMS, f"`names[].name` must be 1 to {MAX_NAME_CHARS} characters")
        checked.append((address_param(entry), name))
    return checked


def timeout_param(params):
    value = params.get("timeout_ms", 30000)
    if not isinstance(value, int) or value < 0:
        raise AdapterError(INVALID_PARAMS, "`timeout_ms` must be a non-negative integer")
    return value


class Adapter:
    def __init__(self, cfg_timeout):
        self.cfg_timeout = cfg_timeout
        self.binary = None
        self.angr = None
        self.stop_after_answer = False

    def load_angr(self):
        if self.angr is None:
            import angr  # 0.5 to 0.8 s

            logging.getLogger("angr").setLevel(logging.WARNING)
            self.angr = angr
        return self.angr

    def binary_for(self, params):
        if self.binary is None:
            raise AdapterError(FAILED, "no binary is open: `open` comes first")
        document = params.get("document")
        if document != self.binary.document:
            raise AdapterError(UNKNOWN_DOCUMENT, "no document by that name")
        return self.binary

    def documents(self):
        binary = self.binary
        arch = binary.project.arch.name.lower()
        architecture = {"amd64": "x86_64", "x86": "i386", "aarch64": "arm64"}.get(arch, arch)
        fmt = type(binary.main).__name__.lower()
        fmt = {"elf": "elf", "pe": "pe", "machoe": "macho", "macho": "macho"}.get(fmt, fmt)
        return {"documents": [{"name": binary.document, "format": fmt, "architecture": architecture}]}

    def describe(self, params):
        angr = self.load_angr()
        return {
            "name": "angr",
            "version": angr.__version__,
            "protocol": PROTOCOL,
            "operations": ["list_documents", "list_procedures", "procedure_info", "decompile"],
        }

    def open(self, params):
        path, document = params.get("path"), params.get("document")
        if not isinstance(path, str) or not isinstance(document, str) or not document:
            raise AdapterError(INVALID_PARAMS, "`path` and `document` must be strings")
        angr = self.load_angr()
        try:
            self.binary = Binary(angr, path, document, self.cfg_timeout)
        except Exception as error:
            if out_of_memory(error):
                raise memory_error(error) from None
            raise AdapterError(FAILED, f"angr cannot load the binary: {type(error).__name__}: {error}") from None
        return self.documents()

    def list_documents(self, params):
        if self.binary is None:
            return {"documents": []}
        return self.documents()

    def list_procedures(self, params):
        binary = self.binary_for(params)
        limit = params.get("limit", 1000)
        if not isinstance(limit, int) or limit < 1:
            raise AdapterError(INVALID_PARAMS, "`limit` must be a positive integer")
        limit = min(limit, MAX_PAGE)
        cursor = params.get("cursor")
        binary.wait_cfg(timeout_param(params))
        functions = binary.functions
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.isdigit() or str(int(cursor)) != cursor:
                raise AdapterError(INVALID_CURSOR, "not a cursor of this listing")
            start = int(cursor)
            if not 0 < start < len(functions):
                raise AdapterError(INVALID_CURSOR, "not a cursor of this listing")
        page = functions[start:start + limit]
        end = start + len(page)
        return {
            "procedures": [
                {"address": hex(binary.to_file(f.addr)), "name": binary.name(f)} for f in page
            ],
            "next_cursor": str(end) if end < len(functions) else None,
        }

    def procedure_info(self, params):
        binary = self.binary_for(params)
        address = address_param(params)
        function = binary.function_at(address, timeout_param(params))
        return {
            "address": hex(address),
            "name": binary.name(function),
            "size": function.size if function.size else None,
            "segment": binary.segment(function.addr),
        }

    def decompile(self, params):
        binary = self.binary_for(params)
        address = address_param(params)
        timeout_ms = timeout_param(params)
        max_chars = params.get("max_chars", 40000)
        if not isinstance(max_chars, int) or max_chars < 1:
            raise AdapterError(INVALID_PARAMS, "`max_chars` must be a positive integer")
        names = names_param(params)
        started = time.monotonic()
        function = binary.function_at(address, timeout_ms)
        left = timeout_ms / 1000.0 - (time.monotonic() - started)
        own_name = binary.name(function)
        # The investigator's names replace angr's for this decompilation only.
        renamed = binary.rename(names)
        collector = Collector()
        logger = logging.getLogger("angr")
        logger.addHandler(collector)
        code, complete, reason = "", True, None
        previous = signal.signal(signal.SIGALRM, _time_bound)
        try:
            if left <= 0:
                raise TimeBound()
            signal.setitimer(signal.ITIMER_REAL, left)
            # With names, angr's cache (keyed without them) must neither answer nor learn.
            cached = not renamed
            decompiler = binary.project.analyses.Decompiler(
                function, cfg=binary.cfg.model, use_cache=cached, update_cache=cached
            )
            signal.setitimer(signal.ITIMER_REAL, 0)
            if time.monotonic() - started > timeout_ms / 1000.0:
                raise TimeBound()
            if decompiler.codegen is None or decompiler.codegen.text is None:
                complete, reason = False, "angr produced no pseudo-C for this procedure"
            else:
                code = decompiler.codegen.text
        except TimeBound:
            complete = False
            reason = f"the time bound ({timeout_ms / 1000.0:g} s) stopped the decompiler"
        except Exception as error:
            if out_of_memory(error):
                raise memory_error(error) from None
            complete = False
            reason = clean(f"angr's decompiler failed: {type(error).__name__}: {error}", 1000)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            logger.removeHandler(collector)
            for renamed_function, original in renamed:
                renamed_function.name = original
        warnings = collector.records
        if complete and any(m in w for w in warnings for m in INCOMPLETE_MARKERS):
            complete = False
            reason = "angr reported that the output misses code or is wrong (see warnings)"
        code = clean(code, len(code))
        if len(code) > max_chars:
            code = code[:max_chars]
            if complete:
                complete = False
                reason = f"the output was cut to {max_chars} characters (max_chars)"
        return {
            "address": hex(address),
            "name": own_name,
            "code": code,
            "warnings": warnings,
            "complete": complete,
            "reason": reason,
        }

    def close(self, params):
        self.binary = None
        self.stop_after_answer = True
        return {}


def _time_bound(signum, frame):
    raise TimeBound()


METHODS = ("describe", "open", "list_documents", "list_procedures", "procedure_info", "decompile", "close")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cfg-timeout", type=float, default=120.0)
    args = parser.parse_args()
    # The protocol owns the real stdout; anything else printed (by angr or a C library) goes
    # to stderr, which the server logs.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(stream=sys.stderr, level=logging.ERROR)
    adapter = Adapter(args.cfg_timeout)
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or "id" not in request:
            continue
        method = request.get("method")
        params = request.get("params") or {}
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            if method not in METHODS or not isinstance(params, dict):
                raise AdapterError(METHOD_NOT_FOUND, f"no method {str(method)[:64]}")
            answer["result"] = getattr(adapter, method)(params)
        except AdapterError as error:
            answer["error"] = {"code": error.code, "message": clean(error.message, 4000)}
            if error.code in (CFG_FAILED, OUT_OF_MEMORY):
                adapter.stop_after_answer = True
        except Exception as error:  # anything else is reported, never a crash
            if out_of_memory(error):
                error = memory_error(error)
                answer["error"] = {"code": error.code, "message": clean(error.message, 4000)}
                adapter.stop_after_answer = True
            else:
                answer["error"] = {"code": FAILED, "message": clean(f"{type(error).__name__}: {error}", 4000)}
        protocol.write(json.dumps(answer, ensure_ascii=False) + "\n")
        protocol.flush()
        if adapter.stop_after_answer:
            os._exit(0)


if __name__ == "__main__":
    main()
