//! Logging on both eras (docs/CONTRACT.md section 8c): `logging/setLevel` per 2025
//! connection, `_meta` `logLevel` per 2026 request, and `notifications/message` carrying what a
//! client should see (a provider call that timed out, a bound that cut a result short, a
//! confinement refusal), sent before the answer of the request it is about, and never without
//! a level, except that a 2025 connection hears each confinement refusal once per cause.

use std::sync::Arc;
use std::time::Duration;

use rea::files::Confinement;
use rea::mcp::{Server, ServerConfig};
use rea::session::{Provider, Session, SourceConfig};
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::fixtures::fake::{Behaviour, app_and_lib};
use crate::support::fixtures::{Format, Spec, build};

fn snapshot(name: &str, value: &Value) {
    snapshot_under(name, value, None);
}

/// [`snapshot`], with the confinement's root `root` (a temporary directory) written `[root]`.
fn snapshot_under(name: &str, value: &Value, root: Option<&std::path::Path>) {
    let mut settings = crate::support::snapshots::settings();
    if let Some(root) = root {
        let canonical = std::fs::canonicalize(root).unwrap();
        crate::support::snapshots::filter_path(&mut settings, &canonical, "[root]");
    }
    settings.bind(|| insta::assert_json_snapshot!(format!("mcp_logging__{name}"), value));
}

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// A server confined to an empty directory: every path the tools open is refused.
fn confined() -> (Server, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let session = Arc::new(Session::new());
    session.set_confinement(Confinement::to_roots([root.path()]).unwrap());
    (Server::with_session(ServerConfig::default(), session), root)
}

fn open_ls() -> Value {
    open_at("/bin/ls")
}

fn open_at(path: &str) -> Value {
    json!({ "name": "open_binary", "arguments": { "path": path } })
}

#[tokio::test]
async fn set_level_sets_the_threshold_of_a_2025_connection() {
    let (server, root) = confined();
    let mut client = Client::start(server);
    let early = client
        .request("logging/setLevel", json!({ "level": "info" }))
        .await;
    assert_eq!(
        early["error"]["code"], -32600,
        "a 2025 method needs initialize"
    );
    client.initialize("2025-11-25").await;

    // No level set: a confinement refusal is still told, once per cause.
    let (refused, told) = client.request_told("tools/call", open_at("/bin/cat")).await;
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["params"]["level"], "warning");
    let (refused, told) = client.request_told("tools/call", open_at("/bin/cat")).await;
    assert_eq!(refused["result"]["isError"], true);
    assert!(told.is_empty(), "{told:?}");

    let set = client
        .request("logging/setLevel", json!({ "level": "warning" }))
        .await;
    assert_eq!(set["result"], json!({}));
    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": "open", "method": "tools/call", "params": open_ls() }),
        )
        .await;
    let message = client.recv().await;
    assert_eq!(message["method"], "notifications/message", "{message}");
    assert_eq!(message["params"]["level"], "warning");
    assert_eq!(message["params"]["logger"], "rea");
    snapshot_under("confinement_refused", &message["params"], Some(root.path()));
    let answer = client.recv().await;
    assert_eq!(answer["id"], "open");
    assert_eq!(answer["result"]["isError"], true);

    // Above the notice's level: nothing but the answer.
    client
        .request("logging/setLevel", json!({ "level": "error" }))
        .await;
    let refused = client.request("tools/call", open_at("/bin/sh")).await;
    assert_eq!(refused["result"]["isError"], true);

    let mut errors = serde_json::Map::new();
    for (name, params) in [
        ("unknown_level", json!({ "level": "loud" })),
        ("level_not_a_string", json!({ "level": 4 })),
        ("missing_level", json!({})),
    ] {
        let answer = client.request("logging/setLevel", params).await;
        assert_eq!(answer["error"]["code"], -32602, "{name}");
        errors.insert(name.to_owned(), answer["error"].clone());
    }
    snapshot("set_level_errors", &Value::Object(errors));
}

#[tokio::test]
async fn a_2026_request_gets_messages_only_when_its_meta_names_a_level() {
    let (server, _root) = confined();
    let mut client = Client::start(server);
    let refused = client
        .request_modern("tools/call", open_ls(), json!({}))
        .await;
    assert_eq!(refused["result"]["isError"], true);
    let refused = client
        .request_modern("tools/call", open_ls(), json!({ LOG_LEVEL: "emergency" }))
        .await;
    assert_eq!(refused["result"]["isError"], true);

    client
        .send(&json!({ "jsonrpc": "2.0", "id": "open", "method": "tools/call",
                       "params": crate::support::client::with_modern_meta(open_ls(), json!({ LOG_LEVEL: "debug" })) }))
        .await;
    let message = client.recv().await;
    assert_eq!(message["method"], "notifications/message", "{message}");
    assert_eq!(message["params"]["level"], "warning");
    let answer = client.recv().await;
    assert_eq!(answer["id"], "open");
    assert_eq!(answer["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_result_cut_short_and_a_provider_time_out_are_told() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("app");
    std::fs::write(&path, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    client
        .request("logging/setLevel", json!({ "level": "notice" }))
        .await;
    let opened = client
        .request(
            "tools/call",
            json!({ "name": "open_binary", "arguments": { "path": path } }),
        )
        .await;
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": "cut", "method": "tools/call",
                       "params": { "name": "search_strings", "arguments": { "limit": 1 } } }),
        )
        .await;
    let message = client.recv().await;
    assert_eq!(message["method"], "notifications/message", "{message}");
    assert_eq!(message["params"]["level"], "notice");
    let answer = client.recv().await;
    assert_eq!(answer["id"], "cut");
    assert_eq!(answer["result"]["structuredContent"]["truncated"], true);
    let mut told = vec![message["params"].clone()];

    // A provider past its bound, for a 2026 completion that asked for warnings.
    let session = Arc::new(Session::new());
    let provider: Arc<dyn Provider> =
        Arc::new(app_and_lib("fake").behaving(Behaviour::Hang(Duration::from_secs(2))));
    session.open_providers("in-test", vec![provider]).unwrap();
    let config = ServerConfig {
        sources: SourceConfig {
            provider_timeout: Duration::from_millis(200),
        },
        ..ServerConfig::default()
    };
    let mut client = Client::start(Server::with_session(config, session));
    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": "late", "method": "completion/complete",
                       "params": crate::support::client::with_modern_meta(json!({
                           "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                           "argument": { "name": "procedure", "value": "" },
                       }), json!({ LOG_LEVEL: "warning" })) }),
        )
        .await;
    // The time-out, and any later call skipped because the provider still overruns.
    let answer = loop {
        let message = client.recv().await;
        if message.get("id").is_some() {
            break message;
        }
        assert_eq!(message["method"], "notifications/message", "{message}");
        assert_eq!(message["params"]["level"], "warning");
        told.push(message["params"].clone());
    };
    assert!(told.len() >= 2, "{told:?}");
    assert_eq!(answer["id"], "late");
    assert_eq!(answer["result"]["completion"]["values"], json!([]));
    snapshot("cut_and_timed_out", &Value::Array(told));
}

/// One completion request shares one bound among its provider calls: a call that would start
/// after the request's deadline (spent waiting for a thread, or on earlier calls) is not made,
/// and the answer says so with the time-out notice.
#[test]
fn a_completion_past_its_request_deadline_calls_no_provider_and_says_so() {
    use std::collections::BTreeMap;

    use rea::core::{Family, Prefix};
    use rea::notices::{Notice, collect};
    use rea::session::{complete_argument, within_request_deadline};

    let session = Session::new();
    let fake = Arc::new(app_and_lib("fake"));
    let provider: Arc<dyn Provider> = fake.clone();
    session.open_providers("in-test", vec![provider]).unwrap();
    let complete = || {
        complete_argument(
            &session,
            Family::Procedure,
            &Prefix::new("").unwrap(),
            &BTreeMap::new(),
            &SourceConfig::default(),
        )
    };
    let within = std::time::Instant::now() + Duration::from_secs(20);
    let (answered, notices) = collect(|| within_request_deadline(within, complete));
    assert!(!answered.values.is_empty());
    assert!(notices.is_empty(), "{notices:?}");
    let calls = fake.calls();

    let past = std::time::Instant::now();
    let (late, notices) = collect(|| within_request_deadline(past, complete));
    assert!(late.values.is_empty(), "{late:?}");
    assert_eq!(fake.calls(), calls, "no provider call after the deadline");
    assert!(
        matches!(notices.as_slice(), [Notice::ProviderTimedOut { timeout, .. }]
            if *timeout == SourceConfig::default().provider_timeout),
        "{notices:?}"
    );
}
