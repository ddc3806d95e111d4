//! `completion/complete` through the real stdio loop, over in-test sessions.

use std::sync::Arc;
use std::time::Duration;

use crate::support::Client;
use crate::support::fixtures;
use crate::support::fixtures::fake::{Behaviour, FakeProvider, app_and_lib};
use rea::core::{ProcedureEntry, ProcedurePage};
use rea::mcp::{Server, ServerConfig};
use rea::session::{Observation, Provider, Session, SourceConfig};
use serde_json::{Value, json};

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_completion__{name}"), value);
    });
}

fn session_with(provider: impl Provider) -> Arc<Session> {
    let session = Arc::new(Session::new());
    let provider: Arc<dyn Provider> = Arc::new(provider);
    session.open_providers("in-test", vec![provider]).unwrap();
    session
}

async fn client_for(session: Arc<Session>, config: ServerConfig) -> Client {
    let mut client = Client::start(Server::with_session(config, session));
    client.initialize("2025-11-25").await;
    client
}

fn request(prompt: &str, argument: &str, value: &str, context: Value) -> Value {
    json!({
        "ref": { "type": "ref/prompt", "name": prompt },
        "argument": { "name": argument, "value": value },
        "context": { "arguments": context },
    })
}

async fn complete(client: &mut Client, params: Value) -> Value {
    client.request("completion/complete", params).await
}

#[tokio::test]
async fn documents_come_from_the_current_provider() {
    let mut client = client_for(session_with(app_and_lib("fake")), ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("investigate_feature", "document", "", json!({})),
    )
    .await;
    assert_eq!(
        answer["result"]["completion"],
        json!({ "values": ["app", "lib"], "total": 2, "hasMore": false })
    );
}

#[tokio::test]
async fn procedures_forward_the_document_context_and_drop_shared_names() {
    let mut client = client_for(session_with(app_and_lib("fake")), ServerConfig::default()).await;
    let app = complete(
        &mut client,
        request("trace_crash", "procedure", "", json!({})),
    )
    .await;
    // `dup` names two addresses and is never offered; addresses and unique names are.
    assert_eq!(
        app["result"]["completion"]["values"],
        json!(["0x1000", "0x1100", "0x1200", "0x1300", "main"])
    );
    let lib = complete(
        &mut client,
        request("trace_crash", "procedure", "", json!({ "document": "lib" })),
    )
    .await;
    assert_eq!(
        lib["result"]["completion"]["values"],
        json!(["0x2000", "0x2100", "fini", "init"])
    );
    let prefixed = complete(
        &mut client,
        request("trace_crash", "procedure", "0X11", json!({})),
    )
    .await;
    assert_eq!(
        prefixed["result"]["completion"]["values"],
        json!(["0x1100"])
    );
}

#[tokio::test]
async fn procedures_offer_aliases_that_name_one_address() {
    let aliased = |address: &str, name: &str, aliases: &[&str]| ProcedureEntry {
        aliases: aliases.iter().map(|alias| alias.to_string()).collect(),
        ..fixtures::fake::entry(address, Some(name))
    };
    let provider = FakeProvider::new(
        "fake",
        vec![(
            "libc",
            vec![
                aliased("0x100", "memcmp", &["bcmp"]),
                // `index` is an alias here and the primary name at 0x300: never offered.
                aliased("0x200", "strchr", &["index"]),
                aliased("0x300", "index", &[]),
            ],
        )],
    );
    let mut client = client_for(session_with(provider), ServerConfig::default()).await;
    for (prefix, values) in [
        ("memc", json!(["memcmp"])),
        ("BC", json!(["bcmp"])),
        (
            "",
            json!(["0x100", "0x200", "0x300", "bcmp", "memcmp", "strchr"]),
        ),
    ] {
        let answer = complete(
            &mut client,
            request("trace_crash", "procedure", prefix, json!({})),
        )
        .await;
        assert_eq!(
            answer["result"]["completion"]["values"], values,
            "{prefix:?}"
        );
    }
}

#[tokio::test]
async fn providers_and_evidence_are_live_and_completion_changes_nothing() {
    let session = session_with(app_and_lib("fake"));
    let first = session
        .record_evidence(Observation::unbound(
            "list_documents",
            json!({}),
            json!(["app", "lib"]),
        ))
        .unwrap();
    let mut client = client_for(session.clone(), ServerConfig::default()).await;
    let providers = complete(
        &mut client,
        request("investigate_feature", "provider", "F", json!({})),
    )
    .await;
    assert_eq!(providers["result"]["completion"]["values"], json!(["fake"]));
    let before = session.evidence_ids();
    let evidence = complete(
        &mut client,
        request("verify_reconstruction", "evidence", "ev-", json!({})),
    )
    .await;
    assert_eq!(
        evidence["result"]["completion"]["values"],
        json!([first.id.as_str()])
    );
    for family_argument in [
        ("investigate_feature", "document"),
        ("investigate_feature", "procedure"),
        ("trace_crash", "capture"),
        ("compare_application_versions", "baseline_manifest"),
        ("compare_application_versions", "occurrence"),
        ("audit_residual_unknowns", "unknown"),
    ] {
        complete(
            &mut client,
            request(family_argument.0, family_argument.1, "", json!({})),
        )
        .await;
    }
    assert_eq!(
        session.evidence_ids(),
        before,
        "completion records no Evidence"
    );
}

#[tokio::test]
async fn free_text_arguments_get_an_empty_result() {
    let mut client = client_for(session_with(app_and_lib("fake")), ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("investigate_feature", "feature", "a", json!({})),
    )
    .await;
    assert_eq!(
        answer["result"]["completion"],
        json!({ "values": [], "total": 0, "hasMore": false })
    );
}

#[tokio::test]
async fn failing_and_hanging_providers_give_empty_results_within_the_bound() {
    let malformed_page = ProcedurePage {
        entries: vec![fixtures::fake::entry("not-an-address", Some("main"))],
        next_cursor: None,
    };
    let malformed =
        session_with(app_and_lib("fake").behaving(Behaviour::FixedPage(malformed_page)));
    let mut client = client_for(malformed, ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("investigate_feature", "procedure", "", json!({})),
    )
    .await;
    assert_eq!(
        answer["result"]["completion"],
        json!({ "values": [], "total": 0, "hasMore": false })
    );

    // Opening waits for the slow provider once; completion then gives up at its bound.
    let hanging =
        session_with(app_and_lib("fake").behaving(Behaviour::Hang(Duration::from_secs(2))));
    let config = ServerConfig {
        sources: SourceConfig {
            provider_timeout: Duration::from_millis(200),
        },
        ..ServerConfig::default()
    };
    let mut client = client_for(hanging, config).await;
    let answer = complete(
        &mut client,
        request("investigate_feature", "procedure", "", json!({})),
    )
    .await;
    assert_eq!(
        answer["result"]["completion"],
        json!({ "values": [], "total": 0, "hasMore": false })
    );
    // The server keeps answering other requests.
    assert_eq!(client.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn unknown_prompt_is_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("no_such_prompt", "document", "", json!({})),
    )
    .await;
    snapshot("unknown_prompt", &answer);
}

#[tokio::test]
async fn unknown_argument_is_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("trace_crash", "evidence", "", json!({})),
    )
    .await;
    snapshot("unknown_argument", &answer);
}

#[tokio::test]
async fn over_long_value_is_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let at_bound = "é".repeat(4096);
    let ok = complete(
        &mut client,
        request("trace_crash", "procedure", &at_bound, json!({})),
    )
    .await;
    assert!(ok.get("result").is_some());
    let over = "é".repeat(4097);
    let answer = complete(
        &mut client,
        request("trace_crash", "procedure", &over, json!({})),
    )
    .await;
    snapshot("over_long_value", &answer);
}

#[tokio::test]
async fn wrong_ref_type_is_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let mut params = request("trace_crash", "procedure", "", json!({}));
    params["ref"] = json!({ "type": "ref/resource", "uri": "file:///x" });
    snapshot("ref_resource", &complete(&mut client, params.clone()).await);
    params["ref"] = json!({ "type": "ref/tool", "name": "trace_crash" });
    snapshot("ref_unknown_type", &complete(&mut client, params).await);
}

#[tokio::test]
async fn non_string_context_values_are_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let answer = complete(
        &mut client,
        request("trace_crash", "procedure", "", json!({ "document": 7 })),
    )
    .await;
    snapshot("non_string_context", &answer);
}

#[tokio::test]
async fn malformed_requests_are_invalid_params() {
    let mut client = client_for(Arc::new(Session::new()), ServerConfig::default()).await;
    let missing_argument = json!({ "ref": { "type": "ref/prompt", "name": "trace_crash" } });
    snapshot(
        "missing_argument",
        &complete(&mut client, missing_argument).await,
    );
    let number_value = json!({
        "ref": { "type": "ref/prompt", "name": "trace_crash" },
        "argument": { "name": "procedure", "value": 12 }
    });
    snapshot(
        "non_string_value",
        &complete(&mut client, number_value).await,
    );
}
