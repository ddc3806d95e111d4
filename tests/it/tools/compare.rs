//! `compare_procedures` (docs/CONTRACT.md section 10): two versions of a C program with known
//! added, removed, renamed, changed and moved functions, compiled at test time at -O2,
//! compared stripped through `rea serve` and scored against their symbols; a binary compared
//! with itself; determinism and paging; and the refusals, each naming its argument.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rea::providers::native::NativeProvider;
use rea::session::Provider;
use rea_testkit::fixtures::{Spec, elf};
use rea_testkit::server_process::ServerProcess;
use serde_json::{Value, json};

use crate::support::code;
use crate::support::tools::{closed, failure, snapshot, success};

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

/// Functions both versions share unchanged, at other places in the file or not.
const COMMON: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define KEEP __attribute__((noinline))

KEEP int parse_number(const char *s) {
    int v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

KEEP unsigned checksum(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

KEEP void greet(const char *who) { printf("hello, %s, welcome\n", who); }

KEEP int stable_table(int k) {
    static const int t[] = {3, 1, 4, 1, 5, 9, 2, 6};
    return t[k & 7] * 1000003;
}
"#;

const BASELINE: &str = r#"
KEEP int removed_feature(int x) { return x * 7 + puts("the removed feature"); }

KEEP void moved_report(int n) { fprintf(stderr, "report: %d items\n", n); }

KEEP int old_name(int x, int y) {
    return x * y + (x ^ y) * 3 + (int)strlen("the renamed helper");
}

KEEP long changed_math(long a) {
    long r = 0;
    for (long i = 0; i < a; i++) r += i * i;
    return r;
}

int main(int argc, char **argv) {
    const char *arg = argc > 1 ? argv[1] : "42";
    int n = parse_number(arg);
    greet(arg);
    moved_report(n);
    printf("%u %d %d %ld %d\n", checksum(arg), removed_feature(n), old_name(n, argc),
           changed_math(n), stable_table(n));
    return 0;
}
"#;

const CANDIDATE: &str = r#"
void moved_report(int n);

KEEP int new_name(int x, int y) {
    return x * y + (x ^ y) * 3 + (int)strlen("the renamed helper");
}

KEEP long changed_math(long a) {
    long r = 0;
    for (long i = 0; i < a; i++) r += i * i;
    if (r > a * 4) r -= a;
    return r;
}

KEEP int added_feature(const char *s) { return (int)strlen(s) * 11 + puts("the added feature"); }

int main(int argc, char **argv) {
    const char *arg = argc > 1 ? argv[1] : "42";
    int n = parse_number(arg);
    greet(arg);
    moved_report(n);
    printf("%u %d %d %ld %d\n", checksum(arg), added_feature(arg), new_name(n, argc),
           changed_math(n), stable_table(n));
    return 0;
}

KEEP void moved_report(int n) { fprintf(stderr, "report: %d items\n", n); }
"#;

/// Renamed functions: baseline name to candidate name.
const RENAMED: [(&str, &str); 1] = [("old_name", "new_name")];

/// Functions whose source changed (besides the renamed one, whose body did not).
const SOURCE_CHANGED: [&str; 2] = ["changed_math", "main"];

/// Functions whose source did not change.
const SOURCE_SAME: [&str; 6] = [
    "parse_number",
    "checksum",
    "greet",
    "stable_table",
    "moved_report",
    "old_name",
];

fn run(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .status()
        .unwrap_or_else(|error| panic!("{program} runs: {error}"));
    assert!(status.success(), "{program} {args:?}");
}

/// Compiles `source` at -O2 and a stripped copy: (unstripped, stripped).
fn build(directory: &Path, name: &str, source: &str) -> (PathBuf, PathBuf) {
    build_with(directory, name, source, &[])
}

/// [`build`] with more compiler `flags`.
fn build_with(directory: &Path, name: &str, source: &str, flags: &[&str]) -> (PathBuf, PathBuf) {
    let source_path = directory.join(format!("{name}.c"));
    std::fs::write(&source_path, format!("{COMMON}{source}")).unwrap();
    let output = directory.join(name);
    let stripped = directory.join(format!("{name}.stripped"));
    let mut arguments = vec!["-O2"];
    arguments.extend_from_slice(flags);
    arguments.extend([
        "-o",
        output.to_str().unwrap(),
        source_path.to_str().unwrap(),
    ]);
    run("cc", &arguments);
    run(
        "strip",
        &["-o", stripped.to_str().unwrap(), output.to_str().unwrap()],
    );
    (output, stripped)
}

/// Names by address, from the unstripped binary's symbols.
fn symbols(path: &Path) -> BTreeMap<String, String> {
    let provider = NativeProvider::open(path).unwrap();
    let document = provider.list_documents().unwrap()[0].name.clone();
    let mut names = BTreeMap::new();
    let mut cursor = None;
    loop {
        let page = provider
            .list_procedures(&document, cursor.as_deref(), 500)
            .unwrap();
        for procedure in &page.entries {
            if let Some(name) = &procedure.name {
                names.insert(procedure.address.clone(), name.clone());
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    names
}

/// Every entry of a comparison, paging with `limit`: (matched, only_in_baseline,
/// only_in_candidate), and the pages' `structuredContent`.
fn all_pages(
    server: &mut ServerProcess,
    arguments: Value,
    limit: u64,
) -> (Vec<Value>, Vec<Value>, Vec<Value>, Vec<Value>) {
    let (mut matched, mut left, mut right, mut pages) = (vec![], vec![], vec![], vec![]);
    let mut cursor: Option<String> = None;
    loop {
        let mut call = arguments.clone();
        call["limit"] = limit.into();
        if let Some(cursor) = &cursor {
            call["cursor"] = cursor.clone().into();
        }
        let result = server.tool("compare_procedures", call);
        assert_ne!(result["isError"], true, "{result}");
        let page = result["structuredContent"].clone();
        matched.extend(page["matched"].as_array().unwrap().iter().cloned());
        left.extend(page["only_in_baseline"].as_array().unwrap().iter().cloned());
        right.extend(
            page["only_in_candidate"]
                .as_array()
                .unwrap()
                .iter()
                .cloned(),
        );
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        pages.push(page);
        if cursor.is_none() {
            return (matched, left, right, pages);
        }
    }
}

fn open(server: &mut ServerProcess, path: &Path) -> String {
    let opened = server.tool("open_binary", json!({"path": path, "new_session": true}));
    opened["structuredContent"]["session"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_owned()
}

#[test]
fn stripped_versions_are_matched_as_their_symbols_say() {
    let directory = tempfile::tempdir().unwrap();
    let (baseline, baseline_stripped) = build(directory.path(), "v1", BASELINE);
    let (candidate, candidate_stripped) = build(directory.path(), "v2", CANDIDATE);
    let baseline_names = symbols(&baseline);
    let candidate_names = symbols(&candidate);
    let renamed: BTreeMap<&str, &str> = RENAMED.into_iter().collect();
    // The true pairs: the same name on both sides, or a known rename.
    let by_name: BTreeMap<&str, &str> = candidate_names
        .iter()
        .map(|(address, name)| (name.as_str(), address.as_str()))
        .collect();
    let truth: BTreeMap<&str, &str> = baseline_names
        .iter()
        .filter_map(|(address, name)| {
            let wanted = renamed.get(name.as_str()).copied().unwrap_or(name);
            Some((address.as_str(), *by_name.get(wanted)?))
        })
        .collect();

    let mut server = ServerProcess::start(REA);
    let b = open(&mut server, &baseline_stripped);
    let c = open(&mut server, &candidate_stripped);
    let (matched, left, right, pages) =
        all_pages(&mut server, json!({"baseline": b, "candidate": c}), 5);
    assert!(pages.iter().all(|page| page["complete"] == true));

    // Score the matcher over the procedures both stripped documents have (a procedure the
    // provider does not find without symbols, such as crt code without unwind entries, is
    // discovery's miss, not the matcher's).
    let listed = |pairs_side: &str, only: &[Value]| -> BTreeSet<String> {
        matched
            .iter()
            .map(|pair| pair[pairs_side].as_str().unwrap().to_owned())
            .chain(
                only.iter()
                    .map(|entry| entry["address"].as_str().unwrap().to_owned()),
            )
            .collect()
    };
    let (in_baseline, in_candidate) = (listed("baseline", &left), listed("candidate", &right));
    let truth: BTreeMap<&str, &str> = truth
        .into_iter()
        .filter(|(b, c)| in_baseline.contains(*b) && in_candidate.contains(*c))
        .collect();
    assert!(truth.len() >= 10, "{truth:?}");
    // Precision and recall of the pairs, over procedures the symbols name.
    let scored: Vec<(&str, &str)> = matched
        .iter()
        .map(|pair| {
            (
                pair["baseline"].as_str().unwrap(),
                pair["candidate"].as_str().unwrap(),
            )
        })
        .filter(|(baseline, _)| baseline_names.contains_key(*baseline))
        .collect();
    let correct = scored
        .iter()
        .filter(|(baseline, candidate)| truth.get(baseline) == Some(candidate))
        .count();
    let precision = correct as f64 / scored.len() as f64;
    let recall = correct as f64 / truth.len() as f64;
    eprintln!(
        "pairs: {} scored, {correct} correct of {} true; precision {precision:.3}, recall {recall:.3}",
        scored.len(),
        truth.len()
    );
    let wrong: Vec<(Option<&String>, Option<&String>)> = scored
        .iter()
        .filter(|(baseline, candidate)| truth.get(baseline) != Some(candidate))
        .map(|(baseline, candidate)| {
            (
                baseline_names.get(*baseline),
                candidate_names.get(*candidate),
            )
        })
        .collect();
    assert!(
        precision >= 0.98,
        "precision {precision}, wrong pairs {wrong:?}: {matched:#?}"
    );
    assert!(recall >= 0.90, "recall {recall}: {matched:#?} {truth:#?}");

    let name_of_baseline = |address: &str| baseline_names.get(address).map(String::as_str);
    let pair_of = |name: &str| {
        matched
            .iter()
            .find(|pair| name_of_baseline(pair["baseline"].as_str().unwrap()) == Some(name))
            .unwrap_or_else(|| panic!("{name} is matched: {matched:#?}"))
    };
    for name in SOURCE_CHANGED {
        assert_eq!(pair_of(name)["status"], "changed", "{name}");
        let similarity = pair_of(name)["similarity"].as_f64().unwrap();
        assert!((0.0..1.0).contains(&similarity), "{name}: {similarity}");
    }
    for name in SOURCE_SAME {
        assert_eq!(pair_of(name)["status"], "identical", "{name}");
        assert_eq!(pair_of(name)["similarity"], 1.0, "{name}");
    }
    // The moved function is at another address, paired by its masked instructions.
    let moved = pair_of("moved_report");
    assert_ne!(moved["baseline"], moved["candidate"]);
    let renamed_pair = pair_of("old_name");
    assert_eq!(
        candidate_names[renamed_pair["candidate"].as_str().unwrap()],
        "new_name"
    );
    let left: BTreeSet<&str> = left
        .iter()
        .filter_map(|entry| name_of_baseline(entry["address"].as_str().unwrap()))
        .collect();
    let right: BTreeSet<&str> = right
        .iter()
        .filter_map(|entry| {
            candidate_names
                .get(entry["address"].as_str().unwrap())
                .map(String::as_str)
        })
        .collect();
    assert!(left.contains("removed_feature"), "{left:?}");
    assert!(right.contains("added_feature"), "{right:?}");
    // Stripped: the program's own procedures have no names in the result.
    assert!(pair_of("parse_number")["baseline_name"].is_null());

    // Deterministic: the same call gives the same pages; one page holds them all.
    let (again, ..) = all_pages(&mut server, json!({"baseline": b, "candidate": c}), 5);
    assert_eq!(again, matched);
    let (whole, ..) = all_pages(&mut server, json!({"baseline": b, "candidate": c}), 500);
    assert_eq!(whole, matched);

    // Recorded as Evidence in the baseline's session.
    let result = server.tool(
        "compare_procedures",
        json!({"baseline": b, "candidate": c, "limit": 1}),
    );
    let id = result["structuredContent"]["evidence_id"].as_str().unwrap();
    let evidence = server.tool("get_evidence", json!({"session": b, "id": id}));
    assert_eq!(
        evidence["structuredContent"]["operation"], "compare_procedures",
        "{evidence}"
    );
    assert!(
        !evidence["structuredContent"].to_string().contains(&c),
        "the candidate's handle is not written into the baseline's ledger"
    );
    server.finish();
}

#[test]
fn a_binary_compared_with_itself_is_identical_throughout() {
    let directory = tempfile::tempdir().unwrap();
    let (_, stripped) = build(directory.path(), "v1", BASELINE);
    let mut server = ServerProcess::start(REA);
    let b = open(&mut server, &stripped);
    let c = open(&mut server, &stripped);
    let (matched, left, right, _) =
        all_pages(&mut server, json!({"baseline": b, "candidate": c}), 500);
    assert!(left.is_empty() && right.is_empty(), "{left:?} {right:?}");
    for pair in &matched {
        assert_eq!(pair["baseline"], pair["candidate"], "{pair}");
        assert_eq!(pair["status"], "identical", "{pair}");
    }
    server.finish();
}

#[test]
fn a_procedure_bound_cuts_the_comparison_and_says_so() {
    let directory = tempfile::tempdir().unwrap();
    let (_, stripped) = build(directory.path(), "v1", BASELINE);
    let mut server = ServerProcess::start(REA);
    let b = open(&mut server, &stripped);
    let c = open(&mut server, &stripped);
    let result = server.tool(
        "compare_procedures",
        json!({"baseline": b, "candidate": c, "max_procedures": 2}),
    );
    let page = &result["structuredContent"];
    assert_eq!(page["complete"], false, "{result}");
    assert_eq!(page["cut_short_by"], "procedures");
    assert_eq!(page["baseline"]["compared"], 2);
    assert_eq!(page["totals"]["matched"], 2);
    server.finish();
}

fn write(directory: &Path, name: &str, bytes: &[u8]) -> String {
    let path = directory.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

fn handle(result: &serde_json::Map<String, Value>) -> String {
    result["session"].as_str().unwrap().to_owned()
}

#[test]
fn refusals_name_their_argument() {
    let directory = tempfile::tempdir().unwrap();
    let x86 = write(directory.path(), "x86", &code::x86_64().bytes);
    let arm = write(directory.path(), "arm", &code::aarch64().bytes);
    let empty = write(
        directory.path(),
        "empty",
        &elf::build(&Spec {
            functions: Vec::new(),
            stripped: false,
        })
        .bytes,
    );
    let (_, tools) = closed();
    let no_session = failure(&tools, "compare_procedures", json!({}));
    let a = handle(&success(&tools, "open_binary", json!({"path": x86})));
    let b = handle(&success(&tools, "open_binary", json!({"path": arm})));
    let e = handle(&success(&tools, "open_binary", json!({"path": empty})));
    let same = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": a}),
    );
    let same_default = failure(&tools, "compare_procedures", json!({"session": a}));
    let architectures = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": b}),
    );
    let empty_binary = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": e}),
    );
    let zero = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": b, "max_procedures": 0}),
    );
    let bad_cursor = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": a, "candidate_document": "nope"}),
    );
    success(&tools, "close_binary", json!({"session": b}));
    let closed_handle = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": b}),
    );
    let text = [
        ("no session", no_session),
        ("same session twice", same),
        ("same session by default", same_default),
        ("different architectures", architectures),
        ("empty binary", empty_binary),
        ("a bound of zero", zero),
        ("unknown candidate document", bad_cursor),
        ("closed handle", closed_handle),
    ]
    .iter()
    .map(|(case, message)| format!("{case}:\n{message}\n"))
    .collect::<Vec<_>>()
    .join("\n")
    .replace(&a, "[baseline]")
    .replace(&b, "[candidate]")
    .replace(&e, "[empty]");
    snapshot("tools_compare__refusals", &text, None);
}

#[test]
fn a_cursor_from_elsewhere_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let x86 = write(directory.path(), "x86", &code::x86_64().bytes);
    let (_, tools) = closed();
    let a = handle(&success(&tools, "open_binary", json!({"path": x86})));
    let b = handle(&success(
        &tools,
        "open_binary",
        json!({"path": x86, "new_session": true}),
    ));
    let page = success(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": b}),
    );
    assert_eq!(page["totals"]["identical"], page["totals"]["matched"]);
    assert_eq!(page["only_in_baseline"], json!([]));
    let message = failure(
        &tools,
        "compare_procedures",
        json!({"baseline": a, "candidate": b, "cursor": "cp:999"}),
    );
    snapshot("tools_compare__cursor_from_elsewhere", &message, None);
}

/// A provider of two documents, `v1` and `v2`, of 250 synthetic procedures each, counting
/// the fingerprint lists it is asked for.
struct CountingProvider {
    fingerprint_calls: std::sync::atomic::AtomicUsize,
}

impl rea::session::Provider for CountingProvider {
    fn id(&self) -> &str {
        "counting"
    }

    fn supports(&self, operation: rea::session::Operation) -> bool {
        matches!(
            operation,
            rea::session::Operation::ListDocuments | rea::session::Operation::CompareProcedures
        )
    }

    fn list_documents(
        &self,
    ) -> Result<Vec<rea::session::DocumentInfo>, rea::session::ProviderError> {
        Ok(vec![
            rea::session::DocumentInfo::named("v1"),
            rea::session::DocumentInfo::named("v2"),
        ])
    }

    fn list_procedures(
        &self,
        _document: &str,
        _cursor: Option<&str>,
        _limit: usize,
    ) -> Result<rea::core::ProcedurePage, rea::session::ProviderError> {
        Err(rea::session::ProviderError::Unsupported(
            rea::session::Operation::ListProcedures,
        ))
    }

    fn fingerprints(
        &self,
        document: &str,
        _bounds: &rea::session::FingerprintBounds,
    ) -> Result<rea::session::Fingerprints, rea::session::ProviderError> {
        self.fingerprint_calls
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let shift = u64::from(document == "v2") * 0x10;
        let procedures = (0..250u64)
            .map(|index| rea::core::diff::Fingerprint {
                address: 0x1000 + index * 0x40 + shift,
                size: 0x30,
                bytes: index,
                shape: index,
                tokens: vec![index as u32],
                ..Default::default()
            })
            .collect();
        Ok(rea::session::Fingerprints {
            architecture: "x86_64".into(),
            procedures,
            total: 250,
            cut_short_by: None,
            analysis: rea::session::AnalysisStatus {
                complete: true,
                cut_short_by: None,
                instructions: 250,
                references: 0,
            },
        })
    }
}

/// Reading a comparison page by page compares once: the pages are cut from the comparison
/// the store keeps; other bounds compare again.
#[tokio::test]
async fn the_pages_of_one_comparison_are_cut_from_one_computation() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let provider = Arc::new(CountingProvider {
        fingerprint_calls: AtomicUsize::new(0),
    });
    let session = Arc::new(rea::session::Session::new());
    let declared: Arc<dyn rea::session::Provider> = provider.clone();
    session.open_providers("counting", vec![declared]).unwrap();
    let server = rea::mcp::Server::with_session(rea::mcp::ServerConfig::default(), session);
    let mut client = crate::support::Client::start(server);
    client.initialize("2025-11-25").await;
    let call = |cursor: Option<String>, max_procedures: u64| {
        let mut arguments = json!({"baseline_document": "v1", "candidate_document": "v2",
                                   "limit": 100, "max_procedures": max_procedures});
        if let Some(cursor) = cursor {
            arguments["cursor"] = cursor.into();
        }
        json!({"name": "compare_procedures", "arguments": arguments})
    };
    let (mut cursor, mut matched) = (None, 0);
    loop {
        let answer = client.request("tools/call", call(cursor.take(), 500)).await;
        let page = &answer["result"]["structuredContent"];
        matched += page["matched"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .len();
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(matched, 250);
    // Three pages, one fingerprint list per side.
    assert_eq!(provider.fingerprint_calls.load(Ordering::SeqCst), 2);
    let other = client.request("tools/call", call(None, 400)).await;
    assert_ne!(other["result"]["isError"], true, "{other}");
    assert_eq!(provider.fingerprint_calls.load(Ordering::SeqCst), 4);
    client.finish().await;
}

/// A function removed and another added in its place, neither referring to a string, are
/// reported as removed and added: their place and their likeness (both small arithmetic) do
/// not make them one function.
#[test]
fn a_removed_and_an_added_function_in_one_place_stay_apart() {
    // The changed function lies between two that stay: `main` goes to `.text.startup`.
    const BEFORE: &str = r#"
KEEP int alpha(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * 3 ^ x; return s; }
"#;
    const AFTER: &str = r#"
KEEP int beta(const char *s) { int n = 0; while (*s) n += *s++ == 'a'; return n; }
KEEP unsigned gamma_(unsigned v) { v ^= v >> 16; v *= 0x45d9f3b; v ^= v >> 16; return v; }
"#;
    const OLD: &str = r#"
KEEP long removed_two(long a, long b) { return a > b ? a - b : b * 2; }
"#;
    const NEW: &str = r#"
KEEP long added_two(long a, long b) { return a * b + (a ^ b); }
"#;
    const MAIN: &str = r#"
int main(int argc, char **argv) {
    printf("%d %ld %d %u\n", alpha(argc), TWO(argc, 3), beta(argv[0]), gamma_(argc));
    return 0;
}
"#;
    let compared = Compared::sources(
        &format!("#define TWO removed_two\n{BEFORE}{OLD}{AFTER}{MAIN}"),
        &format!("#define TWO added_two\n{BEFORE}{NEW}{AFTER}{MAIN}"),
    );
    compared.named_pairs();
    assert!(compared.only_in_baseline().contains("removed_two"));
    assert!(compared.only_in_candidate().contains("added_two"));
}

/// Built without optimisation (a compiler's default), a function removed from one call of
/// `main` and another added at another call are reported removed and added, however alike
/// their code (every statement a load, an operation and a store); the steps called around
/// them in the same order place them apart.
#[test]
fn unoptimised_a_removed_and_an_added_function_called_in_other_places_stay_apart() {
    const STEPS: &str = r#"
volatile long sink;
KEEP long step_one(long x, long b) { for (long i = 0; i < (b & 7); i++) x = x * 31 + i; return x; }
KEEP long step_two(long x, long b) { if (x > 1234) x -= b; else x ^= 77777; return x; }
KEEP long step_three(long x, long b) { switch (x & 3) { case 0: return b; case 1: return x; default: return x * b; } }
KEEP long step_four(long x, long b) { return (x << 3) | (b >> 2); }
KEEP long step_five(long x, long b) { long s = 0; while (x > 0) { s += x % 10; x /= 10; } return s + b; }
KEEP long step_six(long x, long b) { return x > b ? x - b : b - x; }
"#;
    const REMOVED: &str = r#"
KEEP long removed_step(long x, long b) { x = (x ^ 92555) + (b >> 6); x = x * 17 - b; return x; }
"#;
    const ADDED: &str = r#"
KEEP long added_step(long x, long b) { x = (x ^ 43128) + (b >> 5); x = x * 13 - b; return x; }
"#;
    // `main` calls the steps in turn, and the removed or the added one where `order` says.
    let calling = |order: &[&str]| {
        let calls: String = (order.iter().enumerate())
            .map(|(at, step)| format!("    sink += {step}(argc, {at});\n"))
            .collect();
        format!("int main(int argc, char **argv) {{\n    (void)argv;\n{calls}    return 0;\n}}\n")
    };
    let (one, two) = ("step_one", "step_two");
    let rest = ["step_three", "step_four", "step_five", "step_six"];
    let old_main = calling(&[&[one, two, "removed_step"][..], &rest].concat());
    let new_main = calling(&[&[one, two][..], &rest, &["added_step"]].concat());
    let compared = Compared::built_with(
        &["-O0"],
        &format!("{STEPS}{REMOVED}{old_main}"),
        &format!("{STEPS}{ADDED}{new_main}"),
    );
    let paired: BTreeSet<String> = compared
        .named_pairs()
        .into_iter()
        .filter_map(|(name, _)| name)
        .collect();
    assert!(
        paired.contains("step_six") && paired.contains("main"),
        "{paired:?}"
    );
    assert!(
        compared.only_in_baseline().contains("removed_step"),
        "{:#?}",
        compared.matched
    );
    assert!(compared.only_in_candidate().contains("added_step"));
}

/// A function that gets a twin in the new version (the same code over another table of
/// names) stays paired with itself, told apart by the strings of the table it indexes; and a
/// bracket function replaced by another of its shape at the same call, with other thresholds,
/// is reported removed and added, not changed.
#[test]
fn a_twin_over_another_table_and_a_replaced_bracket_are_told_apart() {
    const NAMES: &str = r#"
KEEP const char *weekday_name(int d) {
    static const char *names[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday",
                                  "Friday", "Saturday"};
    return names[((d % 7) + 7) % 7];
}
"#;
    const TWIN: &str = r#"
KEEP const char *weekday_abbrev(int d) {
    static const char *names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    return names[((d % 7) + 7) % 7];
}
"#;
    const OLD: &str = r#"
KEEP int tax_bracket(long income) {
    if (income > 500000) return 37; if (income > 200000) return 35; if (income > 90000) return 24;
    if (income > 40000) return 22; if (income > 10000) return 12; return 10;
}
int main(int argc, char **argv) {
    int x = argc > 1 ? atoi(argv[1]) : 3;
    printf("%s %d\n", weekday_name(x), tax_bracket(x * 1000L));
    return 0;
}
"#;
    const NEW: &str = r#"
KEEP int fee_bracket(long amount) {
    if (amount > 900000) return 9; if (amount > 300000) return 7; if (amount > 50000) return 5;
    if (amount > 5000) return 3; return 1;
}
int main(int argc, char **argv) {
    int x = argc > 1 ? atoi(argv[1]) : 3;
    printf("%s %d\n", weekday_name(x), fee_bracket(x * 1000L));
    puts(weekday_abbrev(x + 1));
    return 0;
}
"#;
    let compared = Compared::sources(&format!("{NAMES}{OLD}"), &format!("{NAMES}{TWIN}{NEW}"));
    let paired: BTreeSet<String> = compared
        .named_pairs()
        .into_iter()
        .filter_map(|(name, _)| name)
        .collect();
    assert!(paired.contains("weekday_name"), "{:#?}", compared.matched);
    assert!(compared.only_in_baseline().contains("tax_bracket"));
    let added = compared.only_in_candidate();
    assert!(added.contains("fee_bracket") && added.contains("weekday_abbrev"));
}

/// Handlers reached only through a table of function pointers (a dispatch table), alike to
/// each other and each rewritten in the new version, pair by their slot in the table: the
/// one unchanged handler and the code that names the table vouch for it.
#[test]
fn handlers_rewritten_in_a_dispatch_table_pair_by_their_slot() {
    const HANDLERS: &str = r#"
#define HANDLER(name, k, EXTRA) KEEP long name(long *v, int n) { \
    long s = k; \
    for (int i = 0; i < n; i++) s = s * (k + 3) + v[i] % (k + 11); \
    EXTRA \
    return s ^ (k * 7); }
#define SAME_HANDLER KEEP long keeps(long *v, int n) { \
    long s = 0; for (int i = 0; i < n; i++) s += v[i] * v[i]; \
    return s + (long)strlen("the handler that stays"); }
"#;
    const TABLE: &str = r#"
SAME_HANDLER
HANDLER(on_open, 3, EXTRA)
HANDLER(on_read, 4, EXTRA)
HANDLER(on_write, 5, EXTRA)
HANDLER(on_seek, 6, EXTRA)
HANDLER(on_close, 7, EXTRA)
static long (*const handlers[])(long *, int) = {keeps, on_open, on_read, on_write, on_seek, on_close};

int main(int argc, char **argv) {
    long values[4] = {argc, 2, 3, 4};
    printf("dispatching %ld\n", handlers[argc % 6](values, 4));
    return 0;
}
"#;
    let compared = Compared::sources(
        &format!("{HANDLERS}#define EXTRA\n{TABLE}"),
        &format!("{HANDLERS}#define EXTRA if (s < 0) s = -s - n; s += s >> 9;\n{TABLE}"),
    );
    let mut handlers = BTreeSet::new();
    let mut by_slot = 0;
    for (name, pair) in compared.named_pairs() {
        if let Some(name) = name.filter(|name| name.starts_with("on_")) {
            assert_eq!(pair["status"], "changed", "{pair}");
            by_slot += usize::from(pair["signal"] == "pointer_table");
            handlers.insert(name);
        }
    }
    let matched = &compared.matched;
    assert_eq!(handlers.len(), 5, "every handler is paired: {matched:#?}");
    assert!(by_slot >= 1, "some handler pairs by its slot: {matched:#?}");
}

/// Two method tables of records `{name, function, flags}`, as a Python extension or a Lua
/// library declares them, both with a `flush` and a `close`, laid out one after the other
/// and named from data only: each method rewritten, the new release with one more method
/// and its records in another order. Each method pairs with the one that the counterpart
/// table names alike (the end marker of one table tells it from the next).
#[test]
fn methods_rewritten_in_tables_of_named_records_pair_by_their_names() {
    const METHODS: &str = r#"
struct method { const char *name; long (*call)(long *, int); int flags; };
#define OLD_BODY(k) long s = k; for (int i = 0; i < n; i++) s = s * (k + 3) + v[i] % (k + 11); return s;
#define NEW_BODY(k) long s = 0; for (int i = n - 1; i >= 0; i -= 2) s ^= (v[i] << (k % 5)) - (s >> 3); return s + n * k;
#define METHOD(name, k) KEEP long name(long *v, int n) { BODY(k) }
METHOD(reader_read, 3) METHOD(reader_flush, 4) METHOD(reader_close, 5) METHOD(reader_seek, 6)
METHOD(writer_write, 7) METHOD(writer_flush, 8) METHOD(writer_close, 9)
"#;
    const OLD_TABLES: &str = r#"
static const struct method reader_methods[] = {
    {"read", reader_read, 1}, {"flush", reader_flush, 2}, {"close", reader_close, 3},
    {"seek", reader_seek, 4}, {0, 0, 0}};
static const struct method writer_methods[] = {
    {"write", writer_write, 1}, {"flush", writer_flush, 2}, {"close", writer_close, 3}, {0, 0, 0}};
"#;
    const NEW_TABLES: &str = r#"
KEEP long writer_tell(long *v, int n) { return v[n - 1] * 17 + n; }
static const struct method writer_methods[] = {
    {"close", writer_close, 3}, {"tell", writer_tell, 5}, {"write", writer_write, 1},
    {"flush", writer_flush, 2}, {0, 0, 0}};
static const struct method reader_methods[] = {
    {"seek", reader_seek, 4}, {"close", reader_close, 3}, {"read", reader_read, 1},
    {"flush", reader_flush, 2}, {0, 0, 0}};
"#;
    // The classes name their tables from data only, as a Python type names its methods.
    const MAIN: &str = r#"
static const struct class { const char *name; const struct method *methods; } classes[] = {
    {"reader", reader_methods}, {"writer", writer_methods}};
int main(int argc, char **argv) {
    long values[4] = {argc, 2, 3, 4};
    const struct method *table = classes[argc % 2].methods;
    printf("%s %ld\n", table[argc % 3].name, table[argc % 3].call(values, 4));
    return 0;
}
"#;
    let compared = Compared::sources(
        &format!("#define BODY OLD_BODY\n{METHODS}{OLD_TABLES}{MAIN}"),
        &format!("#define BODY NEW_BODY\n{METHODS}{NEW_TABLES}{MAIN}"),
    );
    let mut by_name = BTreeMap::new();
    for (name, pair) in compared.named_pairs() {
        if let Some(name) =
            name.filter(|name| name.starts_with("reader_") || name.starts_with("writer_"))
        {
            assert_eq!(pair["status"], "changed", "{pair}");
            by_name.insert(name, pair["signal"].as_str().unwrap().to_owned());
        }
    }
    let methods = [
        "reader_close",
        "reader_flush",
        "reader_read",
        "reader_seek",
        "writer_close",
        "writer_flush",
        "writer_write",
    ];
    let expected: BTreeMap<String, String> = methods
        .iter()
        .map(|name| (name.to_string(), "record_name".to_owned()))
        .collect();
    assert_eq!(by_name, expected, "{:#?}", compared.matched);
    assert!(compared.only_in_candidate().contains("writer_tell"));
}

/// Three instances of one template (a match finder over 4, 5 or 6 bytes, each with its hash
/// prime), reached through a table of function pointers and then from a `switch`, each
/// rewritten alike: what tells them apart (the prime, the shift) pairs them, through the
/// immediates that the likeness weighs (`likeness`), or, when the instances are alike
/// within the margin, through those of each instance that its siblings lack (`twins`, as
/// in zstd 1.5.5).
#[test]
fn instances_of_one_template_pair_by_what_tells_them_apart() {
    const FINDERS: &str = r#"
#define FIND(name, mls, prime) KEEP long name(const unsigned char *p, long n, unsigned *table) { \
    long best = 0; \
    for (long i = 0; i + 8 <= n; i++) { \
        unsigned long long v; memcpy(&v, p + i, 8); \
        unsigned h = (unsigned)(((v << (64 - 8 * mls)) * prime) >> 52); \
        long prev = table[h]; table[h] = (unsigned)i; \
        REWRITE \
        if (prev && memcmp(p + prev, p + i, mls) == 0 && i - prev > best) best = i - prev; \
    } \
    return best; }
FIND(find4, 4, 2654435761ULL)
FIND(find5, 5, 889523592379ULL)
FIND(find6, 6, 227718039650203ULL)
"#;
    const OLD: &str = r#"
static long (*const finders[])(const unsigned char *, long, unsigned *) = {find4, find5, find6};
int main(int argc, char **argv) {
    static unsigned table[4096];
    const char *text = argc > 1 ? argv[1] : "abracadabra abracadabra";
    long found = finders[argc % 3]((const unsigned char *)text, (long)strlen(text), table);
    printf("%ld %u\n", found, checksum(text));
    return 0;
}
"#;
    const NEW: &str = r#"
KEEP long find_any(int kind, const unsigned char *p, long n, unsigned *table) {
    switch (kind) {
    case 0: return find4(p, n, table);
    case 1: return find5(p, n, table);
    default: return find6(p, n, table);
    }
}
int main(int argc, char **argv) {
    static unsigned table[4096];
    const char *text = argc > 1 ? argv[1] : "abracadabra abracadabra";
    long found = find_any(argc % 3, (const unsigned char *)text, (long)strlen(text), table);
    printf("%ld %u\n", found, checksum(text));
    return 0;
}
"#;
    let rewrite = "if (prev > i) { table[h] = 0; continue; } \
                   if (table[(h + 1) & 4095] == prev) prev = i - 1 - (i & 1);";
    let compared = Compared::sources(
        &format!("#define REWRITE\n{FINDERS}{OLD}"),
        &format!("#define REWRITE {rewrite}\n{FINDERS}{NEW}"),
    );
    // `named_pairs` fails on a wrong pair.
    let mut by_what_tells_apart = BTreeSet::new();
    for (name, pair) in compared.named_pairs() {
        if pair["signal"] == "twins" || pair["signal"] == "likeness" {
            assert_eq!(pair["status"], "changed", "{pair}");
            by_what_tells_apart.extend(name);
        }
    }
    // find4 hashes 4 bytes with 32-bit arithmetic and is less alike to its siblings; it may
    // stay unpaired, never paired wrongly.
    assert!(
        by_what_tells_apart.contains("find5") && by_what_tells_apart.contains("find6"),
        "{:#?}",
        compared.matched
    );
}

/// A function rewritten past any likeness, and one whose body moved into a new callee (it
/// is now a wrapper calling it), keep the two callers each: both pair by them
/// (`same_callers`, as brotli 1.1.0's `BrotliDecoderStateInit` and
/// `BrotliFindAllStaticDictionaryMatches`); the new callee is reported new.
#[test]
fn functions_rewritten_or_split_in_their_place_pair_by_their_callers() {
    const STATE: &str = r#"
struct state { int count; int table[64]; unsigned seed; char name[16]; };
#define FIND_MATCHES(more) \
    int found = 0; \
    for (int i = 0; text[i] more; i++) { \
        unsigned h = ((unsigned char)text[i] * 2654435761u) >> 26; \
        if (s->table[h] > 0 && text[s->table[h] - 1] == text[i]) found++; \
        s->table[h] = i + 1; \
        s->seed = s->seed * 16777619u ^ (unsigned char)text[i]; \
    } \
    s->count += found; \
    return found;
"#;
    const OLD: &str = r#"
KEEP void reset_state(struct state *s) { memset(s, 0, sizeof *s); s->seed = 2166136261u; }
KEEP int find_matches(struct state *s, const char *text) { FIND_MATCHES() }
"#;
    const NEW: &str = r#"
KEEP void reset_state(struct state *s) {
    s->count = 0;
    for (int i = 0; i < 64; i++) s->table[i] = (i & 3) == 3 ? -1 : 0;
    s->seed = s->seed * 31u + 7u;
    strcpy(s->name, "fresh");
}
KEEP int find_matches_for(struct state *s, const char *text, int limit) {
    FIND_MATCHES(&& i < limit)
}
KEEP int find_matches(struct state *s, const char *text) {
    int found = find_matches_for(s, text, 1 << 20);
    return found < 0 ? 0 : found;
}
"#;
    const CALLERS: &str = r#"
KEEP int encode_all(struct state *s, const char *text) {
    reset_state(s);
    return find_matches(s, text) + s->count;
}
KEEP int encode_one(struct state *s, const char *text, int k) {
    s->count = k;
    return find_matches(s, text) * 2 + k;
}
KEEP unsigned decode_all(struct state *s, int n) {
    reset_state(s);
    return s->seed ^ (unsigned)n;
}
int main(int argc, char **argv) {
    static struct state s;
    const char *text = argc > 1 ? argv[1] : "abracadabra";
    printf("%d %d %u\n", encode_all(&s, text), encode_one(&s, text, argc), decode_all(&s, argc));
    return 0;
}
"#;
    let compared = Compared::sources(
        &format!("{STATE}{OLD}{CALLERS}"),
        &format!("{STATE}{NEW}{CALLERS}"),
    );
    let by_callers: BTreeSet<String> = (compared.named_pairs().into_iter())
        .filter(|(_, pair)| pair["signal"] == "same_callers")
        .filter_map(|(name, pair)| {
            assert_eq!(pair["status"], "changed", "{pair}");
            name
        })
        .collect();
    assert_eq!(
        by_callers,
        BTreeSet::from(["find_matches".to_owned(), "reset_state".to_owned()]),
        "{:#?}",
        compared.matched
    );
    assert!(compared.only_in_candidate().contains("find_matches_for"));
}

/// A function rewritten at its one call site (a power by repeated multiplication, then by
/// squaring), too unlike itself for the call-graph round, pairs by its caller and a
/// decisive likeness (`same_callers`); a smaller function beside it that the new version
/// replaced is reported removed and added.
#[test]
fn a_function_rewritten_at_its_one_call_pairs_by_its_caller() {
    const OLD: &str = r#"
KEEP long ipow(long b, long e) { long r = 1; while (e-- > 0) r *= b; return r; }
KEEP long removed_two(long a, long b) { return a > b ? a - b : b * 2; }
"#;
    const NEW: &str = r#"
KEEP long ipow(long b, long e) {
    long r = 1;
    if (e < 0) return 0;
    while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
    return r;
}
KEEP long added_two(long a, long b) { return a * b + (a ^ b); }
"#;
    const CALLER: &str = r#"
KEEP long power_line(const char *text) {
    long b = parse_number(text), e = parse_number(strchr(text, '^') ? strchr(text, '^') + 1 : "1");
    return TWO(ipow(b, e), b);
}
int main(int argc, char **argv) {
    printf("%ld\n", power_line(argc > 1 ? argv[1] : "2^10"));
    return 0;
}
"#;
    let compared = Compared::sources(
        &format!("#define TWO removed_two\n{OLD}{CALLER}"),
        &format!("#define TWO added_two\n{NEW}{CALLER}"),
    );
    let pairs = compared.named_pairs();
    let ipow = pairs
        .iter()
        .find(|(name, _)| name.as_deref() == Some("ipow"))
        .map(|(_, pair)| pair)
        .unwrap_or_else(|| panic!("ipow is not paired: {:#?}", compared.matched));
    assert_eq!(ipow["signal"], "same_callers", "{ipow}");
    assert_eq!(ipow["status"], "changed", "{ipow}");
    assert!(compared.only_in_baseline().contains("removed_two"));
    assert!(compared.only_in_candidate().contains("added_two"));
}

/// Functions that only moved are `identical` even when the nops that align their loops
/// changed with their address (procedures aligned less than loops, as on AArch64; here
/// forced on x86-64 with `-falign-functions=1 -falign-loops=16`, a new function placed
/// before them moving them by a few bytes).
#[test]
fn functions_moved_with_other_loop_padding_are_identical() {
    const FUNCTIONS: &str = r#"
KEEP long sum_to(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * i ^ (i >> 3); return s; }
KEEP long count_odd(const int *v, int n) { long c = 0; for (int i = 0; i < n; i++) c += v[i] & 1; return c; }
KEEP long collatz(long n) { long k = 0; while (n > 1) { n = n & 1 ? 3 * n + 1 : n / 2; k++; } return k; }
"#;
    const MAIN: &str = r#"
int main(int argc, char **argv) {
    int v[5] = {argc, 2, 3, 4, 5};
    long n = argc > 1 ? atol(argv[1]) : 27;
    n += EARLY(argc);
    printf("%ld %ld %ld\n", sum_to(n), count_odd(v, 5), collatz(n));
    return 0;
}
"#;
    const EARLY: &str = "KEEP int early(int x) { return x * 7 + 3; }\n#define EARLY early\n";
    let compared = Compared::built_with(
        &["-falign-functions=1", "-falign-loops=16"],
        &format!("#define EARLY(x) 0\n{FUNCTIONS}{MAIN}"),
        &format!("{EARLY}{FUNCTIONS}{MAIN}"),
    );
    let statuses: BTreeMap<String, String> = (compared.named_pairs().into_iter())
        .filter_map(|(name, pair)| Some((name?, pair["status"].as_str()?.to_owned())))
        .collect();
    for name in ["sum_to", "count_odd", "collatz"] {
        assert_eq!(
            statuses.get(name).map(String::as_str),
            Some("identical"),
            "{name}: {:#?}",
            compared.matched
        );
    }
    assert!(compared.only_in_candidate().contains("early"));
}

/// A byte loop over a string (`ldrb`, `cbz` to the end, then add or subtract 1, `strb` with
/// post-increment, `ldrb`, `cbnz` back, `ret`), with `nops` before the loop to align it.
fn byte_loop(subtract: bool, nops: u32) -> Vec<u32> {
    let nop = 0xd503_201f;
    let skip_to_end = 5 + nops; // from the cbz to the ret
    let mut words = vec![0x3940_0001, 0x3400_0001 | (skip_to_end << 5)]; // ldrb w1, [x0]; cbz w1
    words.extend((0..nops).map(|_| nop));
    words.extend([
        if subtract { 0x5100_0421 } else { 0x1100_0421 }, // sub/add w1, w1, #1
        0x3800_1401,                                      // strb w1, [x0], #1
        0x3940_0001,                                      // ldrb w1, [x0]
        0x3500_0001 | ((-3i32 as u32 & 0x7_ffff) << 5),   // cbnz w1, the loop
        0xd65f_03c0,                                      // ret
    ]);
    words
}

/// On AArch64 a function is aligned less than a loop in it, so the nops before its loop
/// change with its address: two functions laid out in the other order, each with the other's
/// padding, pair with themselves by instruction hash and are still `identical`.
#[test]
fn aarch64_functions_whose_loop_padding_moved_are_identical() {
    let directory = tempfile::tempdir().unwrap();
    let (old, old_at) = code::aarch64_calling("old_", &[byte_loop(false, 0), byte_loop(true, 1)]);
    let (new, new_at) = code::aarch64_calling("new_", &[byte_loop(true, 0), byte_loop(false, 1)]);
    let mut server = ServerProcess::start(REA);
    let b = open(
        &mut server,
        Path::new(&write(directory.path(), "old", &old)),
    );
    let c = open(
        &mut server,
        Path::new(&write(directory.path(), "new", &new)),
    );
    let (matched, _, _, _) = all_pages(&mut server, json!({"baseline": b, "candidate": c}), 100);
    server.finish();
    let address = |at: u64| format!("{at:#x}");
    for (old, new) in [(old_at[0], new_at[1]), (old_at[1], new_at[0])] {
        let pair = (matched.iter())
            .find(|pair| pair["baseline"] == address(old))
            .unwrap_or_else(|| panic!("{old:#x} is not paired: {matched:#?}"));
        assert_eq!(pair["candidate"], address(new), "{pair}");
        assert_eq!(pair["signal"], "instruction_hash", "{pair}");
        assert_eq!(pair["status"], "identical", "{pair}");
    }
}

/// Two versions of a 32-bit x86 position-independent library (`cc -m32 -fPIC`) compiled at
/// -O2, stripped and compared through `rea serve`: the matched pairs by baseline name (each
/// checked to carry the same name in the candidate), the server, and both sessions.
fn compared_32_bit_libraries(
    directory: &Path,
    old_source: &str,
    new_source: &str,
) -> (BTreeMap<String, Value>, ServerProcess) {
    let library = |name: &str, source: &str| {
        let path = directory.join(format!("{name}.c"));
        std::fs::write(&path, source).unwrap();
        let (built, stripped) = (
            directory.join(format!("{name}.so")),
            directory.join(format!("{name}.stripped.so")),
        );
        let flags = ["-m32", "-O2", "-shared", "-fPIC", "-nostdlib", "-o"];
        let mut arguments: Vec<&str> = flags.to_vec();
        arguments.extend([built.to_str().unwrap(), path.to_str().unwrap()]);
        run("cc", &arguments);
        let stripped_path = stripped.to_str().unwrap();
        run("strip", &["-o", stripped_path, built.to_str().unwrap()]);
        (symbols(&built), stripped)
    };
    let (old_names, old) = library("old", old_source);
    let (new_names, new) = library("new", new_source);
    let mut server = ServerProcess::start(REA);
    let b = open(&mut server, &old);
    let c = open(&mut server, &new);
    let (matched, ..) = all_pages(&mut server, json!({"baseline": b, "candidate": c}), 100);
    let name = |names: &BTreeMap<String, String>, address: &Value| {
        names.get(address.as_str().unwrap()).cloned()
    };
    let pairs = (matched.into_iter())
        .filter_map(|pair| {
            let old = name(&old_names, &pair["baseline"])?;
            assert_eq!(
                Some(&old),
                name(&new_names, &pair["candidate"]).as_ref(),
                "{pair}"
            );
            Some((old, pair))
        })
        .collect();
    (pairs, server)
}

/// x86 (32-bit) code holds numbers and addresses alike in 32-bit immediates. In a
/// position-independent library only an immediate the loader relocates is an address (its
/// data is reached relative to the GOT), so a number that changed, even one that falls inside
/// the image, is a changed constant; taken for an address, it was masked and the function was
/// called identical. One below 64 KiB is a number anywhere: it changes the instructions too,
/// as on x86-64.
#[test]
fn a_changed_number_in_32_bit_x86_code_is_a_changed_constant() {
    let directory = tempfile::tempdir().unwrap();
    let source = |number: u32, small: u32| {
        format!(
            "__attribute__((noinline)) unsigned scale(unsigned x) {{ return x * {number:#x}u + 7; }}\n\
             __attribute__((noinline)) unsigned small(unsigned x) {{ return x * {small:#x}u + 3; }}\n\
             __attribute__((noinline)) unsigned mix(unsigned x) {{ x ^= x >> 16; x *= 0x45d9f3bu; return x ^ (x >> 16); }}\n\
             static const unsigned char filler[0x30000] = {{1}};\n\
             __attribute__((noinline)) unsigned fill(unsigned i) {{ return filler[i % sizeof filler]; }}\n"
        )
    };
    // The filler makes 0x12345 an address inside the image.
    let (pairs, mut server) = compared_32_bit_libraries(
        directory.path(),
        &source(0x12345, 0x1234),
        &source(0x12346, 0x1235),
    );
    assert_eq!(pairs["scale"]["status"], "changed");
    assert_eq!(pairs["scale"]["changed"], json!(["constants"]));
    assert_eq!(
        pairs["small"]["changed"],
        json!(["instructions", "constants"])
    );
    for name in ["mix", "fill"] {
        assert_eq!(pairs[name]["status"], "identical", "{}", pairs[name]);
    }
    // The disassembly names no target for the number (the candidate is the current session).
    let code = server.tool("disassemble", json!({"procedure": "scale"}));
    let instructions = code["structuredContent"]["instructions"]
        .as_array()
        .unwrap();
    let multiply = (instructions.iter())
        .find(|instruction| {
            instruction["operands"]
                .as_str()
                .unwrap()
                .contains("0x12346")
        })
        .unwrap_or_else(|| panic!("no instruction holds 0x12346: {code}"));
    assert_eq!(multiply["target"], Value::Null, "{multiply}");
    server.finish();
}

/// x86 (32-bit) position-independent code reaches its data relative to the GOT, whose address
/// it loads into a register. Read so, a function whose data only moved is identical (its
/// offsets from the GOT were taken for code that changed), and one whose string changed has a
/// changed string (no string was seen at all).
#[test]
fn data_reached_relative_to_the_got_is_referred_to_in_32_bit_x86_code() {
    let directory = tempfile::tempdir().unwrap();
    let source = |greeting: &str, banner: bool| {
        let banner = if banner {
            "__attribute__((noinline)) const char *banner(void) { return \"version two, now with a banner\"; }\n"
        } else {
            ""
        };
        format!(
            "{banner}static const char *const words[] = {{\"zero\", \"one\", \"two\", \"three\"}};\n\
             __attribute__((noinline)) const char *word(unsigned x) {{ return words[x & 3]; }}\n\
             __attribute__((noinline)) const char *greeting(void) {{ return \"{greeting}, reader\"; }}\n"
        )
    };
    let (pairs, mut server) = compared_32_bit_libraries(
        directory.path(),
        &source("hello", false),
        &source("hullo", true),
    );
    assert_eq!(pairs["word"]["status"], "identical", "{}", pairs["word"]);
    assert_eq!(pairs["greeting"]["changed"], json!(["strings"]));
    // The disassembly names the string (the candidate is the current session).
    let code = server.tool("disassemble", json!({"procedure": "greeting"}));
    let instructions = code["structuredContent"]["instructions"]
        .as_array()
        .unwrap();
    let strings = server.tool("search_strings", json!({"contains": "hullo"}));
    server.finish();
    let string = &strings["structuredContent"]["strings"][0]["address"];
    assert!(
        (instructions.iter()).any(|instruction| &instruction["target"] == string),
        "no instruction refers to {string}: {code}"
    );
}

/// In a shared library built without hidden visibility, the library's own code calls its
/// exported functions through the PLT, as it would call an import. Such a call is a call to
/// the function the file defines: a caller of a function only renamed is identical (it was
/// `changed`, its "import" renamed), and the callee pairs by the caller's place.
#[test]
fn a_call_through_the_plt_to_a_function_the_library_defines_calls_that_function() {
    // x86-64, and 32-bit x86, whose PLT jumps relative to the GOT in `ebx`.
    for flags in [&[][..], &["-m32", "-nostdlib"][..]] {
        let directory = tempfile::tempdir().unwrap();
        // The candidate's new function moves the PLT entries, so the caller's bytes differ.
        let library = |name: &str, helper: &str, extra: &str| {
            let source = format!(
                "{extra}__attribute__((noinline)) long {helper}(long x) {{ return x * 3 + (x >> 2); }}\n\
                 long caller(long x) {{ return {helper}(x) + {helper}(x + 1) * 5; }}\n"
            );
            let path = directory.path().join(format!("{name}.c"));
            std::fs::write(&path, source).unwrap();
            let built = directory.path().join(format!("{name}.so"));
            let stripped = directory.path().join(format!("{name}.stripped.so"));
            let output = built.to_str().unwrap();
            let mut arguments = vec!["-O2", "-fPIC", "-shared"];
            arguments.extend_from_slice(flags);
            arguments.extend(["-o", output, path.to_str().unwrap()]);
            run("cc", &arguments);
            run("strip", &["-o", stripped.to_str().unwrap(), output]);
            stripped
        };
        let extra = "__attribute__((noinline)) long extra(long x) { return x - 7; }\n\
                     long uses_extra(long x) { return extra(x) * 2; }\n";
        let old = library("old", "helper", "");
        let new = library("new", "renamed_helper", extra);
        let mut server = ServerProcess::start(REA);
        let b = open(&mut server, &old);
        let c = open(&mut server, &new);
        let (matched, ..) = all_pages(&mut server, json!({"baseline": b, "candidate": c}), 100);
        server.finish();
        let pair = |name: &str| {
            (matched.iter())
                .find(|pair| pair["baseline_name"] == name)
                .unwrap_or_else(|| panic!("{flags:?}: {name} is not paired: {matched:#?}"))
        };
        assert_eq!(pair("caller")["candidate_name"], "caller", "{flags:?}");
        assert_eq!(
            pair("caller")["status"],
            "identical",
            "{flags:?}: {}",
            pair("caller")
        );
        assert_eq!(
            pair("helper")["candidate_name"],
            "renamed_helper",
            "{flags:?}"
        );
    }
}

/// Two versions of a program (after [`COMMON`]) compiled at -O2, stripped and compared through
/// `rea serve`, every page read; with the unstripped builds' names by address.
struct Compared {
    matched: Vec<Value>,
    left: Vec<Value>,
    right: Vec<Value>,
    baseline_names: BTreeMap<String, String>,
    candidate_names: BTreeMap<String, String>,
}

impl Compared {
    /// Each matched pair with its baseline name, once it is checked that the candidate
    /// carries the same name (no wrong pair).
    fn named_pairs(&self) -> Vec<(Option<String>, &Value)> {
        let named = |names: &BTreeMap<String, String>, address: &Value| {
            names.get(address.as_str().unwrap()).cloned()
        };
        self.matched
            .iter()
            .map(|pair| {
                let old = named(&self.baseline_names, &pair["baseline"]);
                let new = named(&self.candidate_names, &pair["candidate"]);
                assert_eq!(old, new, "a wrong pair: {pair}");
                (old, pair)
            })
            .collect()
    }

    /// The names of the procedures only in the baseline.
    fn only_in_baseline(&self) -> BTreeSet<String> {
        names_of(&self.left, &self.baseline_names)
    }

    /// The names of the procedures only in the candidate.
    fn only_in_candidate(&self) -> BTreeSet<String> {
        names_of(&self.right, &self.candidate_names)
    }

    fn sources(baseline_source: &str, candidate_source: &str) -> Compared {
        Self::built_with(&[], baseline_source, candidate_source)
    }

    /// [`Compared::sources`] built with more compiler `flags`.
    fn built_with(flags: &[&str], baseline_source: &str, candidate_source: &str) -> Compared {
        let directory = tempfile::tempdir().unwrap();
        let (baseline, baseline_stripped) =
            build_with(directory.path(), "old", baseline_source, flags);
        let (candidate, candidate_stripped) =
            build_with(directory.path(), "new", candidate_source, flags);
        let mut server = ServerProcess::start(REA);
        let b = open(&mut server, &baseline_stripped);
        let c = open(&mut server, &candidate_stripped);
        let (matched, left, right, _) =
            all_pages(&mut server, json!({"baseline": b, "candidate": c}), 100);
        server.finish();
        Compared {
            matched,
            left,
            right,
            baseline_names: symbols(&baseline),
            candidate_names: symbols(&candidate),
        }
    }
}

/// The names of the procedures at the `address` of each of `entries`.
fn names_of(entries: &[Value], names: &BTreeMap<String, String>) -> BTreeSet<String> {
    entries
        .iter()
        .filter_map(|entry| names.get(entry["address"].as_str()?).cloned())
        .collect()
}
