//! Completion of documents and procedures on generated binaries opened with the native provider.

use std::collections::HashMap;
use std::sync::Arc;

use crate::support::fixtures::helpers::complete;
use crate::support::fixtures::{Format, Spec, build, macho};
use rea::core::{Completion, Family};
use rea::providers::native::NativeProvider;
use rea::session::Session;

fn session_for(bytes: Vec<u8>) -> Session {
    let provider = NativeProvider::from_bytes("fixture", bytes).unwrap();
    let session = Session::new();
    session
        .open_providers("fixture", vec![Arc::new(provider)])
        .unwrap();
    session
}

/// The candidates exhaustive discovery must offer: every address, and the names that map to
/// exactly one address.
fn expected_candidates(listing: &[(String, Option<String>)]) -> Vec<String> {
    let mut addresses_by_name: HashMap<&str, usize> = HashMap::new();
    for (_, name) in listing {
        if let Some(name) = name {
            *addresses_by_name.entry(name).or_default() += 1;
        }
    }
    let mut candidates: Vec<String> = listing.iter().map(|(address, _)| address.clone()).collect();
    candidates.extend(
        addresses_by_name
            .into_iter()
            .filter(|&(_, count)| count == 1)
            .map(|(name, _)| name.to_owned()),
    );
    candidates.sort();
    candidates
}

#[test]
fn exhaustive_discovery_offers_addresses_and_unique_names() {
    for format in [Format::Elf, Format::MachO, Format::Pe] {
        for spec in [Spec::sample(), Spec::sample().stripped()] {
            let built = build(&spec, format);
            let session = session_for(built.bytes);
            let done = complete(&session, Family::Procedure, "", &[]);
            let expected = expected_candidates(&spec.expected(format, built.text_address));
            assert_eq!(
                done.values, expected,
                "{format:?} stripped: {}",
                spec.stripped
            );
            assert_eq!(done.total, expected.len());
            let helper = spec.functions[1].written(format).unwrap();
            assert_eq!(
                complete(&session, Family::Procedure, &helper, &[]),
                Completion::empty()
            );
        }
    }
}

#[test]
fn names_complete_case_insensitively() {
    let session = session_for(build(&Spec::sample(), Format::Elf).bytes);
    assert_eq!(
        complete(&session, Family::Procedure, "API", &[]).values,
        ["api_close", "api_open"]
    );
    assert_eq!(
        complete(&session, Family::Procedure, "FOO::", &[]).values,
        ["foo::bar(int)"]
    );
}

#[test]
fn reaching_the_bound_offers_addresses_only() {
    let spec = Spec::numbered(6_000);
    for format in [Format::Elf, Format::MachO, Format::Pe] {
        let built = build(&spec, format);
        let session = session_for(built.bytes);
        let all = complete(&session, Family::Procedure, "", &[]);
        assert_eq!(all.total, 5_000, "{format:?}");
        assert!(all.has_more);
        assert!(all.values.iter().all(|v| v.starts_with("0x")));
        let name = spec.functions[0].written(format).unwrap();
        assert_eq!(
            complete(&session, Family::Procedure, &name, &[]),
            Completion::empty()
        );
        let first = format!("{:#x}", built.text_address);
        let exact = complete(&session, Family::Procedure, &first, &[]);
        assert!(exact.values.contains(&first));
        let beyond = format!("{:#x}", built.text_address + 5_500 * 16);
        assert!(
            !complete(&session, Family::Procedure, &beyond, &[])
                .values
                .contains(&beyond)
        );
    }
}

#[test]
fn fat_slices_are_documents_and_the_document_argument_selects_one() {
    let x86 = macho::build(&Spec::sample(), macho::X86_64);
    let arm = macho::build(&Spec::numbered(2), macho::ARM64);
    let fat = macho::fat(&[(macho::X86_64, &x86.bytes), (macho::ARM64, &arm.bytes)]);
    let provider = NativeProvider::from_bytes("tool", fat).unwrap();
    let session = Session::new();
    session
        .open_providers("tool", vec![Arc::new(provider)])
        .unwrap();
    assert_eq!(
        complete(&session, Family::Document, "", &[]).values,
        ["tool[arm64]", "tool[x86_64]"]
    );
    assert_eq!(
        complete(&session, Family::Document, "TOOL[A", &[]).values,
        ["tool[arm64]"]
    );
    let arm_procedures = complete(
        &session,
        Family::Procedure,
        "_",
        &[("document", "tool[arm64]")],
    );
    assert_eq!(arm_procedures.values, ["_fn_00000", "_fn_00001"]);
    session.set_current_document(None, "tool[arm64]").unwrap();
    assert_eq!(
        complete(&session, Family::Procedure, "_", &[]).values,
        ["_fn_00000", "_fn_00001"]
    );
    assert_eq!(
        complete(&session, Family::Provider, "", &[]).values,
        ["native"]
    );
}
