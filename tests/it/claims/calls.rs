//! The `calls` claim against real `callees` and `disassemble` output on a generated x86-64 ELF
//! whose `main` calls `helper` and `fini`: supported, contradicted and unverified verdicts, and
//! the parse errors of the new fields.

use std::sync::Arc;

use crate::support::fixtures::elf;
use crate::support::fixtures::spec::{Binding, FUNCTION_SIZE, Function, Spec};
use crate::support::tools::{Files, success, with_binary};
use proptest::prelude::*;
use rea::claims::{Claim, EvidenceRecordView, ProcedureRef, VerdictStatus, evaluate, parse_claims};
use rea::session::Session;
use rea::tools::ToolBox;
use serde_json::{Value, json};

/// The generated program: its file, where each function starts, and the open session.
struct Program {
    _files: Files,
    main: u64,
    helper: u64,
    fini: u64,
    lonely: u64,
    session: Arc<Session>,
    tools: ToolBox,
}

/// `call rel32` at `at` to `target`.
fn call(at: u64, target: u64) -> [u8; 5] {
    let next = at.wrapping_add(5);
    let displacement = i32::try_from(target.wrapping_sub(next) as i64).unwrap();
    let mut bytes = [0xe8, 0, 0, 0, 0];
    bytes[1..].copy_from_slice(&displacement.to_le_bytes());
    bytes
}

/// An ELF of four functions (`main`, `helper`, `fini`, `lonely`) where `main` calls `helper`
/// and then `fini`, and the others only return.
fn program() -> Program {
    program_ending(&[0xc3])
}

/// The program with `main` ending in `end` after its two calls.
fn program_ending(end: &[u8]) -> Program {
    let spec = Spec {
        functions: vec![
            Function::named("main", Binding::Exported),
            Function::named("helper", Binding::Global),
            Function::named("fini", Binding::Global),
            Function::named("lonely", Binding::Global),
        ],
        stripped: false,
    };
    let built = elf::build(&spec);
    let main = built.text_address;
    let (helper, fini, lonely) = (
        main + FUNCTION_SIZE,
        main + 2 * FUNCTION_SIZE,
        main + 3 * FUNCTION_SIZE,
    );
    let text = spec.text();
    let offset = built
        .bytes
        .windows(text.len())
        .position(|window| window == text.as_slice())
        .expect("the code section is in the file");
    let mut code = Vec::new();
    code.extend(call(main, helper));
    code.extend(call(main + 5, fini));
    code.extend(end);
    let mut bytes = built.bytes;
    bytes[offset..offset + code.len()].copy_from_slice(&code);
    let files = Files::new();
    let path = files.dir.path().join("calls.elf");
    std::fs::write(&path, &bytes).unwrap();
    let (session, tools) = with_binary(&path);
    Program {
        _files: files,
        main,
        helper,
        fini,
        lonely,
        session,
        tools,
    }
}

/// The verdicts, each cited Evidence ID replaced by `operation arguments` (IDs depend on
/// what else the test process recorded).
fn verdicts(program: &Program, claims: Value) -> Value {
    let mut verdicts = success(
        &program.tools,
        "verify_reconstruction",
        json!({ "claims": claims }),
    )["verdicts"]
        .clone();
    let records = program.session.evidence_records();
    for verdict in verdicts.as_array_mut().unwrap() {
        for cited in verdict["evidence"].as_array_mut().unwrap() {
            let record = records
                .iter()
                .find(|record| record.id.as_str() == cited.as_str().unwrap())
                .expect("a cited record is retained");
            *cited = json!(format!("{} {}", record.operation, record.arguments));
        }
    }
    verdicts
}

fn snapshot_json(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("claims_calls__{name}"), value);
    });
}

fn statuses(verdicts: &Value) -> Vec<String> {
    verdicts
        .as_array()
        .unwrap()
        .iter()
        .map(|verdict| verdict["status"].as_str().unwrap().to_owned())
        .collect()
}

/// The claims asked of every ledger below: (caller, callee, document?).
fn table(program: &Program) -> Value {
    let address = |value: u64| format!("{value:#x}");
    json!([
        {"kind": "calls", "caller": "main", "callee": "helper"},
        {"kind": "calls", "caller": address(program.main), "callee": address(program.fini)},
        {"kind": "calls", "caller": "main", "callee": "lonely", "document": "calls.elf"},
        {"kind": "calls", "caller": "main", "callee": address(program.lonely)},
        {"kind": "calls", "caller": "helper", "callee": "main"},
        {"kind": "calls", "caller": "main", "callee": "helper", "document": "other"},
    ])
}

#[test]
fn the_tools_show_the_calls_of_the_fixture() {
    let program = program();
    let callees = success(&program.tools, "callees", json!({"procedure": "main"}));
    let names: Vec<&Value> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| &edge["procedure"]["name"])
        .collect();
    assert_eq!(names, [&json!("helper"), &json!("fini")]);
    let addresses: Vec<&Value> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| &edge["procedure"]["address"])
        .collect();
    let hex = |value: u64| json!(format!("{value:#x}"));
    assert_eq!(addresses, [&hex(program.helper), &hex(program.fini)]);
    assert_eq!(callees["next_cursor"], Value::Null);
    assert_eq!(callees["analysis"]["complete"], true);
    assert_eq!(callees["document"], "calls.elf");
}

#[test]
fn a_complete_callees_view_supports_and_contradicts() {
    let program = program();
    success(&program.tools, "callees", json!({"procedure": "main"}));
    let result = verdicts(&program, table(&program));
    assert_eq!(
        statuses(&result),
        [
            "supported",
            "supported",
            "contradicted",
            "contradicted",
            "unverified",
            "unverified"
        ]
    );
    snapshot_json("complete_callees", &result);
}

#[test]
fn a_complete_disassembly_supports_and_contradicts() {
    let program = program();
    success(&program.tools, "disassemble", json!({"procedure": "main"}));
    success(
        &program.tools,
        "disassemble",
        json!({"procedure": "helper"}),
    );
    let result = verdicts(&program, table(&program));
    assert_eq!(
        statuses(&result),
        [
            "supported",
            "supported",
            "contradicted",
            "contradicted",
            "contradicted",
            "unverified"
        ]
    );
    snapshot_json("complete_disassembly", &result);
}

#[test]
fn a_tail_call_is_a_jump_not_a_call_for_the_claim() {
    // `main` ends with `jmp lonely` (at main + 10): `callees` lists it as a tail call.
    let probe = program();
    let mut jump = call(probe.main + 10, probe.lonely);
    jump[0] = 0xe9;
    let program = program_ending(&jump);
    let callees = success(&program.tools, "callees", json!({"procedure": "main"}));
    let kinds: Vec<&Value> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| &edge["kind"])
        .collect();
    assert_eq!(kinds, [&json!("call"), &json!("call"), &json!("tail_call")]);
    let result = verdicts(&program, table(&program));
    // As a complete disassembly (where the jump is a `jump`) rules it out, so does `callees`.
    assert_eq!(
        statuses(&result),
        [
            "supported",
            "supported",
            "contradicted",
            "contradicted",
            "unverified",
            "unverified"
        ]
    );
}

#[test]
fn partial_views_support_but_never_contradict() {
    let program = program();
    // The first of two pages of main's callees, and a range disassembly (no procedure).
    success(
        &program.tools,
        "callees",
        json!({"procedure": "main", "limit": 1}),
    );
    success(
        &program.tools,
        "disassemble",
        json!({"address": format!("{:#x}", program.main), "length": 16}),
    );
    let result = verdicts(&program, table(&program));
    assert_eq!(
        statuses(&result),
        [
            "supported",
            "unverified",
            "unverified",
            "unverified",
            "unverified",
            "unverified"
        ]
    );
    snapshot_json("partial_views", &result);
}

#[test]
fn calls_claims_parse_addresses_and_names() {
    let claims = parse_claims(&json!([
        {"kind": "calls", "caller": "0x401000", "callee": "printf@plt"},
        {"kind": "calls", "caller": "main", "callee": "0x10", "document": "app"},
    ]))
    .unwrap();
    assert_eq!(
        claims,
        [
            Claim::Calls {
                document: None,
                caller: ProcedureRef::Address(0x40_1000),
                callee: ProcedureRef::Name("printf@plt".into()),
            },
            Claim::Calls {
                document: Some("app".into()),
                caller: ProcedureRef::Name("main".into()),
                callee: ProcedureRef::Address(0x10),
            },
        ]
    );
    assert_eq!(claims[0].kind(), "calls");
    assert_eq!(ProcedureRef::Address(0x10).to_string(), "0x10");
    assert_eq!(ProcedureRef::Name("main".into()).to_string(), "\"main\"");
}

#[test]
fn malformed_calls_claims_name_the_field() {
    let cases: Vec<(&str, Value)> = vec![
        ("missing caller", json!([{"kind": "calls", "callee": "f"}])),
        ("missing callee", json!([{"kind": "calls", "caller": "f"}])),
        (
            "caller not text",
            json!([{"kind": "calls", "caller": 4096, "callee": "f"}]),
        ),
        (
            "empty callee",
            json!([{"kind": "calls", "caller": "main", "callee": ""}]),
        ),
        (
            "non-canonical caller",
            json!([{"kind": "calls", "caller": "0x00401000", "callee": "f"}]),
        ),
        (
            "uppercase callee",
            json!([{"kind": "calls", "caller": "main", "callee": "0xABC"}]),
        ),
        (
            "empty document",
            json!([{"kind": "calls", "caller": "main", "callee": "f", "document": ""}]),
        ),
        (
            "document not text",
            json!([{"kind": "calls", "caller": "main", "callee": "f", "document": null}]),
        ),
        (
            "unknown field",
            json!([{"kind": "calls", "caller": "main", "callee": "f", "address": "0x1"}]),
        ),
        (
            "long name",
            json!([{"kind": "calls", "caller": "x".repeat(4097), "callee": "f"}]),
        ),
    ];
    let mut report = String::new();
    for (case, claims) in cases {
        let error = parse_claims(&claims).unwrap_err();
        report.push_str(&format!("{case}: {error}\n"));
    }
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("claims_calls__malformed", report);
    });
}

/// Retained records (ID, operation, arguments, result) and the calls that exist.
type Ledger = (
    Vec<(String, String, Value, Value)>,
    Vec<(&'static str, &'static str)>,
);

/// Every record of a session that asked the tools about all four procedures, with the truth
/// of each (caller, callee) pair by name.
fn full_ledger() -> Ledger {
    let program = program();
    for procedure in ["main", "helper", "fini", "lonely"] {
        success(&program.tools, "callees", json!({"procedure": procedure}));
        success(
            &program.tools,
            "callees",
            json!({"procedure": procedure, "limit": 1}),
        );
        success(
            &program.tools,
            "disassemble",
            json!({"procedure": procedure}),
        );
    }
    let records = program
        .session
        .evidence_records()
        .iter()
        .map(|record| {
            (
                record.id.as_str().to_owned(),
                record.operation.clone(),
                record.arguments.clone(),
                record.result.clone(),
            )
        })
        .collect();
    (records, vec![("main", "helper"), ("main", "fini")])
}

const NAMES: [&str; 4] = ["main", "helper", "fini", "lonely"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On any subset of real records, a true call is never contradicted and a false one never
    /// supported; verdicts cite only retained records, and unverified ones with no view of the
    /// caller cite none.
    #[test]
    fn verdicts_agree_with_the_program(
        keep in proptest::collection::vec(any::<bool>(), 12),
        caller in 0..NAMES.len(),
        callee in 0..NAMES.len(),
    ) {
        thread_local! {
            static LEDGER: Ledger = full_ledger();
        }
        LEDGER.with(|(records, truth)| {
            let kept: Vec<_> = records
                .iter()
                .zip(keep.iter().cycle())
                .filter(|(_, keep)| **keep)
                .map(|(record, _)| record)
                .collect();
            let views: Vec<EvidenceRecordView<'_>> = kept
                .iter()
                .map(|(id, operation, arguments, result)| EvidenceRecordView {
                    id,
                    operation,
                    arguments,
                    result,
                    provider: Some("native"),
                })
                .collect();
            let (caller, callee) = (NAMES[caller], NAMES[callee]);
            let claims = parse_claims(&json!([{"kind": "calls", "caller": caller, "callee": callee}])).unwrap();
            let verdict = &evaluate(&claims, &views)[0];
            let holds = truth.contains(&(caller, callee));
            let expected_not = if holds { VerdictStatus::Contradicted } else { VerdictStatus::Supported };
            prop_assert_ne!(verdict.status, expected_not, "{:?}", verdict);
            for id in &verdict.evidence {
                prop_assert!(views.iter().any(|view| view.id == id));
            }
            // A complete view of the caller is retained exactly when a first-and-last page is:
            // then the verdict is settled.
            let complete_kept = views.iter().any(|view| {
                view.result["procedure"]["name"] == caller
                    && view.arguments.get("limit").is_none()
            });
            if complete_kept {
                prop_assert_ne!(verdict.status, VerdictStatus::Unverified, "{:?}", verdict);
            }
            Ok(())
        })?;
    }
}

/// Pseudo-C is a reconstruction: a `decompile` record whose code calls the callee supports
/// no `calls` claim on its own, and never outweighs a complete view that rules the call out.
#[test]
fn a_decompile_record_alone_never_supports_a_calls_claim() {
    let decompiled = json!({
        "document": "app",
        "evidence_kind": "decompiler_output",
        "procedure": {"address": "0x1000", "name": "main"},
        "complete": true,
        "code": "int main(void) { helper(); printf(\"%d\", 1); return fini(); }",
    });
    let arguments = json!({"procedure": "main"});
    let decompile = EvidenceRecordView {
        id: "ev-1",
        operation: "decompile",
        arguments: &arguments,
        result: &decompiled,
        provider: Some("angr"),
    };
    let claims = parse_claims(&json!([
        {"kind": "calls", "caller": "main", "callee": "helper"},
        {"kind": "calls", "caller": "0x1000", "callee": "printf", "document": "app"},
    ]))
    .unwrap();
    for verdict in evaluate(&claims, &[decompile]) {
        assert_eq!(verdict.status, VerdictStatus::Unverified, "{verdict:?}");
        assert!(verdict.evidence.is_empty(), "{verdict:?}");
    }
    // Beside a complete callees view that shows no call to `helper`, the decompiled code
    // (which names it) changes nothing: the claim is contradicted by the view alone.
    let callees = json!({
        "document": "app",
        "procedure": {"address": "0x1000", "name": "main"},
        "analysis": {"complete": true},
        "callees": [{"kind": "call", "procedure": {"address": "0x2000", "name": "fini"}}],
        "next_cursor": null,
    });
    let no_cursor = json!({});
    let view = EvidenceRecordView {
        id: "ev-2",
        operation: "callees",
        arguments: &no_cursor,
        result: &callees,
        provider: Some("native"),
    };
    let helper =
        parse_claims(&json!([{"kind": "calls", "caller": "main", "callee": "helper"}])).unwrap();
    let verdict = &evaluate(&helper, &[decompile, view])[0];
    assert_eq!(verdict.status, VerdictStatus::Contradicted, "{verdict:?}");
    assert_eq!(verdict.evidence, ["ev-2"], "{verdict:?}");
}
