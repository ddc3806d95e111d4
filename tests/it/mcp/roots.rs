//! Client roots: a client that declares the `roots` capability is asked for them, and every
//! path the tools touch is then confined to them; an empty list names no boundary. Whatever
//! confinement refuses, the client is told why once per cause.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rea::files::Confinement;
use rea::mcp::{Server, ServerConfig};
use rea::session::Session;
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::fixtures::{Format, Spec, build};

/// Receives the server's `roots/list` request and answers it with `roots`.
async fn answer_roots(client: &mut Client, roots: &[&Path]) {
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    let roots: Vec<Value> = roots
        .iter()
        .map(|root| json!({ "uri": format!("file://{}", root.display()) }))
        .collect();
    client
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": roots } }))
        .await;
}

/// Calls `open_binary` on `path`: its result and the messages told before it.
async fn open_told(client: &mut Client, path: &Path) -> (Value, Vec<Value>) {
    let (answer, told) = client
        .request_told(
            "tools/call",
            json!({ "name": "open_binary", "arguments": { "path": path } }),
        )
        .await;
    (answer["result"].clone(), told)
}

async fn open(client: &mut Client, path: &Path) -> Value {
    open_told(client, path).await.0
}

/// The one warning told: its text, which names `path` and the roots.
fn one_warning(told: &[Value], path: &Path) -> String {
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["params"]["level"], "warning", "{told:?}");
    let text = told[0]["params"]["data"].as_str().unwrap().to_owned();
    assert!(text.contains(&*path.to_string_lossy()), "{text}");
    assert!(text.contains("roots"), "{text}");
    text
}

#[tokio::test]
async fn paths_are_confined_to_the_roots_the_client_names() {
    let inside = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let bytes = build(&Spec::sample(), Format::Elf).bytes;
    std::fs::write(inside.path().join("app"), &bytes).unwrap();
    std::fs::write(outside.path().join("app"), &bytes).unwrap();

    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize_with_roots().await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    // Until the client names its roots, nothing may be opened (the call waits a bounded
    // time for the answer, then is refused, and the client hears why).
    let (refused, told) = open_told(&mut client, &inside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = one_warning(&told, &inside.path().join("app"));
    assert!(text.contains("(none)"), "{text}");

    let roots: Vec<Value> = vec![json!({ "uri": format!("file://{}", inside.path().display()) })];
    client
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": roots } }))
        .await;
    let opened = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let (refused, told) = open_told(&mut client, &outside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    one_warning(&told, &outside.path().join("app"));
    // The same cause is told once.
    let (refused, told) = open_told(&mut client, &outside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(told.is_empty(), "{told:?}");

    // The roots change: the server asks again and follows the new list.
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[outside.path()]).await;
    let opened = open(&mut client, &outside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let (refused, told) = open_told(&mut client, &inside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    one_warning(&told, &inside.path().join("app"));
}

#[tokio::test]
async fn a_client_without_the_capability_is_never_asked() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn a_binary_left_outside_narrowed_roots_is_no_longer_read() {
    let inside = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        inside.path().join("app"),
        build(&Spec::sample(), Format::Elf).bytes,
    )
    .unwrap();
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize_with_roots().await;
    answer_roots(&mut client, &[inside.path()]).await;
    let opened = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    assert_eq!(list_one(&mut client).await["isError"], false);

    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[other.path()]).await;
    let (refused, told) = client
        .request_told(
            "tools/call",
            json!({ "name": "list_procedures", "arguments": { "limit": 1 } }),
        )
        .await;
    let refused = &refused["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("outside the roots"), "{text}");
    let warning = one_warning(&told, &inside.path().join("app"));
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    assert!(
        warning.contains(&*other_root.to_string_lossy()),
        "{warning}"
    );
    // Told once: the calls and the completion below hear nothing more about it.
    for tool in ["read_bytes", "search_strings", "disassemble"] {
        let arguments = match tool {
            "read_bytes" => json!({ "address": "0x0", "length": 1 }),
            "search_strings" => json!({ "contains": "a" }),
            _ => json!({ "procedure": "main" }),
        };
        let answer = client
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
    }
    let completion = complete_procedure(&mut client).await;
    assert_eq!(completion["result"]["completion"]["values"], json!([]));
    let text = trace_crash_text(&mut client).await;
    assert!(
        text.contains("lies outside the roots the client allows now"),
        "{text}"
    );
    assert!(!text.contains("A binary is open"), "{text}");

    // The roots include it again: it is read again.
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[inside.path(), other.path()]).await;
    assert_eq!(list_one(&mut client).await["isError"], false);
}

/// The completion of `trace_crash`'s `procedure` from the empty prefix.
async fn complete_procedure(client: &mut Client) -> Value {
    client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "trace_crash" },
                    "argument": { "name": "procedure", "value": "" } }),
        )
        .await
}

/// The text `trace_crash` renders.
async fn trace_crash_text(client: &mut Client) -> String {
    let prompt = client
        .request(
            "prompts/get",
            json!({ "name": "trace_crash", "arguments": { "symptom": "SIGSEGV" } }),
        )
        .await;
    prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn list_one(client: &mut Client) -> Value {
    let request = json!({ "name": "list_procedures", "arguments": { "limit": 1 } });
    client.request("tools/call", request).await["result"].clone()
}

/// A server whose session has `path` open (as `rea serve --open` does), confined to `root`
/// when given.
fn server_with_open(path: &Path, root: Option<&Path>) -> Server {
    let session = Arc::new(Session::new());
    if let Some(root) = root {
        session.set_confinement(Confinement::to_roots([root]).unwrap());
    }
    rea::providers::open_path(&session, path).unwrap();
    Server::with_session(ServerConfig::default(), session)
}

#[tokio::test]
async fn an_empty_roots_list_names_no_boundary() {
    let folder = tempfile::tempdir().unwrap();
    let app = folder.path().join("app");
    std::fs::write(&app, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let mut client = Client::start(server_with_open(&app, None));
    client.initialize_with_roots().await;
    answer_roots(&mut client, &[]).await;
    let listed = list_one(&mut client).await;
    assert_eq!(listed["isError"], false, "{listed}");
    let completion = complete_procedure(&mut client).await;
    let values = &completion["result"]["completion"]["values"];
    assert!(!values.as_array().unwrap().is_empty(), "{completion}");
    let text = trace_crash_text(&mut client).await;
    assert!(text.contains("A binary is open in this session."), "{text}");
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn with_an_empty_roots_list_the_servers_roots_alone_confine() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let bytes = build(&Spec::sample(), Format::Elf).bytes;
    std::fs::write(allowed.path().join("app"), &bytes).unwrap();
    std::fs::write(outside.path().join("app"), &bytes).unwrap();
    let mut client = Client::start(server_with_open(
        &allowed.path().join("app"),
        Some(allowed.path()),
    ));
    client.initialize_with_roots().await;
    answer_roots(&mut client, &[]).await;
    let opened = open(&mut client, &allowed.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let (refused, told) = open_told(&mut client, &outside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let warning = one_warning(&told, &outside.path().join("app"));
    let root = std::fs::canonicalize(allowed.path()).unwrap();
    assert!(warning.contains(&*root.to_string_lossy()), "{warning}");
}

#[tokio::test]
async fn a_request_sent_before_the_roots_answer_waits_for_it() {
    let folder = tempfile::tempdir().unwrap();
    let app = folder.path().join("app");
    std::fs::write(&app, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let mut client = Client::start(server_with_open(&app, None));
    client.initialize_with_roots().await;
    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": "early", "method": "tools/call",
                       "params": { "name": "list_procedures", "arguments": { "limit": 1 } } }),
        )
        .await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    client
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": [] } }))
        .await;
    let answer = client.recv().await;
    assert_eq!(answer["id"], "early");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}

/// The real `rea serve --open`, driven over its stdio by a client that declares `roots` and
/// answers `[]` (the MCP Inspector's default), which sends its requests at once after
/// `notifications/initialized`, before it has read the server's `roots/list`.
#[test]
fn rea_serve_open_with_a_client_that_names_no_roots() {
    let binary = Path::new("/bin/ls");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .arg("serve")
        .arg("--open")
        .arg(binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let output = BufReader::new(child.stdout.take().unwrap());
    let (lines, received) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in output.lines().map_while(Result::ok) {
            if lines.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| writeln!(input, "{message}").unwrap();
    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": { "protocolVersion": "2025-11-25", "capabilities": { "roots": { "listChanged": true } },
                             "clientInfo": { "name": "like-the-inspector", "version": "0" } } }));
    let initialized = received.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(initialized["id"], 1, "{initialized}");
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    send(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "completion/complete",
                 "params": { "ref": { "type": "ref/prompt", "name": "trace_crash" },
                             "argument": { "name": "procedure", "value": "0x1" } } }),
    );
    send(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": { "name": "list_procedures", "arguments": { "limit": 5 } } }));
    let mut answers = std::collections::BTreeMap::new();
    let mut told = Vec::new();
    while answers.len() < 2 {
        let message = received.recv_timeout(Duration::from_secs(20)).unwrap();
        if message["method"] == "roots/list" {
            send(json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "roots": [] } }));
        } else if let Some(id) = message["id"].as_i64() {
            answers.insert(id, message);
        } else {
            told.push(message);
        }
    }
    drop(input);
    let completion = &answers[&2]["result"]["completion"];
    let values = completion["values"].as_array().unwrap();
    assert!(!values.is_empty(), "{completion}");
    assert!(
        values
            .iter()
            .all(|v| v.as_str().unwrap().starts_with("0x1")),
        "{completion}"
    );
    let listed = &answers[&3]["result"];
    assert_eq!(listed["isError"], false, "{listed}");
    assert!(
        told.is_empty(),
        "nothing is refused, so nothing is told: {told:?}"
    );
    assert!(child.wait().unwrap().success());
}
