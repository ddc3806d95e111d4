//! Scores the procedure matcher on two real binaries by their own symbols: both sides are
//! fingerprinted with their names removed, matched, and each pair is then judged by the
//! names the binaries carried.
//!
//! ```text
//! cargo run --release --example score_by_names -- \
//!     /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1
//! ```
//!
//! It prints one line: right and wrong pairs, all pairs, precision, recall, the matching's
//! seconds and both procedure counts. With `SCORE_PAIRS=FILE` it also writes every pair
//! (baseline name, candidate name, signal, similarity), tab-separated.
//!
//! The scoring, which `benches/compare_quality/measure.py` also uses for its pairs of
//! releases:
//! - a name counts once compiler suffixes (`.constprop.N`, `.isra.N`) are dropped;
//! - a true pair is a name that names exactly one procedure on each side;
//! - a pair is right when both procedures carry the same true pair's name; it is wrong when
//!   its baseline name names one baseline procedure and the candidate's procedure of that name
//!   is another one, or the candidate has no procedure of that name; any other pair (a nameless
//!   procedure, a name used twice) is not scored;
//! - precision = right / (right + wrong); recall = right / true pairs.
//!
//! The matching alone is timed, as `benches/compare.rs` times it; the fingerprints are not.

use std::collections::HashMap;
use std::error::Error;
use std::io::Write;
use std::time::{Duration, Instant};

use rea::core::diff::{Fingerprint, compare};
use rea::providers::native::NativeProvider;
use rea::session::{FingerprintBounds, Provider};

/// Drops the suffixes a compiler gives the clones of a function, so a clone keeps its name.
fn without_clone_suffixes(name: &str) -> String {
    let mut name = name.to_string();
    for suffix in [".constprop.", ".isra."] {
        while let Some(at) = name.find(suffix) {
            let digits = &name[at + suffix.len()..];
            let end = at
                + suffix.len()
                + digits
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(digits.len());
            name.replace_range(at..end, "");
        }
    }
    name
}

/// One side: its fingerprints, names taken out, and the names, kept aside by index.
struct Side {
    procedures: Vec<Fingerprint>,
    names: Vec<Option<String>>,
    uses: HashMap<String, usize>,
}

impl Side {
    fn open(path: &str) -> Result<Side, Box<dyn Error>> {
        // Bounds large enough for the biggest library this was run on (libLLVM, 110 MB).
        let bounds = FingerprintBounds {
            max_procedures: 500_000,
            max_bytes: 2_048 << 20,
            deadline: Instant::now() + Duration::from_secs(600),
        };
        let provider = NativeProvider::from_bytes("binary", std::fs::read(path)?)?;
        let mut procedures = provider.fingerprints("binary", &bounds)?.procedures;
        let names: Vec<Option<String>> = procedures
            .iter_mut()
            .map(|procedure| {
                procedure
                    .name
                    .take()
                    .map(|name| without_clone_suffixes(&name))
            })
            .collect();
        let mut uses = HashMap::new();
        for name in names.iter().flatten() {
            *uses.entry(name.clone()).or_default() += 1;
        }
        Ok(Side {
            procedures,
            names,
            uses,
        })
    }

    /// The name of procedure `index` when no other procedure carries it.
    fn unique_name(&self, index: u32) -> Option<&str> {
        let name = self.names[index as usize].as_deref()?;
        (self.uses[name] == 1).then_some(name)
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let [baseline, candidate] = paths.as_slice() else {
        return Err("usage: score_by_names BASELINE CANDIDATE".into());
    };
    let (baseline, candidate) = (Side::open(baseline)?, Side::open(candidate)?);

    let started = Instant::now();
    let result = compare(&baseline.procedures, &candidate.procedures, &mut || false);
    let seconds = started.elapsed().as_secs_f64();

    let true_pairs = baseline
        .uses
        .iter()
        .filter(|&(name, &n)| n == 1 && candidate.uses.get(name) == Some(&1))
        .count();
    let (mut right, mut wrong) = (0usize, 0usize);
    for pair in &result.pairs {
        let Some(name) = baseline.unique_name(pair.baseline) else {
            continue;
        };
        match candidate.uses.get(name) {
            Some(1) if candidate.unique_name(pair.candidate) == Some(name) => right += 1,
            Some(1) | None => wrong += 1,
            Some(_) => {}
        }
    }
    if let Ok(path) = std::env::var("SCORE_PAIRS") {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        for pair in &result.pairs {
            let name = |side: &Side, index: u32| {
                side.names[index as usize]
                    .clone()
                    .unwrap_or_else(|| "?".into())
            };
            writeln!(
                out,
                "{}\t{}\t{:?}\t{:.3}",
                name(&baseline, pair.baseline),
                name(&candidate, pair.candidate),
                pair.signal,
                pair.similarity
            )?;
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    println!(
        "{right} right, {wrong} wrong, {} pairs, precision {:.4}, recall {:.4}, {seconds:.1} s, procedures {} / {}",
        result.pairs.len(),
        ratio(right, right + wrong),
        ratio(right, true_pairs),
        baseline.procedures.len(),
        candidate.procedures.len()
    );
    Ok(())
}
