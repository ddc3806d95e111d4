//! What the end-to-end benches share (`e2e_stdio.rs` over pipes, `e2e_http.rs` over Streamable
//! HTTP): the Document workload (its catalog and its requests in both protocol eras), building
//! the bench-only peers of `benches/peers/`, and the statistics of the tables.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

/// One run of one scenario.
pub struct Measured {
    pub p50: Duration,
    pub p99: Duration,
    pub throughput: f64,
    pub peak_kb: u64,
    /// Of the resident memory at the end, the pages mapped from files (`RssFile`: mostly the
    /// executable's own, which depend on what the page cache holds, see [`file_kb`]).
    pub file_kb: u64,
}

/// The medians of one scenario's runs, each figure taken on its own, and the highest peak
/// (with the most mapped from files).
pub struct Median {
    pub p50: Duration,
    pub p99: Duration,
    pub throughput: f64,
    pub peak_kb: u64,
    pub file_kb: u64,
}

impl Median {
    pub fn of(mut runs: Vec<Measured>) -> Median {
        let middle = runs.len() / 2;
        runs.sort_by_key(|m| m.p50);
        let p50 = runs[middle].p50;
        runs.sort_by_key(|m| m.p99);
        let p99 = runs[middle].p99;
        runs.sort_by(|a, b| a.throughput.total_cmp(&b.throughput));
        let throughput = runs[middle].throughput;
        let peak_kb = runs.iter().map(|m| m.peak_kb).max().unwrap_or(0);
        let file_kb = runs.iter().map(|m| m.file_kb).max().unwrap_or(0);
        Median {
            p50,
            p99,
            throughput,
            peak_kb,
            file_kb,
        }
    }

    /// The row of the table: name, p50, p99, throughput, peak memory (of it from files).
    pub fn row(&self, name: &str) -> String {
        format!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} | {:.1} MB ({:.1}) |",
            self.p50.as_secs_f64() * 1e6,
            self.p99.as_secs_f64() * 1e6,
            self.throughput,
            self.peak_kb as f64 / 1024.0,
            self.file_kb as f64 / 1024.0
        )
    }

    /// `self` against `other`: the ratios of the p50s, the p99s and the throughputs.
    pub fn against(&self, other: &Median) -> String {
        format!(
            "p50 {:.2}x, p99 {:.2}x, throughput {:.2}x",
            self.p50.as_secs_f64() / other.p50.as_secs_f64(),
            self.p99.as_secs_f64() / other.p99.as_secs_f64(),
            self.throughput / other.throughput
        )
    }

    /// `self` against `base` in percent: p50, p99 and throughput.
    pub fn change_from(&self, base: &Median) -> String {
        format!(
            "p50 {:+.1}%, p99 {:+.1}%, throughput {:+.1}%",
            percent(self.p50.as_secs_f64(), base.p50.as_secs_f64()),
            percent(self.p99.as_secs_f64(), base.p99.as_secs_f64()),
            percent(self.throughput, base.throughput)
        )
    }
}

/// The `p` quantile of sorted latencies.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// How much `value` differs from `base`, in percent of `base`.
pub fn percent(value: f64, base: f64) -> f64 {
    (value / base - 1.0) * 100.0
}

/// The machine's load average, as `/proc/loadavg` gives it.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Peak resident memory of process `pid` in kB (`VmHWM`), 0 when unknown.
pub fn peak_kb(pid: u32) -> u64 {
    status_kb(pid, "VmHWM:")
}

/// Resident memory of process `pid` mapped from files, in kB (`RssFile`), 0 when unknown.
/// It counts in `VmHWM` and is mostly the executable: a build whose pages are all in the page
/// cache (one just linked) has more of them mapped at once (the kernel maps the cached pages
/// around each fault), so two builds' peaks compare only with this part set apart or with
/// the page cache dropped before each.
pub fn file_kb(pid: u32) -> u64 {
    status_kb(pid, "RssFile:")
}

/// The field `name` of `/proc/<pid>/status` in kB, 0 when unknown.
fn status_kb(pid: u32, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

/// Builds a bench-only peer of `benches/peers/<folder>/` (release) into `target` and returns
/// the path of its executable, or `None` (after saying why) when it does not build.
pub fn build_peer(target: &Path, folder: &str, executable: &str) -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../benches/peers")
        .join(folder)
        .join("Cargo.toml");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target)
        .status();
    match status {
        Ok(status) if status.success() => Some(target.join("release").join(executable)),
        Ok(status) => {
            println!("the {folder} peer did not build ({status}); its scenarios are skipped");
            None
        }
        Err(error) => {
            println!(
                "cargo did not run for the {folder} peer ({error}); its scenarios are skipped"
            );
            None
        }
    }
}

/// A `completion/complete` request for a prompt argument.
pub fn completion(id: &Value, prompt: &str, argument: &str, value: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "completion/complete",
            "params": { "ref": { "type": "ref/prompt", "name": prompt },
                        "argument": { "name": argument, "value": value } } })
}

/// Checks that `answer` is a completion result.
pub fn is_completion(answer: &Value) {
    assert!(
        answer["result"]["completion"]["values"].is_array(),
        "{answer}"
    );
}

/// Checks that the completion `answer` offers at least one value (the empty prefix of a
/// workload matches every candidate, so an empty answer there means the server does not see
/// the workload's data).
pub fn has_values(answer: &Value) {
    assert!(
        answer["result"]["completion"]["values"]
            .as_array()
            .is_some_and(|values| !values.is_empty()),
        "the first request of the workload is answered with values: {answer}"
    );
}

/// The 10,000 document names: 90% ASCII identifiers, 10% other scripts.
pub fn document_names() -> Vec<String> {
    let others = [
        "Αρχείο",
        "σημείωση",
        "文档",
        "検索",
        "Café",
        "Ångström",
        "ＦＵＬＬ",
        "naïve",
        "Ελλάδα",
        "数据",
    ];
    let words = [
        "notes", "search", "index", "render", "sync", "cache", "parser", "Store", "view", "Model",
        "query", "export",
    ];
    (0..10_000)
        .map(|i| {
            if i % 10 == 9 {
                format!("{}_{i}", others[i % others.len()])
            } else {
                format!(
                    "{}{}_{i}",
                    words[i % words.len()],
                    words[(i / 12) % words.len()]
                )
            }
        })
        .collect()
}

/// The rotating prefixes of the Document workload, the empty one included.
pub const DOCUMENT_PREFIXES: [&str; 12] = [
    "", "n", "se", "ind", "Re", "SYNC", "cache9", "Αρ", "文", "cafe", "ｆｕ", "q",
];

/// The `i`th Document completion request, rotating through [`DOCUMENT_PREFIXES`].
pub fn document_request(i: usize, id: &Value) -> Value {
    completion(
        id,
        "investigate_feature",
        "document",
        DOCUMENT_PREFIXES[i % 12],
    )
}

/// The `_meta` envelope every request of a 2026-07-28 client carries.
pub fn envelope_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// The `i`th Document completion request of a 2026-07-28 client: the same request with the
/// `_meta` envelope.
pub fn document_request_2026(i: usize, id: &Value) -> Value {
    let mut request = document_request(i, id);
    request["params"]["_meta"] = envelope_2026();
    request
}

/// Writes a rea catalog of `names` (one procedure each) to `path`.
pub fn catalog_of(names: &[String], path: &Path) {
    let documents: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({ "name": name, "procedures": [{ "address": format!("{:#x}", 0x1000 + i * 16), "name": "main" }] })
        })
        .collect();
    let catalog = json!({ "schema": "rea.catalog", "version": 1, "documents": documents });
    std::fs::write(path, catalog.to_string()).expect("catalog written");
}

/// Writes the 10,000-document catalog of the Document workload under `data` and returns it.
pub fn document_catalog(data: &Path) -> PathBuf {
    std::fs::create_dir_all(data).expect("bench data folder");
    let catalog = data.join("documents-10000.json");
    catalog_of(&document_names(), &catalog);
    catalog
}
