#!/usr/bin/env python3
"""Generated pairs of programs with known changes, for `compare_procedures` (issue 32).

`measure.py` scores real releases, whose truth is only as good as their names. This script
writes the truth itself: for each seed it generates a C program of random functions (loops,
tables, strings, switches, calls), then a second version with functions added, removed,
renamed, changed and moved (the definitions shuffled), builds both with each compiler and
optimisation level asked for, strips them, compares them through `rea serve` as a client
would, and scores the pairs against the symbols it wrote:

- a true pair is a function kept (changed or not, renamed or not) that both unstripped
  binaries carry under one address each (a function inlined everywhere has no symbol);
- precision = correct pairs / pairs whose baseline function has a symbol; recall = correct
  pairs / true pairs;
- `changed` is judged against the masked disassembly (as `measure.py` does), with renamed
  callees mapped back: a pair whose code differs must be `changed`, one whose code is the same
  should be `identical`.

Usage: python3 benches/compare_quality/probe.py [--rea BIN] [--seeds 1-8] [--cc cc,clang]
       [--opt O0,O1,O2,O3,Os] [--functions 60] [--show]
       [--cflags FLAGS] [--strip PROGRAM] [--objdump "PROGRAM OPTIONS"] [--got-relative]

Other machines and builds: `--cflags` adds compiler flags to every build (`-static`,
`-fPIC -shared`); a `--target=` (or `-m32`) among them builds for another machine without its
C library (the programs then declare `printf` instead of including `stdio.h`; link with
`-shared -nostdlib -fuse-ld=lld`), and `--strip llvm-strip --objdump llvm-objdump` read it.
`--got-relative` masks in the code truth what 32-bit x86 position-independent code addresses
relative to the GOT, which moves with the layout: the distance added after the call that
gets the program counter, and every displacement off a register other than `esp` (the
generated programs have no structures, so at -O1 and above no other displacement is in
them); it also leaves out the padding GNU objdump shows as `lea esi,[esi+eiz*1+0x0]`.
"""

import argparse
import copy
import os
import random
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

WORK = os.path.join(measure.ROOT, "target", "compare-quality", "probe")
GOT_RELATIVE = False
REGISTER = r"e(?:ax|bx|cx|dx|si|di|bp)"
DISPLACEMENT = re.compile(r"\[(" + REGISTER + r")((?:\+" + REGISTER + r"\*\d)?)[+-]0x[0-9a-f]+\]")
GOT_DISTANCE = re.compile(r"^add " + REGISTER + r",0x[0-9a-f]+$")
# `lea esi,[esi+eiz*1+0x0]`: the padding GNU objdump shows so in 32-bit code.
PADDING = re.compile(r"^lea (" + REGISTER + r"),\[\1(?:\+eiz\*1)?\+0x0\]$")


def got_relative(body):
    """`body` (measure.disassembly's text, GNU objdump) with its GOT-relative fields masked
    and its padding left out."""
    lines = []
    for line in body.split("\n"):
        if PADDING.match(line):
            continue
        gets_pc = lines and ("get_pc_thunk" in lines[-1]
                             or (lines[-1].startswith("pop") and len(lines) > 1
                                 and lines[-2].startswith("call")))
        if gets_pc and GOT_DISTANCE.match(line):
            line = line.rsplit(",", 1)[0] + ",GOT"
        line = re.sub(r"<\.L\w+>", "<.L>", line)
        lines.append(DISPLACEMENT.sub(lambda m: f"[{m.group(1)}{m.group(2)}+DISP]", line))
    return "\n".join(lines)

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray").split()


class Function:
    """One generated function: its name, whether it is static, and its statements."""

    def __init__(self, name, static, statements, table):
        self.name, self.static, self.statements, self.table = name, static, statements, table

    def text(self, rename):
        body = "\n".join("    " + s for s in self.statements)
        for old, new in rename.items():
            body = re.sub(rf"\b{old}\b", new, body)
        name = rename.get(self.name, self.name)
        storage = "static " if self.static else ""
        table = ""
        if self.table:
            table = f"static const long {name}_table[] = {{{', '.join(map(str, self.table))}}};\n"
            body = body.replace(f"{self.name}_table", f"{name}_table")
        return f"{table}{storage}long {name}(long a, long b) {{\n    long x = a;\n{body}\n    return x;\n}}\n"


def statement(rng, callees, name, has_table):
    kind = rng.choice(["arith", "arith", "loop", "branch", "call", "call", "string", "switch",
                       "table" if has_table else "arith"])
    k = lambda: rng.choice([rng.randrange(2, 40), rng.randrange(100, 100000)])
    op = lambda: rng.choice(["+", "-", "^", "|", "*"])
    if kind == "arith":
        return f"x = (x {op()} {k()}) {op()} (b >> {rng.randrange(1, 9)});"
    if kind == "loop":
        return (f"for (long i = 0; i < (b & {rng.randrange(3, 63)}); i++) "
                f"x = x * {k()} {op()} (x >> {rng.randrange(1, 13)});")
    if kind == "branch":
        return f"if (x > {k()}) x -= {k()}; else x {op()}= b + {k()};"
    if kind == "call" and callees:
        return f"x {op()}= {rng.choice(callees)}(x, b + {k()});"
    if kind == "string":
        words = " ".join(rng.choice(WORDS) for _ in range(3))
        return (f"if ((x & {rng.randrange(7, 255)}) == {rng.randrange(0, 7)}) "
                f"sink_text(\"{words} {rng.randrange(1000)}: %ld\", x);")
    if kind == "switch":
        cases = " ".join(f"case {c}: x {op()}= {k()}; break;" for c in rng.sample(range(12), 5))
        return f"switch (x & 15) {{ {cases} default: x += b; }}"
    if kind == "table":
        return f"x += {name}_table[(unsigned long)x % (sizeof {name}_table / sizeof *{name}_table)];"
    return f"x = x * {k()} + b;"


def generate(rng, count, names):
    functions = []
    for index in range(count):
        name = names.pop()
        callees = [f.name for f in functions[-12:]]
        table = [rng.randrange(-1000, 100000) for _ in range(rng.randrange(4, 12))] \
            if rng.random() < 0.2 else None
        size = rng.choice([1, 2, 3, 4, 6, 8, 12])
        statements = [statement(rng, callees, name, table is not None) for _ in range(size)]
        functions.append(Function(name, rng.random() < 0.3, statements, table))
    return functions


def change(rng, function, callees):
    """Mutates one function in place the way an edit would: a constant, a statement more, or
    a statement less."""
    what = rng.choice(["constant", "insert", "delete"] if len(function.statements) > 1
                      else ["constant", "insert"])
    if what == "constant":
        index = rng.randrange(len(function.statements))
        # Not a case label: two cases of one value do not compile.
        numbers = list(re.finditer(r"(?<!case )\b\d+\b", function.statements[index]))
        if numbers:
            m = rng.choice(numbers)
            s = function.statements[index]
            function.statements[index] = s[:m.start()] + str(int(m.group()) + rng.randrange(1, 9)) + s[m.end():]
            return
    if what == "delete":
        del function.statements[rng.randrange(len(function.statements))]
        return
    function.statements.insert(rng.randrange(len(function.statements) + 1),
                               statement(rng, callees, function.name, function.table is not None))


def program(functions, rename, order):
    lines = ["#include <stdio.h>", "volatile long sink;",
             "__attribute__((noinline)) void sink_text(const char *format, long x) { sink += printf(format, x); }"]
    for f in functions:
        name = rename.get(f.name, f.name)
        lines.append(f"{'static ' if f.static else ''}long {name}(long a, long b);")
    for index in order:
        lines.append(functions[index].text(rename))
    calls = " ".join(f"sink += {rename.get(f.name, f.name)}(argc, {i});" for i, f in enumerate(functions))
    lines.append(f"int main(int argc, char **argv) {{ (void)argv; {calls} return 0; }}")
    return "\n".join(lines) + "\n"


def versions(seed, count):
    """(baseline source, candidate source, truth): truth maps each kept baseline name to its
    candidate name, and lists what was changed, added and removed."""
    rng = random.Random(seed)
    names = [f"{a}_{b}_{i}" for i, (a, b) in enumerate(zip(rng.sample(WORDS * 40, 400),
                                                            rng.sample(WORDS * 40, 400)))]
    rng.shuffle(names)
    base = generate(rng, count, names)
    cand = copy.deepcopy(base)
    removed = set(f.name for f in rng.sample(cand[1:], count // 12))
    # A removed function's calls become a constant in its callers: they change too.
    for f in cand if removed else []:
        f.statements = [re.sub(rf"\b({'|'.join(removed)})\(x, b \+ (\d+)\)", r"(x + \2)", s)
                        for s in f.statements]
    cand = [f for f in cand if f.name not in removed]
    changed = set()
    for f in rng.sample(cand, count // 8):
        change(rng, f, [g.name for g in cand if g is not f][:12])
        changed.add(f.name)
    renamed = {f.name: f"renamed_{f.name}" for f in rng.sample(cand, count // 12)}
    cand += generate(rng, count // 12, names)
    order = list(range(len(cand)))
    rng.shuffle(order)
    base_text = program(base, {}, range(len(base)))
    cand_text = program(cand, renamed, order)
    truth = {f.name: renamed.get(f.name, f.name) for f in base if f.name not in removed}
    return base_text, cand_text, truth, renamed


# Extra compiler flags and the strip program (`--cflags`, `--strip`).
CFLAGS, STRIP = [], "strip"


def build(source, out, cc, opt):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "program.c")
    if any(flag.startswith("--target=") or flag == "-m32" for flag in CFLAGS):
        # Another machine's C library headers are not installed: declare what is called.
        source = source.replace("#include <stdio.h>", "int printf(const char *, ...);")
    with open(path, "w") as handle:
        handle.write(source)
    binary = os.path.join(out, "unstripped")
    measure.run([cc, f"-{opt}", "-w", *CFLAGS, path, "-o", binary])
    stripped = os.path.join(out, "stripped")
    measure.run([STRIP, "-o", stripped, binary])
    return binary, stripped


def unique_addresses(binary):
    by_address, by_name = measure.functions(binary)
    return {n: next(iter(a)) for n, a in by_name.items()
            if len(a) == 1 and len(by_address[next(iter(a))]) == 1}, by_address


def probe(server, seed, count, cc, opt, show):
    base_text, cand_text, truth, renamed = versions(seed, count)
    flags = re.sub(r"[^A-Za-z0-9]+", "_", " ".join(CFLAGS)).strip("_")
    folder = os.path.join(WORK, f"{seed}-{cc}-{opt}" + (f"-{flags}" if flags else ""))
    base_bin, base_stripped = build(base_text, os.path.join(folder, "baseline"), cc, opt)
    cand_bin, cand_stripped = build(cand_text, os.path.join(folder, "candidate"), cc, opt)
    matched, _, _, _, _ = measure.compare(server, base_stripped, cand_stripped)
    base_at, base_names = unique_addresses(base_bin)
    cand_at, cand_names = unique_addresses(cand_bin)
    # Functions of the program (not of the C runtime), by name on each side.
    true_pairs = {b: c for b, c in truth.items() if b in base_at and c in cand_at}
    known_base = {base_at[n]: n for n in base_at if n in truth or n not in cand_at}
    cand_name_at = {a: n for n, a in cand_at.items()}
    code_b = measure.disassembly(base_bin, set(true_pairs))
    code_c = measure.disassembly(cand_bin, set(true_pairs.values()))
    for old, new in renamed.items():
        code_c = {n: t.replace(f"<{new}>", f"<{old}>").replace(f"<{new}@plt>", f"<{old}@plt>")
                  for n, t in code_c.items()}
    if GOT_RELATIVE:
        code_b = {n: got_relative(t) for n, t in code_b.items()}
        code_c = {n: got_relative(t) for n, t in code_c.items()}
    correct, wrong, status = 0, [], Counter()
    for entry in matched:
        b, c = int(entry["baseline"], 16), int(entry["candidate"], 16)
        name_b = known_base.get(b)
        if name_b is None:
            continue
        name_c = cand_name_at.get(c) or ",".join(sorted(cand_names.get(c, []))) or hex(c)
        if true_pairs.get(name_b) == name_c:
            correct += 1
            code_changed = code_b.get(name_b) != code_c.get(name_c)
            status[(code_changed, entry["status"])] += 1
            if show and code_changed != (entry["status"] == "changed"):
                print(f"    status {name_b}: code changed {code_changed}, reported {entry['status']}")
        else:
            wrong.append((name_b, name_c, entry["signal"], entry.get("similarity")))
    scored = correct + len(wrong)
    if show:
        added = set(cand_at) - set(true_pairs.values())
        for w in wrong:
            print("    wrong", *w, "(removed" if w[0] not in truth else "(kept",
                  "-> added)" if w[1] in added else "-> kept)")
        paired = {known_base.get(int(e["baseline"], 16)) for e in matched}
        for name in sorted(set(true_pairs) - paired):
            print("    unpaired", name, "->", true_pairs[name])
    return {
        "true": len(true_pairs), "correct": correct, "wrong": len(wrong),
        "precision": correct / scored if scored else 1.0,
        "recall": correct / len(true_pairs) if true_pairs else 1.0,
        "changed_missed": status[(True, "identical")],
        "identical_missed": status[(False, "changed")],
    }


def seeds(text):
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rea", default=os.path.join(measure.ROOT, "target", "release", "rea"))
    parser.add_argument("--seeds", default="1-6")
    parser.add_argument("--cc", default="cc,clang")
    parser.add_argument("--opt", default="O0,O1,O2,O3,Os")
    parser.add_argument("--functions", type=int, default=60)
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--cflags", default="", help="flags added to every build")
    parser.add_argument("--strip", default="strip")
    parser.add_argument("--objdump", default="objdump -M intel",
                        help="the disassembler that gives the code truth, with its options")
    parser.add_argument("--got-relative", action="store_true",
                        help="mask GOT-relative fields in the code truth (x86 PIC)")
    arguments = parser.parse_args()
    global CFLAGS, STRIP, GOT_RELATIVE
    CFLAGS, STRIP = arguments.cflags.split(), arguments.strip
    GOT_RELATIVE = arguments.got_relative
    measure.OBJDUMP = arguments.objdump.split()
    server = measure.Server(arguments.rea)
    totals, below = Counter(), []
    try:
        for cc in arguments.cc.split(","):
            for opt in arguments.opt.split(","):
                sums = Counter()
                for seed in seeds(arguments.seeds):
                    if arguments.show:
                        print(f"  seed {seed} {cc} -{opt}")
                    r = probe(server, seed, arguments.functions, cc, opt, arguments.show)
                    # The targets hold for each pair of programs, not only in sum.
                    totals["programs"] += 1
                    if r["precision"] < 0.98 or r["recall"] < 0.90:
                        below.append(f"seed {seed} {cc} -{opt}: precision {r['precision']:.3f}, "
                                     f"recall {r['recall']:.3f}")
                    for key in ("true", "correct", "wrong", "changed_missed", "identical_missed"):
                        sums[key] += r[key]
                scored = sums["correct"] + sums["wrong"]
                print(f"{cc:6} -{opt}: {sums['correct']}/{sums['true']} correct, {sums['wrong']} wrong, "
                      f"precision {sums['correct'] / max(scored, 1):.3f}, "
                      f"recall {sums['correct'] / max(sums['true'], 1):.3f}; "
                      f"changed reported identical {sums['changed_missed']}, "
                      f"same code reported changed {sums['identical_missed']}", flush=True)
                totals.update(sums)
    finally:
        server.close()
    scored = totals["correct"] + totals["wrong"]
    print(f"all: precision {totals['correct'] / max(scored, 1):.4f}, "
          f"recall {totals['correct'] / max(totals['true'], 1):.4f}")
    print(f"pairs of programs below precision 0.98 or recall 0.90: {len(below)} of {totals['programs']}")
    for line in below:
        print("  ", line)


if __name__ == "__main__":
    main()
