//! `compare_procedures` (issue 32, target: two libc-sized binaries, about 3,000 procedures
//! each, compared in under 2 s on this machine): the system C library compared with a second
//! copy of itself, end to end (both code analyses, both fingerprint lists and the matching, as
//! the first `compare_procedures` call on two freshly opened sessions does), and the matching
//! alone with every name removed (the stripped case, where no symbol pairs anything).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rea::core::diff::{Fingerprint, compare};
use rea::providers::native::NativeProvider;
use rea::session::{FingerprintBounds, Provider};

const LIBC: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
];

fn bounds() -> FingerprintBounds {
    FingerprintBounds {
        max_procedures: 50_000,
        max_bytes: 256 << 20,
        deadline: Instant::now() + Duration::from_secs(60),
    }
}

fn fingerprints(provider: &NativeProvider) -> Vec<Fingerprint> {
    provider
        .fingerprints("binary", &bounds())
        .expect("fingerprints")
        .procedures
}

fn benches(c: &mut Criterion) {
    let Some(path) = LIBC.into_iter().map(Path::new).find(|path| path.is_file()) else {
        eprintln!("no system C library: nothing to measure");
        return;
    };
    let bytes = std::fs::read(path).expect("readable libc");
    let open = || NativeProvider::from_bytes("binary", bytes.clone()).expect("opens");
    let side = fingerprints(&open());
    let result = compare(&side, &side, &mut || false);
    eprintln!(
        "{}: {} procedures, {} pairs",
        path.display(),
        side.len(),
        result.pairs.len()
    );
    c.bench_function("compare_libc_end_to_end", |b| {
        b.iter_batched(
            || (open(), open()),
            |(baseline, candidate)| {
                let (a, b) = (fingerprints(&baseline), fingerprints(&candidate));
                black_box(compare(&a, &b, &mut || false))
            },
            BatchSize::LargeInput,
        )
    });
    let nameless: Vec<Fingerprint> = side
        .iter()
        .cloned()
        .map(|mut fingerprint| {
            fingerprint.name = None;
            fingerprint
        })
        .collect();
    c.bench_function("compare_libc_matching_without_names", |b| {
        b.iter(|| black_box(compare(&nameless, &nameless, &mut || false)))
    });
}

criterion_group! {
    name = compare_benches;
    config = Criterion::default().sample_size(10);
    targets = benches
}
criterion_main!(compare_benches);
