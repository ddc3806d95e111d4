//! Completion sources (docs/CONTRACT.md sections 5 and 6) over in-test sessions and providers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::fixtures::fake::{Behaviour, FakeProvider, app_and_lib, entry};
use crate::support::fixtures::helpers::{complete, complete_with};
use rea::core::{Completion, Family, ProcedureEntry, ProcedurePage};
use rea::session::{Observation, Provider, Session};
use rea::session::{SessionView, SourceConfig};
use serde_json::json;

fn values(completion: &Completion) -> Vec<&str> {
    completion.values.iter().map(String::as_str).collect()
}

fn open(providers: Vec<Arc<dyn Provider>>) -> Session {
    let session = Session::new();
    session.open_providers("target", providers).unwrap();
    session
}

/// Many procedures, `count` of them, with names `f<i>` and one name shared by two addresses.
fn many(count: usize) -> Vec<ProcedureEntry> {
    (0..count)
        .map(|i| {
            let name = if i < 2 {
                "shared".to_owned()
            } else {
                format!("f{i}")
            };
            ProcedureEntry::new(format!("{:#x}", 0x10000 + 16 * i), Some(&name))
        })
        .collect()
}

#[test]
fn documents_come_from_the_current_provider() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    assert_eq!(
        values(&complete(&session, Family::Document, "", &[])),
        ["app", "lib"]
    );
    assert_eq!(
        values(&complete(&session, Family::Document, "L", &[])),
        ["lib"]
    );
}

#[test]
fn a_provider_argument_selects_a_declared_provider() {
    let other = FakeProvider::new("other", vec![("elsewhere", Vec::new())]);
    let session = open(vec![Arc::new(app_and_lib("fake")), Arc::new(other)]);
    let selected = complete(&session, Family::Document, "", &[("provider", "other")]);
    assert_eq!(values(&selected), ["elsewhere"]);
    let undeclared = complete(&session, Family::Document, "", &[("provider", "ghidra")]);
    assert_eq!(undeclared, Completion::empty());
    let blank = complete(&session, Family::Document, "", &[("provider", "")]);
    assert_eq!(values(&blank), ["app", "lib"]);
}

#[test]
fn providers_are_the_declared_identities() {
    let session = open(vec![
        Arc::new(app_and_lib("native")),
        Arc::new(app_and_lib("catalog")),
    ]);
    assert_eq!(
        values(&complete(&session, Family::Provider, "", &[])),
        ["catalog", "native"]
    );
    assert_eq!(
        values(&complete(&session, Family::Provider, "NAT", &[])),
        ["native"]
    );
    assert_eq!(
        complete(&Session::new(), Family::Provider, "", &[]),
        Completion::empty()
    );
}

#[test]
fn exhaustive_discovery_offers_addresses_and_unique_names() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    let all = complete(&session, Family::Procedure, "", &[]);
    assert_eq!(
        values(&all),
        ["0x1000", "0x1100", "0x1200", "0x1300", "main"]
    );
    assert_eq!(
        values(&complete(&session, Family::Procedure, "du", &[])),
        Vec::<&str>::new()
    );
}

#[test]
fn the_document_argument_is_forwarded_to_discovery() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    let lib = complete(&session, Family::Procedure, "", &[("document", "lib")]);
    assert_eq!(values(&lib), ["0x2000", "0x2100", "fini", "init"]);
    let unknown = complete(&session, Family::Procedure, "", &[("document", "nope")]);
    assert_eq!(unknown, Completion::empty());
}

#[test]
fn without_a_document_procedures_are_empty() {
    let session = open(vec![Arc::new(FakeProvider::new("empty", Vec::new()))]);
    assert_eq!(session.current_document(), None);
    assert_eq!(
        complete(&session, Family::Procedure, "", &[]),
        Completion::empty()
    );
    assert_eq!(
        complete(&Session::new(), Family::Procedure, "", &[]),
        Completion::empty()
    );
}

#[test]
fn bounded_discovery_offers_addresses_only() {
    let session = open(vec![Arc::new(FakeProvider::new(
        "big",
        vec![("big", many(6_000))],
    ))]);
    let all = complete(&session, Family::Procedure, "", &[]);
    assert_eq!(all.total, 5_000);
    assert!(all.has_more);
    assert!(all.values.iter().all(|v| v.starts_with("0x")));
    assert_eq!(
        complete(&session, Family::Procedure, "f", &[]),
        Completion::empty()
    );
}

#[test]
fn a_name_shared_by_two_addresses_is_never_offered() {
    let session = open(vec![Arc::new(FakeProvider::new(
        "small",
        vec![("small", many(600))],
    ))]);
    assert_eq!(
        values(&complete(&session, Family::Procedure, "f59", &[])),
        [
            "f59", "f590", "f591", "f592", "f593", "f594", "f595", "f596", "f597", "f598", "f599"
        ]
    );
    assert_eq!(
        complete(&session, Family::Procedure, "shared", &[]),
        Completion::empty()
    );
}

#[test]
fn provider_errors_give_an_empty_completion() {
    let failing = FakeProvider::new("broken", Vec::new()).behaving(Behaviour::Fail);
    let session = open(vec![Arc::new(app_and_lib("fake")), Arc::new(failing)]);
    for family in [Family::Document, Family::Procedure] {
        let done = complete(
            &session,
            family,
            "",
            &[("provider", "broken"), ("document", "app")],
        );
        assert_eq!(done, Completion::empty(), "{family}");
    }
}

#[test]
fn unsupported_listing_gives_an_empty_completion() {
    struct Refusing;
    impl Provider for Refusing {
        fn id(&self) -> &str {
            "refusing"
        }
        fn supports(&self, _: rea::session::Operation) -> bool {
            false
        }
        fn list_documents(
            &self,
        ) -> Result<Vec<rea::session::DocumentInfo>, rea::session::ProviderError> {
            Ok(vec![rea::session::DocumentInfo::named("doc")])
        }
        fn list_procedures(
            &self,
            _: &str,
            _: Option<&str>,
            _: usize,
        ) -> Result<ProcedurePage, rea::session::ProviderError> {
            Ok(ProcedurePage {
                entries: vec![entry("0x1", None)],
                next_cursor: None,
            })
        }
    }
    let session = open(vec![Arc::new(Refusing)]);
    assert_eq!(
        complete(&session, Family::Document, "", &[]),
        Completion::empty()
    );
    assert_eq!(
        complete(&session, Family::Procedure, "", &[]),
        Completion::empty()
    );
}

#[test]
fn a_hung_provider_gives_an_empty_completion_within_the_bound() {
    // The provider is not the first declared, so opening does not call it; every call hangs
    // (long enough to overrun the bound, short enough to free the shared provider pool soon).
    let hanging = Arc::new(app_and_lib("slow").behaving(Behaviour::Hang(Duration::from_secs(2))));
    let session = Session::new();
    let quick = Arc::new(app_and_lib("quick"));
    session
        .open_providers("target", vec![quick, hanging.clone()])
        .unwrap();
    let config = SourceConfig {
        provider_timeout: Duration::from_millis(200),
    };
    for family in [Family::Document, Family::Procedure] {
        let started = Instant::now();
        let done = complete_with(&session, family, "", &[("provider", "slow")], &config);
        let waited = started.elapsed();
        assert_eq!(done, Completion::empty(), "{family}");
        assert!(
            waited < Duration::from_secs(5),
            "{family} waited {waited:?}"
        );
    }
    // The first call overran and still runs: the second family got no new call.
    assert_eq!(hanging.calls(), 1);
}

#[test]
fn malformed_pages_give_an_empty_completion() {
    let too_many = ProcedurePage {
        entries: (0..501)
            .map(|i| entry(&format!("{:#x}", i + 1), None))
            .collect(),
        next_cursor: None,
    };
    let bad_address = ProcedurePage {
        entries: vec![entry("0x10", Some("ok")), entry("0X20", Some("upper"))],
        next_cursor: None,
    };
    let long_name = "n".repeat(4_097);
    let over_long = ProcedurePage {
        entries: vec![entry("0x10", Some(&long_name))],
        next_cursor: None,
    };
    let repeating = ProcedurePage {
        entries: vec![entry("0x10", Some("loop"))],
        next_cursor: Some("again".to_owned()),
    };
    for page in [too_many, bad_address, over_long, repeating] {
        let provider = FakeProvider::new("odd", vec![("doc", Vec::new())])
            .behaving(Behaviour::FixedPage(page));
        let session = open(vec![Arc::new(provider)]);
        assert_eq!(
            complete(&session, Family::Procedure, "", &[]),
            Completion::empty()
        );
    }
}

#[test]
fn repeated_or_empty_document_names_give_an_empty_completion() {
    for names in [vec!["a", "a"], vec!["a", ""]] {
        let documents = names.into_iter().map(|n| (n, Vec::new())).collect();
        let session = open(vec![Arc::new(FakeProvider::new("odd", documents))]);
        assert_eq!(
            complete(&session, Family::Document, "", &[]),
            Completion::empty()
        );
    }
}

#[test]
fn evidence_ids_are_offered_and_closed_ones_never_again() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    let first = session
        .record_evidence(Observation::unbound("probe", json!({}), json!(1)))
        .unwrap();
    assert_eq!(
        values(&complete(&session, Family::Evidence, "", &[])),
        [first.id.as_str()]
    );
    session.close().unwrap();
    session
        .open_providers("target", vec![Arc::new(app_and_lib("fake"))])
        .unwrap();
    let second = session
        .record_evidence(Observation::unbound("probe", json!({}), json!(2)))
        .unwrap();
    assert_eq!(
        values(&complete(&session, Family::Evidence, "", &[])),
        [second.id.as_str()]
    );
}

#[test]
fn opening_and_switching_change_the_next_suggestions() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    assert_eq!(
        values(&complete(&session, Family::Procedure, "m", &[])),
        ["main"]
    );
    session.set_current_document(None, "lib").unwrap();
    assert_eq!(
        values(&complete(&session, Family::Procedure, "", &[])),
        ["0x2000", "0x2100", "fini", "init"]
    );
    let other = FakeProvider::new("other", vec![("solo", vec![entry("0x42", Some("answer"))])]);
    session
        .open_providers("other", vec![Arc::new(other)])
        .unwrap();
    assert_eq!(
        values(&complete(&session, Family::Document, "", &[])),
        ["solo"]
    );
    assert_eq!(
        values(&complete(&session, Family::Procedure, "", &[])),
        ["0x42", "answer"]
    );
}

#[test]
fn completion_never_changes_the_session() {
    let session = open(vec![
        Arc::new(app_and_lib("fake")),
        Arc::new(app_and_lib("other")),
    ]);
    session
        .record_evidence(Observation::unbound("probe", json!({}), json!(1)))
        .unwrap();
    let ids = session.evidence_ids();
    let before = (
        session.current_document(),
        session.providers(),
        session.label(),
    );
    for family in Family::ALL {
        for context in [vec![], vec![("provider", "other"), ("document", "lib")]] {
            complete(&session, family, "", &context);
        }
    }
    assert_eq!(session.evidence_ids(), ids);
    assert_eq!(
        (
            session.current_document(),
            session.providers(),
            session.label()
        ),
        before
    );
}

#[test]
fn later_families_are_empty_for_a_session_and_read_from_the_view() {
    let session = open(vec![Arc::new(app_and_lib("fake"))]);
    for family in [
        Family::ProcessCapture,
        Family::ArtifactManifest,
        Family::ArtifactOccurrence,
        Family::ResidualUnknown,
    ] {
        assert_eq!(
            complete(&session, family, "", &[]),
            Completion::empty(),
            "{family}"
        );
    }

    struct Stores;
    impl SessionView for Stores {
        fn provider_ids(&self) -> Vec<String> {
            Vec::new()
        }
        fn provider(&self, _: Option<&str>) -> Option<Arc<dyn Provider>> {
            None
        }
        fn current_document(&self) -> Option<String> {
            None
        }
        fn evidence_ids(&self) -> Arc<[String]> {
            vec!["ev-000000000001".to_owned()].into()
        }
        fn process_capture_ids(&self) -> Vec<String> {
            vec!["ev-000000000001".to_owned()]
        }
        fn artifact_manifest_ids(&self) -> Vec<String> {
            vec!["manifest-b".to_owned(), "manifest-a".to_owned()]
        }
        fn artifact_occurrence_ids(&self) -> Vec<String> {
            vec!["occ-1".to_owned()]
        }
        fn residual_unknown_ids(&self) -> Vec<String> {
            vec!["unknown-7".to_owned()]
        }
    }
    assert_eq!(
        values(&complete(&Stores, Family::ProcessCapture, "", &[])),
        ["ev-000000000001"]
    );
    assert_eq!(
        values(&complete(&Stores, Family::ArtifactManifest, "", &[])),
        ["manifest-a", "manifest-b"]
    );
    assert_eq!(
        values(&complete(&Stores, Family::ArtifactOccurrence, "OCC", &[])),
        ["occ-1"]
    );
    assert_eq!(
        values(&complete(&Stores, Family::ResidualUnknown, "u", &[])),
        ["unknown-7"]
    );
    assert_eq!(
        complete(&Stores, Family::Document, "", &[]),
        Completion::empty()
    );
}
