#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS seconds each (default 60), seeded with the saved
# regression inputs in fuzz/regressions/<target>/. Uses the nightly toolchain when present,
# else stable with RUSTC_BOOTSTRAP=1. Exits non-zero if any target finds a failure; the
# failing input is in fuzz/artifacts/<target>/: copy it into fuzz/regressions/<target>/ so
# `cargo test --test it fuzz_replay` replays it.
#
# Targets are built without AddressSanitizer (`-s none`): the crate forbids `unsafe`, so the
# sanitizer only watched the dependencies, and it cost three to six times the inputs per second
# (measured on the five slowest targets; e.g. `key_invariants` 298 -> 1,220 inputs/s here).
# Debug assertions and overflow checks are on (`-a`), so an overflow ends a run as a failure.
#
# The targets in UNTRACED_COMPARES decode structured cases from their bytes (no magic values to
# guess) and spend most of their time in hash tables, where compare tracing instrumented every
# probe: without it (`--no-trace-compares`) they ran 1.5 to 5 times the inputs in the same time
# and reached more coverage (`discovery_termination`: 860 -> 2,024 inputs/s, 677 -> 705 edges in
# 60 s).
#
# The two flavours are built at once, each in its own target folder, before any run: cargo-fuzz
# builds with one codegen unit per crate (for the fuzzers' speed), so each build spends most of
# its time on one core compiling the rea crate, and on 2 cores the two overlap instead of
# following each other (a CI run spent about 16 minutes in the two builds one after the other).
#
# Usage: fuzz/run-bounded.sh [SECONDS]
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if cargo +nightly --version >/dev/null 2>&1; then
    fuzz=(cargo +nightly fuzz)
else
    echo "run-bounded: no nightly toolchain; using stable with RUSTC_BOOTSTRAP=1" >&2
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

UNTRACED_COMPARES=(complete_invariants discovery_termination index_equality key_invariants server_session)

untraced() {
    local name
    for name in "${UNTRACED_COMPARES[@]}"; do
        [ "$name" = "$1" ] && return 0
    done
    return 1
}

flavour_of() { if untraced "$1"; then echo untraced; else echo traced; fi; }
flags_of() { if [ "$1" = untraced ]; then echo --no-trace-compares; fi; }

build_flavour() {
    local flavour="$1"
    # The untraced flavour builds only its own targets, one cargo-fuzz call each (one call
    # without a name builds every target: each is about 100 MB, and CI once ran out of disk).
    local names=("")
    if [ "$flavour" = untraced ]; then names=("${UNTRACED_COMPARES[@]}"); fi
    local name
    : > "fuzz/target/build-$flavour.log"
    for name in "${names[@]}"; do
        # shellcheck disable=SC2046 # the flags are one word or none
        "${fuzz[@]}" build -s none -a --target-dir "fuzz/target/$flavour" $(flags_of "$flavour") \
            ${name:+"$name"} >> "fuzz/target/build-$flavour.log" 2>&1 || {
            echo "run-bounded: the $flavour build failed:" >&2
            cat "fuzz/target/build-$flavour.log" >&2
            return 1
        }
    done
}

mkdir -p fuzz/target
echo "run-bounded: building both flavours ($(date -u +%H:%M:%S))" >&2
build_flavour traced &
traced_build=$!
build_flavour untraced &
untraced_build=$!
wait "$traced_build"
wait "$untraced_build"
echo "run-bounded: built ($(date -u +%H:%M:%S))" >&2

failed=()
run_target() {
    local target="$1"
    local flavour
    flavour="$(flavour_of "$target")"
    local corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    local seeds=()
    if [ -d "fuzz/regressions/$target" ]; then
        seeds=("fuzz/regressions/$target")
    fi
    echo "run-bounded: $target for ${seconds}s ($flavour)" >&2
    # shellcheck disable=SC2046 # the flags are one word or none
    if ! "${fuzz[@]}" run -s none -a --target-dir "fuzz/target/$flavour" $(flags_of "$flavour") \
        "$target" "$corpus" "${seeds[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1; then
        failed+=("$target")
    fi
}

targets=$("${fuzz[@]}" list)
for target in $targets; do
    run_target "$target"
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "run-bounded: failures in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "run-bounded: all targets ran ${seconds}s without failures" >&2
