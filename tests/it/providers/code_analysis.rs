//! The code-analysis tools `disassemble`, `xrefs_to`, `callers` and `callees` on generated
//! x86-64 and AArch64 programs and on system binaries, with differential checks against
//! binutils `objdump -d` (and `llvm-objdump` for AArch64) when they are installed; the
//! `code_analysis` fuzz target's saved inputs replayed; a property over mutated programs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use rea::fuzzing::providers::check_code_analysis;
use rea::providers::native::NativeProvider;
use rea::session::{Address, Provider, ReferenceKind};
use serde_json::{Map, Value, json};

use crate::support::code::{self, Program};
use crate::support::tools::{
    Files, failure, snapshot, stripped_system_binary, success, with_binary, with_catalog,
};

/// Writes `program` into a temporary directory as `name`.
fn written(program: &Program, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, &program.bytes).unwrap();
    (dir, path)
}

fn hex(address: u64) -> String {
    format!("{address:#x}")
}

fn pretty(result: &Map<String, Value>) -> String {
    serde_json::to_string_pretty(result).unwrap()
}

fn froms(result: &Map<String, Value>) -> Vec<(String, String, Value)> {
    result["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["from"].as_str().unwrap().to_owned(),
                r["kind"].as_str().unwrap().to_owned(),
                r["procedure"]["name"].clone(),
            )
        })
        .collect()
}

#[test]
fn disassemble_names_calls_through_the_plt_stub_and_the_import_slot() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    let (_, tools) = with_binary(&path);
    let main = success(&tools, "disassemble", json!({"procedure": "main"}));
    snapshot(
        "code_analysis__disassemble_x86_64_main",
        &pretty(&main),
        None,
    );
    let named: Vec<(Value, Value)> = main["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["target_kind"] == "call")
        .map(|i| (i["target"].clone(), i["target_name"].clone()))
        .collect();
    assert_eq!(
        named,
        [
            (json!(hex(program.helper)), json!("helper")),
            (json!(hex(program.printf_stub)), json!("printf@plt")),
            (json!(hex(program.printf_slot)), json!("printf")),
        ]
    );
    assert_eq!(main["analysis"]["complete"], true);
}

#[test]
fn a_string_address_leads_to_the_procedures_that_use_it() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    let (_, tools) = with_binary(&path);
    let strings = success(
        &tools,
        "search_strings",
        json!({"contains": "analysis fixture"}),
    );
    let address = strings["strings"][0]["address"].clone();
    assert_eq!(address, json!(hex(program.greeting)));
    let references = success(&tools, "xrefs_to", json!({"address": address}));
    snapshot(
        "code_analysis__xrefs_to_x86_64_greeting",
        &pretty(&references),
        None,
    );
    let found = froms(&references);
    assert!(
        found.contains(&(hex(program.helper), "data".to_owned(), json!("helper"))),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(_, kind, name)| kind == "data" && name == "main"),
        "{found:?}"
    );
    // The RELATIVE-relocated pointer in .data.rel.ro, outside any procedure.
    assert!(
        found.contains(&(
            hex(program.relocated_pointer),
            "data".to_owned(),
            Value::Null
        )),
        "{found:?}"
    );
}

#[test]
fn callers_and_callees_form_the_direct_call_graph() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    let (_, tools) = with_binary(&path);
    let callees = success(&tools, "callees", json!({"procedure": "main"}));
    snapshot(
        "code_analysis__callees_x86_64_main",
        &pretty(&callees),
        None,
    );
    let imports: Vec<Value> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["import"].clone())
        .collect();
    assert_eq!(imports, [Value::Null, json!("printf"), json!("printf")]);
    let callers = success(&tools, "callers", json!({"procedure": "helper"}));
    snapshot(
        "code_analysis__callers_x86_64_helper",
        &pretty(&callers),
        None,
    );
    assert_eq!(callers["callers"][0]["procedure"]["name"], "main");
    let stub = success(
        &tools,
        "callers",
        json!({"procedure": hex(program.printf_stub)}),
    );
    assert_eq!(stub["procedure"]["name"], "printf@plt");
    assert_eq!(
        stub["callers"][0]["call_sites"],
        json!([hex(program.calls[1].0)])
    );
    // The data pointer in .data refers to helper too.
    let references = success(&tools, "xrefs_to", json!({"address": hex(program.helper)}));
    let found = froms(&references);
    assert!(
        found.contains(&(hex(program.data_pointer), "data".to_owned(), Value::Null)),
        "{found:?}"
    );
    assert!(
        found.contains(&(hex(program.calls[0].0), "call".to_owned(), json!("main"))),
        "{found:?}"
    );
}

/// A 32-bit x86 position-independent library jumps through its PLT slots relative to `ebx`
/// (`jmp *0xc(%ebx)`), which the caller loads with the GOT's address: its calls through the
/// PLT are calls of the imports the slots name.
#[test]
fn calls_through_a_32_bit_position_independent_plt_call_their_imports() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("pic32.c");
    std::fs::write(
        &source,
        "int puts(const char *);\nint helper(const char *);\n\
         int f(const char *s) { puts(s); return helper(s) + 1; }\n",
    )
    .unwrap();
    let library = dir.path().join("pic32.so");
    let status = Command::new("cc")
        .args(["-m32", "-O2", "-shared", "-fPIC", "-nostdlib", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc -m32 builds the library");
    let (_, tools) = with_binary(&library);
    let callees = success(&tools, "callees", json!({"procedure": "f"}));
    let mut found: Vec<(Value, Value)> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|callee| {
            (
                callee["procedure"]["name"].clone(),
                callee["import"].clone(),
            )
        })
        .collect();
    found.sort_by_key(|(name, _)| name.to_string());
    assert_eq!(
        found,
        [
            (json!("__x86.get_pc_thunk.bx"), Value::Null),
            (json!("helper@plt"), json!("helper")),
            (json!("puts@plt"), json!("puts"))
        ],
        "{callees:#?}"
    );
}

#[test]
fn pages_of_instructions_and_references_join_up() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    let (_, tools) = with_binary(&path);
    let whole = success(&tools, "disassemble", json!({"procedure": "main"}));
    let mut joined = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut arguments = json!({"procedure": "main", "limit": 3});
        if !cursor.is_null() {
            arguments["cursor"] = cursor;
        }
        let page = success(&tools, "disassemble", arguments);
        joined.extend(page["instructions"].as_array().unwrap().clone());
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(&joined, whole["instructions"].as_array().unwrap());
    let first = success(
        &tools,
        "xrefs_to",
        json!({"address": hex(program.greeting), "limit": 1}),
    );
    assert_eq!(first["references"].as_array().unwrap().len(), 1);
    assert_eq!(first["next_cursor"], "at:1");
    assert_eq!(first["total"], 3);
    let range = success(
        &tools,
        "disassemble",
        json!({"address": hex(program.main), "length": 6}),
    );
    assert_eq!(range["procedure"], Value::Null);
    assert_eq!(range["end"], json!(hex(program.main + 6)));
    assert_eq!(range["instructions"].as_array().unwrap().len(), 2);
}

#[test]
fn code_tool_errors_say_what_is_wrong() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    let (_, tools) = with_binary(&path);
    let cases = [
        ("disassemble", json!({})),
        (
            "disassemble",
            json!({"procedure": "main", "address": "0x1"}),
        ),
        ("disassemble", json!({"procedure": "main", "length": 4})),
        ("disassemble", json!({"address": "0x1", "length": 70000})),
        ("disassemble", json!({"address": "0x1"})),
        (
            "disassemble",
            json!({"procedure": "main", "cursor": "ip:0x1"}),
        ),
        ("disassemble", json!({"procedure": hex(program.main + 1)})),
        (
            "xrefs_to",
            json!({"address": hex(program.helper), "cursor": "at:99"}),
        ),
        ("callees", json!({"procedure": hex(program.main + 1)})),
        ("callers", json!({"procedure": "no_such_procedure"})),
    ];
    let mut text = String::new();
    for (tool, arguments) in cases {
        let message = failure(&tools, tool, arguments.clone());
        text.push_str(&format!("{tool} {arguments}\n  {message}\n"));
    }
    let files = Files::new();
    let (_, catalog) = with_catalog(&files);
    for tool in ["disassemble", "xrefs_to", "callers", "callees"] {
        let arguments = if tool == "xrefs_to" {
            json!({"address": "0x1000"})
        } else {
            json!({"procedure": "main"})
        };
        text.push_str(&format!(
            "catalog {tool}\n  {}\n",
            failure(&catalog, tool, arguments)
        ));
    }
    // The same program marked as RISC-V: the analysis decodes no RISC-V.
    let mut riscv = code::x86_64();
    riscv.bytes[18..20].copy_from_slice(&object::elf::EM_RISCV.0.to_le_bytes());
    let (_riscv_dir, riscv_path) = written(&riscv, "riscv");
    let (_, riscv_tools) = with_binary(&riscv_path);
    let message = failure(&riscv_tools, "callees", json!({"procedure": "main"}));
    text.push_str(&format!("riscv callees\n  {message}\n"));
    snapshot("code_analysis__tool_errors", &text, None);
}

#[test]
fn the_aarch64_program_pairs_adrp_with_add_and_names_bl_targets() {
    let program = code::aarch64();
    let (_dir, path) = written(&program, "arm");
    let (_, tools) = with_binary(&path);
    let main = success(&tools, "disassemble", json!({"procedure": "main"}));
    snapshot(
        "code_analysis__disassemble_aarch64_main",
        &pretty(&main),
        None,
    );
    assert_eq!(main["architecture"], "aarch64");
    let targets: Vec<(Value, Value, Value)> = main["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["target"].is_null())
        .map(|i| {
            (
                i["mnemonic"].clone(),
                i["target"].clone(),
                i["target_kind"].clone(),
            )
        })
        .collect();
    assert_eq!(
        targets,
        [
            (json!("bl"), json!(hex(program.helper)), json!("call")),
            (json!("add"), json!(hex(program.greeting)), json!("data")),
        ]
    );
    let references = success(
        &tools,
        "xrefs_to",
        json!({"address": hex(program.greeting)}),
    );
    assert_eq!(
        froms(&references),
        [(hex(program.main + 12), "data".to_owned(), json!("main"))]
    );
    let callers = success(&tools, "callers", json!({"procedure": "helper"}));
    assert_eq!(
        callers["callers"][0]["call_sites"],
        json!([hex(program.calls[0].0)])
    );
    // llvm-objdump agrees on the call target and the adrp page, when installed.
    if let Some(listing) = run("llvm-objdump", &["-d", path.to_str().unwrap()]) {
        assert!(
            listing.contains(&format!("bl\t{} <helper>", hex(program.helper))),
            "{listing}"
        );
        assert!(
            listing.contains(&format!("adrp\tx0, {}", hex(program.greeting & !0xfff))),
            "{listing}"
        );
        let add_offset = format!("add\tx0, x0, #{}", program.greeting & 0xfff);
        assert!(listing.contains(&add_offset), "{listing}");
    }
}

/// The standard output of a tool, if it is installed and succeeds.
fn run(tool: &str, arguments: &[&str]) -> Option<String> {
    let output = Command::new(tool).args(arguments).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Direct calls in `objdump -d` output: (call address, target, label).
fn objdump_calls(path: &Path) -> Option<Vec<(u64, u64, String)>> {
    let listing = run(
        "objdump",
        &["-d", "--no-show-raw-insn", "-w", path.to_str()?],
    )?;
    let mut calls = Vec::new();
    for line in listing.lines() {
        let Some((address, rest)) = line.trim_start().split_once(":\t") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        if words.next() != Some("call") {
            continue;
        }
        let (Some(target), Some(label)) = (words.next(), words.next()) else {
            continue;
        };
        let (Ok(address), Ok(target)) = (
            u64::from_str_radix(address, 16),
            u64::from_str_radix(target, 16),
        ) else {
            continue;
        };
        calls.push((address, target, label.trim_matches(['<', '>']).to_owned()));
    }
    Some(calls)
}

/// Direct calls objdump shows, how many of them the analysis has as call references, and how
/// many `@plt` targets it names exactly as objdump does (every one must be).
struct Agreement {
    calls: usize,
    found: usize,
    plt_named: usize,
}

fn compare_calls_with_objdump(path: &Path) -> Option<Agreement> {
    let calls = objdump_calls(path)?;
    let provider = NativeProvider::open(path).unwrap();
    let document = provider.list_documents().unwrap()[0].name.clone();
    let mut by_target: HashMap<u64, Vec<(u64, u64, String)>> = HashMap::new();
    let total = calls.len();
    for call in calls {
        by_target.entry(call.1).or_default().push(call);
    }
    let (mut found, mut plt_named) = (0, 0);
    for (target, calls) in by_target {
        let references = provider
            .xrefs_to(&document, Address::new(target), None, 1_000)
            .unwrap();
        assert!(references.next_cursor.is_none());
        for (address, _, label) in calls {
            found += usize::from(
                references
                    .references
                    .iter()
                    .any(|r| r.from == Address::new(address) && r.kind == ReferenceKind::Call),
            );
            if label.ends_with("@plt") && !label.contains('+') {
                assert_eq!(
                    references.target.name.as_deref(),
                    Some(label.as_str()),
                    "{target:#x}"
                );
                plt_named += 1;
            }
        }
    }
    Some(Agreement {
        calls: total,
        found,
        plt_named,
    })
}

#[test]
fn direct_calls_and_plt_names_agree_with_objdump() {
    let program = code::x86_64();
    let (_dir, path) = written(&program, "app");
    if let Some(agreement) = compare_calls_with_objdump(&path) {
        assert_eq!(
            (agreement.calls, agreement.found, agreement.plt_named),
            (2, 2, 1)
        );
    }
    if let Some(ls) = stripped_system_binary()
        && let Some(agreement) = compare_calls_with_objdump(&ls)
    {
        let Agreement {
            calls,
            found,
            plt_named,
        } = agreement;
        println!(
            "{}: {found} of {calls} direct calls found, {plt_named} named @plt",
            ls.display()
        );
        // Calls in code no unwind entry covers are not decoded: at most 1% of them.
        assert!(
            calls > 100 && found * 100 >= calls * 99,
            "{found} of {calls}"
        );
        assert!(plt_named > 100, "{plt_named}");
    }
}

#[test]
fn a_string_of_a_system_binary_leads_to_a_procedure() {
    let Some(ls) = stripped_system_binary() else {
        return;
    };
    let (_, tools) = with_binary(&ls);
    let strings = success(
        &tools,
        "search_strings",
        json!({"contains": "--help", "limit": 50}),
    );
    let mut used = 0;
    for string in strings["strings"].as_array().unwrap() {
        let references = success(&tools, "xrefs_to", json!({"address": string["address"]}));
        used += references["references"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| !r["procedure"].is_null())
            .count();
    }
    assert!(
        used > 0,
        "some --help string is used by a procedure of {}",
        ls.display()
    );
}

#[test]
fn saved_code_analysis_inputs_keep_their_invariants() {
    let folder = crate::root().join("fuzz/regressions/code_analysis");
    let mut count = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        check_code_analysis(&std::fs::read(&path).unwrap());
        count += 1;
    }
    assert!(count >= 3, "the saved inputs are present");
    check_code_analysis(&code::x86_64().bytes);
    check_code_analysis(&code::aarch64().bytes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any program with bytes overwritten anywhere is analysed within its bounds, and the
    /// analysis keeps its invariants (see `check_code_analysis`).
    #[test]
    fn mutated_programs_keep_the_analysis_invariants(
        arm in any::<bool>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
    ) {
        let mut bytes = if arm { code::aarch64().bytes } else { code::x86_64().bytes };
        for (index, value) in edits {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        check_code_analysis(&bytes);
    }
}
