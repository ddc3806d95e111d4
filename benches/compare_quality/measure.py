#!/usr/bin/env python3
"""Quality of `compare_procedures` on real releases (issue 32, item 2).

For each pair of releases of a C library whose sources a PyPI sdist bundles, this script:

1. downloads both sdists with `pip download` into `target/compare-quality/`;
2. compiles the bundled C sources at -O2, once per release, and keeps an unstripped copy (the
   ground truth) and a stripped one (what rea compares);
3. starts the release `rea serve --store memory` over stdio, opens both stripped binaries with
   `open_binary` and reads every page of `compare_procedures`, as a client would;
4. scores the matched pairs against the unstripped symbol tables (read with `readelf`, not rea),
   and the `changed` set against two independent truths: the function's code (`objdump`
   disassembly with every address masked) and its source (the function's text as
   universal-ctags delimits it).

Definitions (also in the README):
- a true pair is a function name that names exactly one function on each side;
- a matched pair is correct when both addresses carry the same name; a pair whose baseline
  name is a true pair's and whose candidate name differs, or whose baseline function is in the
  baseline only, is wrong; pairs of addresses without a unique name are not scored;
- precision = correct / scored pairs; recall = correct / true pairs;
- the required changed set is the true pairs whose source text changed and whose masked
  disassembly changed; rea meets it when each of them is a correct pair with status `changed`.

Usage: python3 benches/compare_quality/measure.py [--rea target/release/rea] [--cc clang]
Needs: pip, cc, strip, readelf, objdump (binutils), ctags (universal-ctags).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "target", "compare-quality")

# Each pair: a PyPI package, its two releases (the bundled C library's versions in the label),
# the C files to compile relative to the unpacked sdist, include folders, and what to build.
PAIRS = [
    {
        "label": "lz4 1.9.3 -> 1.9.4 (python-lz4 3.1.10 -> 4.3.3), shared library",
        "package": "lz4",
        "releases": ("3.1.10", "4.3.3"),
        "sources": ["lz4libs/lz4.c", "lz4libs/lz4hc.c", "lz4libs/lz4frame.c", "lz4libs/xxhash.c"],
        "include": ["lz4libs"],
        "kind": "shared",
    },
    {
        "label": "zstd 1.5.2 -> 1.5.5 (zstandard 0.19.0 -> 0.22.0), shared library",
        "package": "zstandard",
        "releases": ("0.19.0", "0.22.0"),
        "sources": ["zstd/zstd*.c"],
        "include": ["zstd"],
        "kind": "shared",
        "defines": ["ZSTD_DISABLE_ASM"],
    },
    {
        "label": "brotli 1.0.9 -> 1.1.0 (Brotli 1.0.9 -> 1.1.0), the brotli executable",
        "package": "brotli",
        "releases": ("1.0.9", "1.1.0"),
        "sources": ["c/common/*.c", "c/dec/*.c", "c/enc/*.c", "c/tools/brotli.c"],
        "include": ["c/include"],
        "kind": "executable",
        "libs": ["-lm"],
    },
]


def run(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout


def fetch(package, release, into):
    """Downloads and unpacks one sdist; answers the unpacked folder."""
    folder = os.path.join(into, f"{package}-{release}")
    if os.path.isdir(folder):
        return folder
    downloads = os.path.join(into, "downloads")
    os.makedirs(downloads, exist_ok=True)
    run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps",
         "-q", "-d", downloads, f"{package}=={release}"])
    archive = next(
        path for path in glob.glob(os.path.join(downloads, "*"))
        if os.path.basename(path).lower().startswith(f"{package.lower()}-{release}.")
    )
    staging = folder + ".unpack"
    shutil.rmtree(staging, ignore_errors=True)
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(staging)
    else:
        with tarfile.open(archive) as tarred:
            tarred.extractall(staging, filter="data")
    (inner,) = os.listdir(staging)
    os.rename(os.path.join(staging, inner), folder)
    os.rmdir(staging)
    return folder


def build(pair, source, out, cc="cc", exported=False):
    """Compiles one release at -O2 with `cc`; answers (unstripped, stripped, C files). A shared
    library is built with `-fvisibility=hidden` (only the API its headers mark stays in the
    dynamic symbol table after `strip`) unless `exported`: then every function that is not
    static keeps its name there, as in a library built without the flag."""
    files = sorted(f for pattern in pair["sources"] for f in glob.glob(os.path.join(source, pattern)))
    if not files:
        raise SystemExit(f"no sources in {source} for {pair['sources']}")
    binary = os.path.join(out, "unstripped")
    command = [cc, "-O2", "-w"]
    command += [f"-I{os.path.join(source, folder)}" for folder in pair["include"]]
    command += [f"-D{define}" for define in pair.get("defines", [])]
    if pair["kind"] == "shared":
        # Hidden visibility: no exported names survive `strip`, so no pair comes from a name.
        command += ["-shared", "-fPIC"] + ([] if exported else ["-fvisibility=hidden"])
    command += files + ["-o", binary] + pair.get("libs", [])
    os.makedirs(out, exist_ok=True)
    run(command)
    stripped = os.path.join(out, "stripped")
    run(["strip", "-o", stripped, binary])
    return binary, stripped, files


# GCC's specialised clones of one source function: `f.constprop.0`, `f.isra.0` (and both) are
# `f` with arguments propagated or split; which clones a release gets is the compiler's choice,
# so the truth names a clone by its function. Outlined pieces (`.part.N`, `.cold`) stay apart.
CLONE = re.compile(r"(\.(constprop|isra)\.\d+)+")


def source_function(name, strict):
    return name if strict else CLONE.sub("", name)


def functions(binary, strict=False):
    """address -> names of the FUNC symbols of .symtab (readelf), and name -> addresses."""
    by_address, by_name = defaultdict(set), defaultdict(set)
    for line in run(["readelf", "-sW", binary]).splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[3] != "FUNC" or fields[6] == "UND":
            continue
        if not fields[0].endswith(":"):
            continue
        address, size = int(fields[1], 16), int(fields[2])
        name = source_function(fields[7].split("@")[0], strict)
        if size == 0:
            continue
        by_address[address].add(name)
        by_name[name].add(address)
    return by_address, by_name


# The disassembler and its options; `probe.py --objdump` sets another for other machines.
OBJDUMP = ["objdump", "-M", "intel"]

ADDRESS_FIELDS = [
    (re.compile(r"<([^>+]+)(\+0x[0-9a-f]+)?>"), r"<\1>"),       # <symbol+offset> -> <symbol>
    (re.compile(r"#\s+(0x)?[0-9a-f]+\s*(<[^>]*>)?"), "#ADDR"),    # rip-relative comments (not AArch64 immediates: #16)
    (re.compile(r"\[rip\+0x[0-9a-f]+\]"), "[rip+ADDR]"),
    (re.compile(r"\b[0-9a-f]{4,}\b(?=\s*<)"), "ADDR"),             # call/jmp 401136 <...>
    (re.compile(r"\b0x[0-9a-f]+(?=\s*<)"), "ADDR"),                # llvm-objdump: 0x401136 <...>
]


def disassembly(binary, names):
    """name -> the masked instruction text of each function (objdump), for unique names."""
    listing = run([*OBJDUMP, "-d", "--no-show-raw-insn", binary])
    bodies, current, raw = {}, None, None
    for line in listing.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            raw = header.group(1)
            current = source_function(raw, False)
            bodies[current] = []
            continue
        if current is None:
            continue
        parts = line.split("\t", 1)
        if len(parts) != 2 or not parts[0].strip().endswith(":"):
            continue
        text = parts[1].strip()
        if not text or text.startswith("nop") or text in ("int3", "xchg   ax,ax"):
            continue
        if text.startswith("cs nop") or text.startswith("data16"):
            continue
        for pattern, replacement in ADDRESS_FIELDS:
            text = pattern.sub(replacement, text)
        # The callee's name stays (its clone suffix does not); a jump inside is an address.
        text = text.replace(f"<{raw}>", "<self>")
        bodies[current].append(" ".join(CLONE.sub("", text).split()))
    return {name: "\n".join(body) for name, body in bodies.items() if name in names}


def source_texts(files):
    """name -> whitespace-collapsed text of each C function definition (universal-ctags)."""
    texts, seen = {}, Counter()
    if not files:
        return texts
    output = run(["ctags", "--output-format=json", "--fields=+ne", "--kinds-C=f", "-f", "-"]
                 + files)
    cache = {}
    for line in output.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        path = tag["path"]
        if path not in cache:
            with open(path, encoding="latin-1") as handle:
                cache[path] = handle.read().splitlines()
        body = cache[path][tag["line"] - 1: tag["end"]]
        seen[tag["name"]] += 1
        texts[tag["name"]] = " ".join(" ".join(body).split())
    return {name: text for name, text in texts.items() if seen[name] == 1}


class Server:
    """`rea serve` over stdio, one request at a time."""

    def __init__(self, rea):
        self.process = subprocess.Popen(
            [rea, "serve", "--store", "memory"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "compare-quality", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return answer["result"]

    def tool(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"{name}: {result['content'][0]['text']}")
        return result["structuredContent"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def compare(server, baseline, candidate):
    """Every page of compare_procedures: (matched, only_in_baseline, only_in_candidate, seconds,
    first page's result)."""
    left = server.tool("open_binary", {"path": baseline})["session"]
    right = server.tool("open_binary", {"path": candidate})["session"]
    matched, only_b, only_c, cursor, first, seconds = [], [], [], None, None, 0.0
    while True:
        arguments = {"baseline": left, "candidate": right, "limit": 500, "timeout_secs": 300}
        if cursor:
            arguments["cursor"] = cursor
        started = time.perf_counter()
        page = server.tool("compare_procedures", arguments)
        seconds += time.perf_counter() - started
        first = first or page
        matched += page["matched"]
        only_b += page["only_in_baseline"]
        only_c += page["only_in_candidate"]
        cursor = page["next_cursor"]
        if not cursor:
            # The server keeps at most 8 sessions open: a longer list of pairs needs them back.
            server.tool("close_binary", {"session": left})
            server.tool("close_binary", {"session": right})
            return matched, only_b, only_c, seconds, first


def score(pair, versions, result, strict=False):
    (base_bin, _, base_files), (cand_bin, _, cand_files) = versions
    matched, only_b, _, seconds, first = result
    base_at, base_names = functions(base_bin, strict)
    cand_at, cand_names = functions(cand_bin, strict)
    unique_b = {n for n, a in base_names.items() if len(a) == 1 and len(base_at[next(iter(a))]) == 1}
    unique_c = {n for n, a in cand_names.items() if len(a) == 1 and len(cand_at[next(iter(a))]) == 1}
    true_pairs = unique_b & unique_c
    name_b = {next(iter(base_names[n])): n for n in unique_b}
    name_c = {next(iter(cand_names[n])): n for n in unique_c}

    correct, wrong, unscored, signals = set(), [], [], Counter()
    changed_correct, identical_correct = set(), set()
    for entry in matched:
        b, c = int(entry["baseline"], 16), int(entry["candidate"], 16)
        nb, nc = name_b.get(b), name_c.get(c)
        if nb is None:
            unscored.append(sorted(base_at.get(b, [])) or hex(b))
            continue
        if nb in true_pairs and nc == nb:
            correct.add(nb)
            signals[entry["signal"]] += 1
            (changed_correct if entry["status"] == "changed" else identical_correct).add(nb)
        elif nb in true_pairs or nb not in cand_names:
            wrong.append((nb, nc, entry["signal"], entry["similarity"]))
        else:
            unscored.append(nb)
    scored = len(correct) + len(wrong)
    precision = len(correct) / scored if scored else 1.0
    recall = len(correct) / len(true_pairs) if true_pairs else 1.0

    if strict:
        return {"precision": round(precision, 4), "recall": round(recall, 4),
                "true_pairs": len(true_pairs), "correct": len(correct), "wrong": len(wrong)}
    code_b, code_c = disassembly(base_bin, true_pairs), disassembly(cand_bin, true_pairs)
    code_changed = {n for n in true_pairs if code_b.get(n) != code_c.get(n)}
    text_b, text_c = source_texts(base_files), source_texts(cand_files)
    source_changed = {n for n in true_pairs if n in text_b and n in text_c and text_b[n] != text_c[n]}
    required = source_changed & code_changed
    missing = sorted(required - changed_correct)
    identical_but_code_changed = sorted(identical_correct & code_changed)
    return {
        "pair": pair["label"],
        "procedures": [first["baseline"]["procedures"], first["candidate"]["procedures"]],
        "true_pairs": len(true_pairs),
        "matched": len(matched),
        "scored": scored,
        "correct": len(correct),
        "wrong": len(wrong),
        "unscored": len(unscored),
        "unscored_examples": unscored[:8],
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "signals": dict(sorted(signals.items())),
        "code_changed": len(code_changed),
        "source_changed": len(source_changed),
        "required_changed": len(required),
        "required_reported_changed": len(required) - len(missing),
        "missing_from_changed": missing,
        "reported_identical_but_code_changed": identical_but_code_changed,
        "reported_changed_but_code_same": len(changed_correct - code_changed),
        "seconds_all_pages": round(seconds, 2),
        "wrong_examples": wrong,
        "missed": sorted(true_pairs - correct),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rea", default=os.path.join(ROOT, "target", "release", "rea"))
    parser.add_argument("--only", help="a substring of the pair labels to run")
    parser.add_argument("--cc", default="cc",
                        help="the C compiler (`clang` builds into build-clang/)")
    parser.add_argument("--exported", action="store_true",
                        help="shared libraries without -fvisibility=hidden: every function that "
                             "is not static keeps its name (builds into build-exported/)")
    arguments = parser.parse_args()
    if not os.path.exists(arguments.rea):
        raise SystemExit(f"{arguments.rea}: build it first (cargo build --release)")
    reports = []
    server = Server(arguments.rea)
    try:
        for pair in PAIRS:
            if arguments.only and arguments.only not in pair["label"]:
                continue
            versions = []
            for release in pair["releases"]:
                source = fetch(pair["package"], release, WORK)
                folder = "build" if arguments.cc == "cc" else f"build-{os.path.basename(arguments.cc)}"
                folder += "-exported" if arguments.exported else ""
                out = os.path.join(WORK, folder, f"{pair['package']}-{release}")
                versions.append(build(pair, source, out, arguments.cc, arguments.exported))
            result = compare(server, versions[0][1], versions[1][1])
            report = score(pair, versions, result)
            report["exact_symbol_names"] = score(pair, versions, result, strict=True)
            reports.append(report)
            print(json.dumps(report, indent=1), flush=True)
    finally:
        server.close()
    failed = [r["pair"] for r in reports
              if r["precision"] < 0.98 or r["recall"] < 0.90 or r["missing_from_changed"]]
    print("\ntargets (precision >= 0.98, recall >= 0.90, required changed set contained):",
          "met" if not failed else f"missed on {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
