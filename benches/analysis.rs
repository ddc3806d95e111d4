//! Code analysis (issue 11, target: a 10 MB binary analysed in a few seconds on 2 cores): the
//! first `xrefs_to` on a freshly opened document, which runs the document's whole analysis,
//! on the system C library (when present) and on a generated ELF executable with 50,000
//! function symbols (one `.eh_frame` FDE each; each function is `ret` and padding).
//!
//! Peak memory is not measured here (criterion runs many iterations in one process); the
//! `analysis_peak` bench prints it: `cargo bench --bench analysis_peak -- FILE`.

use rea_testkit::fixtures;

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use fixtures::{Spec, elf};
use rea::providers::native::NativeProvider;
use rea::session::{Address, Provider};

const FUNCTIONS: usize = 50_000;

const LIBC: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
];

/// Opens `bytes` (setup, not measured), then runs the analysis through one `xrefs_to`.
fn bench_analysis(c: &mut Criterion, name: &str, bytes: &[u8]) {
    let check = NativeProvider::from_bytes("binary", bytes.to_vec()).expect("opens");
    let status = check
        .xrefs_to("binary", Address::new(0), None, 1)
        .expect("analyses")
        .analysis;
    assert!(status.complete, "{name}: {status:?}");
    eprintln!("{name}: {status:?}");
    c.bench_function(name, |b| {
        b.iter_batched(
            || NativeProvider::from_bytes("binary", bytes.to_vec()).expect("opens"),
            |provider| {
                black_box(
                    provider
                        .xrefs_to("binary", Address::new(0), None, 1)
                        .expect("analyses"),
                )
            },
            BatchSize::LargeInput,
        )
    });
}

fn analysis(c: &mut Criterion) {
    let built = elf::build(&Spec::numbered(FUNCTIONS));
    bench_analysis(c, "analysis_50k_symbols", &built.bytes);
    if let Some(path) = LIBC.into_iter().map(Path::new).find(|path| path.is_file()) {
        let bytes = std::fs::read(path).expect("readable libc");
        bench_analysis(c, "analysis_system_libc", &bytes);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = analysis
}
criterion_main!(benches);
