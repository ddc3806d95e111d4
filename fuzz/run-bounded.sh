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
# 60 s). They run last, so the fuzz build switches flags once.
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

failed=()
run_target() {
    local target="$1"
    shift
    local corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    local seeds=()
    if [ -d "fuzz/regressions/$target" ]; then
        seeds=("fuzz/regressions/$target")
    fi
    echo "run-bounded: $target for ${seconds}s $*" >&2
    if ! "${fuzz[@]}" run -s none -a "$@" "$target" "$corpus" "${seeds[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1; then
        failed+=("$target")
    fi
}

targets=$("${fuzz[@]}" list)
for target in $targets; do
    untraced "$target" || run_target "$target"
done
for target in $targets; do
    if untraced "$target"; then
        run_target "$target" --no-trace-compares
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "run-bounded: failures in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "run-bounded: all targets ran ${seconds}s without failures" >&2
