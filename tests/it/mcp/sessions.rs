//! Several binary sessions over one stdio connection (docs/CONTRACT.md section 13): tools,
//! prompts and completion name a session with `session` (completion through
//! `context.arguments.session`), and closing one leaves the other answering.

use crate::support::Client;
use crate::support::tools::this_executable;
use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

pub(super) fn catalog() -> String {
    crate::root()
        .join("tests/clients/fixtures/notes-catalog.json")
        .display()
        .to_string()
}

async fn started() -> Client {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    client
}

pub(super) async fn call(client: &mut Client, name: &str, arguments: Value) -> Value {
    let answer = client
        .request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await;
    answer["result"].clone()
}

pub(super) async fn open(client: &mut Client, path: &str) -> String {
    let opened = call(client, "open_binary", json!({ "path": path })).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let handle = opened["structuredContent"]["session"].as_str().unwrap();
    assert!(
        opened["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(handle),
        "the handle is in the text too"
    );
    handle.to_owned()
}

async fn complete(client: &mut Client, argument: &str, value: &str, context: Value) -> Value {
    let answer = client
        .request(
            "completion/complete",
            json!({
                "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                "argument": { "name": argument, "value": value },
                "context": { "arguments": context },
            }),
        )
        .await;
    answer["result"]["completion"]["values"].clone()
}

#[tokio::test]
async fn completion_projects_the_session_its_context_names() {
    let mut client = started().await;
    let notes = open(&mut client, &catalog()).await;
    let exe = this_executable();
    let native = open(&mut client, &exe.display().to_string()).await;

    let in_notes = complete(&mut client, "document", "", json!({ "session": notes })).await;
    assert_eq!(in_notes, json!(["Notes", "NotesHelper"]));
    let in_native = complete(&mut client, "document", "", json!({ "session": native })).await;
    let file_name = exe.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(in_native, json!([file_name]));
    let procedures = complete(
        &mut client,
        "procedure",
        "helper",
        json!({ "session": notes, "document": "NotesHelper" }),
    )
    .await;
    assert_eq!(procedures, json!(["helper_main"]));
    // Naming none completes from the client's session: the one opened last.
    assert_eq!(
        complete(&mut client, "document", "", json!({})).await,
        json!([file_name])
    );
    // An unknown handle completes nothing.
    assert_eq!(
        complete(&mut client, "document", "", json!({ "session": "bs_nope" })).await,
        json!([])
    );
    // The session argument completes this client's open handles (in code-point order, as
    // every completion).
    let handles = complete(&mut client, "session", "", json!({})).await;
    let mut expected = [notes.clone(), native.clone()];
    expected.sort();
    assert_eq!(handles, json!(expected));
}

#[tokio::test]
async fn closing_one_session_leaves_the_other_answering_and_unsuggested_ids() {
    let mut client = started().await;
    let notes = open(&mut client, &catalog()).await;
    let native = open(&mut client, &this_executable().display().to_string()).await;
    let recorded = call(
        &mut client,
        "list_procedures",
        json!({ "session": notes, "limit": 2 }),
    )
    .await;
    let id = recorded["structuredContent"]["evidence_id"].clone();
    assert_eq!(
        complete(&mut client, "document", "", json!({ "session": notes })).await,
        json!(["Notes", "NotesHelper"])
    );
    let evidence_prompt = |session: &str| {
        json!({
            "ref": { "type": "ref/prompt", "name": "verify_reconstruction" },
            "argument": { "name": "evidence", "value": "" },
            "context": { "arguments": { "session": session } },
        })
    };
    let before = client
        .request("completion/complete", evidence_prompt(&notes))
        .await;
    assert_eq!(before["result"]["completion"]["values"], json!([id]));

    let closed = call(&mut client, "close_binary", json!({ "session": notes })).await;
    assert_eq!(closed["structuredContent"]["session"], json!(notes));

    let after = client
        .request("completion/complete", evidence_prompt(&notes))
        .await;
    assert_eq!(after["result"]["completion"]["values"], json!([]));
    assert_eq!(
        complete(&mut client, "session", "", json!({})).await,
        json!([native])
    );
    let still = call(&mut client, "list_documents", json!({ "session": native })).await;
    assert_eq!(still["isError"], false, "{still}");
    let gone = call(&mut client, "list_documents", json!({ "session": notes })).await;
    assert_eq!(gone["isError"], true);
    assert!(
        gone["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("call open_binary"),
        "{gone}"
    );
}

#[tokio::test]
async fn prompts_render_for_a_named_session() {
    let mut client = started().await;
    let notes = open(&mut client, &catalog()).await;
    let listed = client.request("prompts/list", json!({})).await;
    for prompt in listed["result"]["prompts"].as_array().unwrap() {
        let session = prompt["arguments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|argument| argument["name"] == "session");
        assert!(
            session.is_some_and(|argument| argument["required"] == false),
            "{}",
            prompt["name"]
        );
    }
    let rendered = client
        .request(
            "prompts/get",
            json!({ "name": "investigate_feature",
                    "arguments": { "feature": "search", "session": notes } }),
        )
        .await;
    let text = rendered["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("A binary is open in this session."), "{text}");
    assert!(text.contains(&notes));
    let unknown = client
        .request(
            "prompts/get",
            json!({ "name": "investigate_feature",
                    "arguments": { "feature": "search", "session": "bs_closed" } }),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "Invalid params: argument \"session\" of prompt \"investigate_feature\" names no open \
         binary session (\"bs_closed\"); call open_binary and pass the session it returns"
    );
}
