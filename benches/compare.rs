//! `compare_procedures` (issue 32, targets: two libc-sized binaries, about 3,000 procedures
//! each, compared in under 2 s on this machine; two copies of a 100 MB library in under 60
//! s): the system C library compared with a second copy of itself, end to end (both code
//! analyses, both fingerprint lists and the matching, as the first `compare_procedures` call
//! on two freshly opened sessions does), the matching alone with every name removed (the
//! stripped case, where no symbol pairs anything), and a library of about 100 MB (LLVM's, if
//! the system has one, or `REA_BENCH_LARGE`) against a copy of itself, end to end.

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

/// Libraries of about 100 MB that Debian's LLVM packages install.
const LARGE: [&str; 2] = [
    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
    "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
];

fn bounds() -> FingerprintBounds {
    FingerprintBounds {
        max_procedures: 500_000,
        max_bytes: 2_048 << 20,
        deadline: Instant::now() + Duration::from_secs(300),
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
    large(c);
}

/// A library of about 100 MB against a copy of itself, end to end.
fn large(c: &mut Criterion) {
    let path = std::env::var_os("REA_BENCH_LARGE")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            LARGE
                .into_iter()
                .map(Into::into)
                .find(|path: &std::path::PathBuf| path.is_file())
        });
    let Some(path) = path else {
        eprintln!("no library of about 100 MB (set REA_BENCH_LARGE): not measured");
        return;
    };
    let bytes = std::fs::read(&path).expect("readable library");
    let open = || NativeProvider::from_bytes("binary", bytes.clone()).expect("opens");
    let side = fingerprints(&open());
    eprintln!(
        "{}: {} bytes, {} procedures",
        path.display(),
        bytes.len(),
        side.len()
    );
    drop(side);
    c.bench_function("compare_100mb_library_end_to_end", |b| {
        b.iter_batched(
            || (open(), open()),
            |(baseline, candidate)| {
                let (a, b) = (fingerprints(&baseline), fingerprints(&candidate));
                black_box(compare(&a, &b, &mut || false))
            },
            BatchSize::PerIteration,
        )
    });
}

criterion_group! {
    name = compare_benches;
    config = Criterion::default().sample_size(10);
    targets = benches
}
criterion_main!(compare_benches);
