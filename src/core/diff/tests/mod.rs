//! The matcher's unit and property tests, a module per kind of round, built from small
//! fingerprints; this module holds the builders they share.

mod basics;
mod calls;
mod constants;
mod inlining;
mod likeness;
mod neighbours;
mod properties;
mod records;
mod twins;

use super::*;

fn procedure(address: u64, shape: u64, tokens: Vec<u32>, callees: Vec<u32>) -> Fingerprint {
    let mut tokens = tokens;
    tokens.sort_unstable();
    let mut mnemonics: Vec<u16> = tokens.iter().map(|&token| (token % 13) as u16).collect();
    mnemonics.sort_unstable();
    Fingerprint {
        address,
        name: None,
        size: tokens.len() as u64 * 4,
        bytes: shape ^ address,
        shape,
        tokens: tokens.clone(),
        mnemonics,
        callees,
        imports: Vec::new(),
        strings: Vec::new(),
        constants: Vec::new(),
        // Each made-up instruction holds one immediate of its own: what an edit changes
        // and a new register allocation keeps.
        immediates: tokens.clone(),
        addends: Vec::new(),
        slots: Vec::new(),
        tables: Vec::new(),
        labels: Vec::new(),
    }
}

fn never() -> impl FnMut() -> bool {
    || false
}

/// `f` rewritten to a likeness in `band`: other instructions and other operations.
fn rewritten(f: &Fingerprint, band: std::ops::Range<f64>) -> Fingerprint {
    (1..f.tokens.len())
        .map(|changed| {
            let mut g = edited(f, changed);
            let kept = g.mnemonics.len() - changed;
            g.mnemonics.truncate(kept);
            g.mnemonics.extend((0..changed as u16).map(|i| 500 + i));
            g
        })
        .find(|g| band.contains(&similarity(f, g)))
        .expect("a rewrite in the band")
}

/// A procedure of `length` instructions drawn from `seed`, with `strings`.
fn body(address: u64, seed: u32, length: u32, strings: Vec<u64>) -> Fingerprint {
    let tokens: Vec<u32> = (0..length).map(|i| (seed * 31 + i * 7) % 97).collect();
    let mut p = procedure(
        address,
        u64::from(seed) << 8 | u64::from(length),
        tokens,
        vec![],
    );
    p.strings = strings;
    p
}

/// `p` with its last `changed` instructions replaced: another shape, mostly alike.
fn edited(p: &Fingerprint, changed: usize) -> Fingerprint {
    let mut q = p.clone();
    let keep = q.tokens.len() - changed;
    q.tokens.truncate(keep);
    q.tokens.extend((0..changed as u32).map(|i| 1_000 + i));
    q.tokens.sort_unstable();
    q.mnemonics = q.tokens.iter().map(|&t| (t % 13) as u16).collect();
    q.mnemonics.sort_unstable();
    q.immediates = q.tokens.clone();
    q.shape ^= 0x5555;
    q.bytes ^= 0x5555;
    q
}

/// `callers` procedures named alike on both sides (so they pair by name), each calling the
/// first `called.0` of `baseline` (on the candidate side, `called.1` of `candidate`),
/// which follow them.
fn under_callers(
    callers: usize,
    called: (usize, usize),
    baseline: Vec<Fingerprint>,
    candidate: Vec<Fingerprint>,
) -> Comparison {
    let side = |called: usize, rest: Vec<Fingerprint>| {
        let callees: Vec<u32> = (callers..callers + called).map(|i| i as u32).collect();
        let mut side: Vec<Fingerprint> = (0..callers)
            .map(|i| {
                let at = i as u64 * 0x10;
                let mut caller = procedure(0x10 + at, 100 + at, vec![1, 2, 3], callees.clone());
                caller.name = Some(format!("caller{i}"));
                caller
            })
            .collect();
        side.extend(rest);
        side
    };
    compare(
        &side(called.0, baseline),
        &side(called.1, candidate),
        &mut never(),
    )
}

/// A procedure of `length` instructions and operations that no other procedure has.
fn foreign(address: u64, seed: u16, length: u16) -> Fingerprint {
    let tokens = (0..length)
        .map(|i| u32::from(seed) * 10_000 + u32::from(i))
        .collect();
    let mut p = procedure(address, 900 + u64::from(seed), tokens, vec![]);
    p.mnemonics = (0..length).map(|i| seed * 1_000 + i).collect();
    p
}

fn partner(result: &Comparison, baseline: u32) -> Option<(u32, Signal)> {
    let pair = result.pairs.iter().find(|pair| pair.baseline == baseline)?;
    Some((pair.candidate, pair.signal))
}

/// A small procedure of four instructions (`lea`, `sar`, `imul`, `ret`) with the two
/// immediates `immediates`, which its masked instructions hold too.
fn small(address: u64, immediates: [u32; 2]) -> Fingerprint {
    let tokens = vec![100_000 + immediates[0], 200_000 + immediates[1], 3, 4];
    let mut p = procedure(
        address,
        u64::from(immediates[0] ^ immediates[1] << 16),
        tokens,
        vec![],
    );
    p.mnemonics = vec![1, 2, 3, 4];
    p.immediates = vec![10_000 + immediates[0], 20_000 + immediates[1]];
    p.immediates.sort_unstable();
    p
}

/// A caller named alike on both sides (so it pairs by name) calling, in this order,
/// the procedures that follow it.
fn calling_in_order(procedures: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
    let mut caller = procedure(0x10, 100, vec![1, 2, 3], calls.to_vec());
    caller.name = Some("main".into());
    std::iter::once(caller).chain(procedures).collect()
}

/// `side` with one more procedure, named `second`, calling `calls` in that order.
fn with_second_caller(mut side: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
    let mut second = procedure(0x900, 200, vec![4, 5, 6], calls.to_vec());
    second.name = Some("second".into());
    side.push(second);
    side
}

/// Six kept procedures, each alike on both sides, at 0x100 on; `moved` is the one
/// procedure more, alike to its counterpart, at 0x800.
fn kept_and(moved: Fingerprint) -> Vec<Fingerprint> {
    let mut side: Vec<Fingerprint> = (0..6)
        .map(|i| foreign(0x100 + u64::from(i) * 0x40, 10 + i, 12))
        .collect();
    side.push(moved);
    side
}
