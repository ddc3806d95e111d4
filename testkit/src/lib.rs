//! What the `rea` test suite and benches share, in one home instead of files included by path:
//!
//! - [`fixtures`]: ELF, Mach-O (thin and fat) and PE binaries generated at test time (no binaries
//!   of unknown origin are checked in).
//! - [`server_process`]: the real `rea serve` in a child process over its stdio, with its
//!   resident memory from `/proc`.
//! - [`team`]: a temporary PostgreSQL cluster and `rea serve --http` instances on it.
//! - [`angr`]: the reference angr adapter, installed on first use, and the C programs it is
//!   tried on.
//! - [`e2e`]: the Document workload of the end-to-end benches, the bench-only peers' build, and
//!   the statistics of their tables.
//!
//! A dev-dependency of `rea` and of its suite only; never published. It does not depend on
//! `rea` (the suite's fake provider and completion helpers, which do, live in the suite), so
//! that a fresh `cargo test` builds the library's unit tests beside the library instead of
//! after it.

pub mod angr;
pub mod e2e;
pub mod fixtures;
pub mod server_process;
pub mod team;

/// The repository's root (this crate is its `testkit/` folder), without `..` in it, so that
/// paths a server prints read as they do from the root.
pub fn repository_root() -> &'static std::path::Path {
    static ROOT: std::sync::LazyLock<std::path::PathBuf> = std::sync::LazyLock::new(|| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .expect("the repository root exists")
    });
    &ROOT
}
