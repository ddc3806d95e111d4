//! Opens a binary with the native provider, runs its code analysis once, and prints the time
//! it took, the analysis status and the process's peak resident memory (`VmHWM`), for the
//! README's measurements: `cargo bench --bench analysis_peak -- /path/to/binary` (default:
//! the system libc).

use std::time::Instant;

use rea::providers::native::NativeProvider;
use rea::session::{Address, Provider};

fn main() {
    // `cargo bench` passes `--bench`; the binary is the first other argument.
    let path = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with("--"))
        .unwrap_or_else(|| "/usr/lib/x86_64-linux-gnu/libc.so.6".to_owned());
    let opened = Instant::now();
    let provider = match NativeProvider::open(std::path::Path::new(&path)) {
        Ok(provider) => provider,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    let open_time = opened.elapsed();
    let documents = provider.list_documents().unwrap_or_default();
    for document in documents {
        let started = Instant::now();
        match provider.xrefs_to(&document.name, Address::new(0), None, 1) {
            Ok(references) => println!(
                "{}: analysis {:.3} s, {:?}",
                document.name,
                started.elapsed().as_secs_f64(),
                references.analysis
            ),
            Err(error) => println!("{}: {error}", document.name),
        }
    }
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM"))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "VmHWM: unknown".to_owned());
    println!("open {:.3} s; {peak}", open_time.as_secs_f64());
}
