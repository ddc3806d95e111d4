//! Criterion benchmarks for the pure core (issue 2 targets, medians on the 2-core machine):
//! `complete()` over 10,000 ASCII identifiers (<= 100 µs for 1-4 character prefixes,
//! <= 400 µs for the empty prefix), over 10,000 identifiers of which 10% are non-ASCII
//! (<= 1 ms), and discovery of 5,000 addresses over ten in-memory pages (<= 1 ms).
//!
//! Run: `cargo bench --bench core -- --warm-up-time 1 --measurement-time 3`. With
//! `REA_BENCH_CLOCK=cpu` the benchmarks read this thread's CPU time instead of wall time,
//! which stays meaningful while other jobs share the cores.

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rea::core::discover;
use rea::core::{
    PROCEDURE_PAGE_SIZE, Prefix, PrefixIndex, ProcedureEntry, ProcedurePage, complete,
};
use rea_testkit::e2e::{DOCUMENT_PREFIXES, document_names};

const CANDIDATES: usize = 10_000;

/// The clock benchmarks read.
#[derive(Clone, Copy, Debug)]
enum Clock {
    Wall,
    ThreadCpu,
}

impl Clock {
    fn from_env() -> Clock {
        match std::env::var("REA_BENCH_CLOCK").as_deref() {
            Ok("cpu") => Clock::ThreadCpu,
            _ => Clock::Wall,
        }
    }

    /// How long `work` takes on this clock, dropping its result inside the measurement.
    fn time<R>(self, work: impl FnOnce() -> R) -> Duration {
        match self {
            Clock::Wall => {
                let start = Instant::now();
                black_box(work());
                start.elapsed()
            }
            Clock::ThreadCpu => {
                let start = thread_cpu_time();
                black_box(work());
                thread_cpu_time().saturating_sub(start)
            }
        }
    }
}

fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// A small deterministic generator (64-bit LCG), so every run benchmarks the same data.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() as usize) % items.len()]
    }
}

const CLASSES: &[&str] = &[
    "NSView",
    "NSString",
    "NSWindow",
    "UIViewController",
    "AppDelegate",
    "NSData",
];
const SELECTORS: &[&str] = &[
    "drawRect:",
    "init",
    "dealloc",
    "initWithFrame:",
    "viewDidLoad",
    "stringWithFormat:",
    "length",
];
const TEMPLATES: &[&str] = &[
    "std::vector<int>",
    "std::map<std::string, int>",
    "std::basic_string<char>",
    "boost::optional<long>",
    "llvm::SmallVector<char, 16>",
];
const METHODS: &[&str] = &[
    "push_back",
    "operator[]",
    "size",
    "~vector",
    "emplace_back",
    "find",
    "insert",
];
const C_NAMES: &[&str] = &[
    "main",
    "_start",
    "malloc",
    "free",
    "objc_msgSend",
    "__cxa_throw",
    "memcpy",
    "pthread_create",
    "open",
    "read_config",
    "parse_header",
];

/// One realistic ASCII identifier: addresses, `sub_` names, Objective-C and C++ methods, C.
fn ascii_identifier(rng: &mut Lcg) -> String {
    match rng.next() % 20 {
        0..=5 => format!("{:#x}", 0x1_0000_0000 + rng.next() % 0x10_0000),
        6..=10 => format!("sub_{:x}", 0x40_1000 + rng.next() % 0x10_0000),
        11..=13 => {
            let kind = if rng.next().is_multiple_of(4) {
                '+'
            } else {
                '-'
            };
            format!("{kind}[{} {}]", rng.pick(CLASSES), rng.pick(SELECTORS))
        }
        14..=16 => format!("{}::{}", rng.pick(TEMPLATES), rng.pick(METHODS)),
        _ => format!("{}_{}", rng.pick(C_NAMES), rng.next() % 1000),
    }
}

const NON_ASCII_STEMS: &[&str] = &[
    "αλφα",
    "Σύνδεση",
    "初始化",
    "文件读取",
    "café",
    "naïve_größe",
    "Ñandú",
    "ｓｕｂ＿",
    "０ｘ１０",
    "Ελληνικά",
    "設定",
];

fn non_ascii_identifier(rng: &mut Lcg) -> String {
    format!("{}_{}", rng.pick(NON_ASCII_STEMS), rng.next() % 10_000)
}

fn ascii_set() -> Vec<String> {
    let mut rng = Lcg(0x5eed);
    (0..CANDIDATES)
        .map(|_| ascii_identifier(&mut rng))
        .collect()
}

fn mixed_set() -> Vec<String> {
    let mut rng = Lcg(0xface);
    (0..CANDIDATES)
        .map(|n| {
            if n.is_multiple_of(10) {
                non_ascii_identifier(&mut rng)
            } else {
                ascii_identifier(&mut rng)
            }
        })
        .collect()
}

fn bench_complete(c: &mut Criterion) {
    let clock = Clock::from_env();
    let ascii_prefixes = [
        "", "s", "su", "sub", "sub_", "0x1", "0x10", "-[NS", "std:", "m",
    ];
    bench_prefixes(
        c,
        clock,
        "complete_ascii_10k",
        &ascii_set(),
        &ascii_prefixes,
    );
    let mixed_prefixes = ["", "s", "sub_", "0x10", "α", "初", "caf", "ｓ"];
    bench_prefixes(
        c,
        clock,
        "complete_mixed_10k",
        &mixed_set(),
        &mixed_prefixes,
    );
}

/// One benchmark per prefix: `complete(prefix, candidates)`.
fn bench_prefixes(
    c: &mut Criterion,
    clock: Clock,
    group: &str,
    candidates: &[String],
    prefixes: &[&str],
) {
    let mut group = c.benchmark_group(group);
    for &prefix in prefixes {
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{prefix:?}")),
            prefix,
            |b, prefix| {
                b.iter_custom(|iters| {
                    clock.time(|| {
                        for _ in 0..iters {
                            let _ = black_box(complete(black_box(prefix), black_box(candidates)));
                        }
                    })
                })
            },
        );
    }
    group.finish();
}

/// One benchmark per prefix of the e2e Document workload: `PrefixIndex::complete` over the
/// 10,000 names of `benches/e2e_stdio.rs`'s catalog, the work one such request does in the
/// core (the index itself is built once, when the catalog opens).
fn bench_index(c: &mut Criterion) {
    let clock = Clock::from_env();
    let index = PrefixIndex::new(document_names());
    let mut group = c.benchmark_group("index_documents_10k");
    for raw in DOCUMENT_PREFIXES {
        let prefix = Prefix::new(raw).expect("a short prefix");
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{raw:?}")),
            &prefix,
            |b, prefix| {
                b.iter_custom(|iters| {
                    clock.time(|| {
                        for _ in 0..iters {
                            let _ = black_box(index.complete(black_box(prefix)));
                        }
                    })
                })
            },
        );
    }
    group.finish();
}

/// Ten pages of 500 fresh addresses with names, the last without a cursor.
fn discovery_pages() -> Vec<ProcedurePage> {
    (0..10)
        .map(|page| ProcedurePage {
            entries: (0..PROCEDURE_PAGE_SIZE)
                .map(|i| {
                    let address =
                        0x1_0000_0000_u64 + ((page * PROCEDURE_PAGE_SIZE + i) as u64) * 16;
                    ProcedureEntry::new(format!("{address:#x}"), Some(&format!("sub_{address:x}")))
                })
                .collect(),
            next_cursor: (page < 9).then(|| format!("cursor-{}", page + 1)),
        })
        .collect()
}

/// [`discovery_pages`] with two aliases on every entry, as a C library lists `memcmp` beside
/// `bcmp`: 15,000 names for 5,000 addresses.
fn aliased_discovery_pages() -> Vec<ProcedurePage> {
    let mut pages = discovery_pages();
    for entry in pages.iter_mut().flat_map(|page| page.entries.iter_mut()) {
        let address = entry.address.trim_start_matches("0x").to_owned();
        entry.aliases = vec![format!("alias_{address}"), format!("__{address}_impl")];
    }
    pages
}

fn bench_discovery(c: &mut Criterion) {
    let clock = Clock::from_env();
    for (name, pages) in [
        ("discovery_5000_addresses_10_pages", discovery_pages()),
        (
            "discovery_5000_addresses_10_pages_2_aliases_each",
            aliased_discovery_pages(),
        ),
    ] {
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        // Cloning the provider's pages is setup, outside the measurement.
                        let mut pages = pages.clone().into_iter();
                        clock.time(|| {
                            discover(|_| Ok::<_, Infallible>(pages.next().unwrap_or_default()))
                        })
                    })
                    .sum()
            })
        });
    }
}

criterion_group!(benches, bench_complete, bench_index, bench_discovery);
criterion_main!(benches);
