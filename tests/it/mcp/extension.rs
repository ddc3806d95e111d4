//! The extension point (`Server::with_extension`): an integrator's tools and prompts served
//! beside the built-in ones, with progress and logging on the request's stream, requests to
//! the client in the 2025 era, and sealed `requestState` on `input_required` results in the
//! 2026 era (a tampered state, another request's state and a state for another method are
//! refused).

use std::sync::Arc;

use rea::mcp::{
    Extension, ExtensionContext, ExtensionError, Handled, LogLevel, Reply, Server, ServerConfig,
};
use serde_json::{Map, Value, json};

use crate::support::Client;

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings()
        .bind(|| insta::assert_json_snapshot!(format!("mcp_extension__{name}"), value));
}

#[derive(Debug)]
struct Probe;

fn text(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

impl Probe {
    async fn call(&self, name: &str, context: &ExtensionContext) -> Result<Reply, ExtensionError> {
        match name {
            "probe_ask" => {
                let answer = context
                    .ask("elicitation/create", json!({ "message": "Name?", "requestedSchema": { "type": "object", "properties": {} } }))
                    .await?;
                Ok(Reply::Complete(text(&format!("answered {}", answer["action"]))))
            }
            "probe_notify" => {
                context.progress(1.0, Some(2.0), None).await;
                context.log(LogLevel::Info, json!("working")).await;
                context.log(LogLevel::Debug, json!("below the threshold")).await;
                Ok(Reply::Complete(text("notified")))
            }
            "probe_input" | "probe_other" => match (context.input_responses(), context.state()) {
                (Some(responses), Some(state)) => Ok(Reply::Complete(text(&format!(
                    "{} with {}",
                    state["kept"],
                    responses.len()
                )))),
                _ => Ok(Reply::InputRequired {
                    requests: [(
                        "confirm".to_owned(),
                        json!({ "method": "elicitation/create", "params": { "message": "OK?", "requestedSchema": { "type": "object", "properties": {} } } }),
                    )]
                    .into_iter()
                    .collect(),
                    state: Some(json!({ "kept": name })),
                }),
            },
            "probe_sampling" => Err(ExtensionError::MissingClientCapability("sampling".into())),
            _ => Err(ExtensionError::Failed(format!("no tool {name}"))),
        }
    }
}

const TOOLS: [&str; 5] = [
    "probe_ask",
    "probe_notify",
    "probe_input",
    "probe_other",
    "probe_sampling",
];

impl Extension for Probe {
    fn tools(&self) -> Vec<Value> {
        TOOLS
            .iter()
            .map(|name| json!({ "name": name, "description": "A probe", "inputSchema": { "type": "object" } }))
            .collect()
    }

    fn prompts(&self) -> Vec<Value> {
        vec![json!({ "name": "probe_prompt", "description": "A probe prompt" })]
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        _arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        Box::pin(async move {
            if !TOOLS.contains(&name) {
                return None;
            }
            Some(self.call(name, context).await)
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        _arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        Box::pin(async move {
            (name == "probe_prompt").then(|| {
                Ok(Reply::Complete(
                    json!({ "messages": [{ "role": "user", "content": {
                    "type": "text", "text": format!("state {}", context.state().is_some()) } }] }),
                ))
            })
        })
    }
}

fn server() -> Server {
    Server::new(ServerConfig::default()).with_extension(Arc::new(Probe))
}

#[tokio::test]
async fn extension_tools_and_prompts_are_listed_after_the_built_in_ones() {
    let mut client = Client::start(server());
    client.initialize("2025-11-25").await;
    let tools = client.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"open_binary"), "built-in tools first");
    assert_eq!(&names[names.len() - TOOLS.len()..], &TOOLS);
    let prompts = client.request("prompts/list", json!({})).await;
    let last = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    assert_eq!(last.unwrap()["name"], "probe_prompt");
    // A name the extension does not answer is the built-in catalog's.
    let unknown = client
        .request("tools/call", json!({ "name": "no_such_tool" }))
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn progress_and_logs_go_before_the_answer_and_respect_the_threshold() {
    let mut client = Client::start(server());
    client.initialize("2025-11-25").await;
    client
        .request("logging/setLevel", json!({ "level": "info" }))
        .await;
    client
        .send(&json!({ "jsonrpc": "2.0", "id": 50, "method": "tools/call",
                       "params": { "name": "probe_notify", "_meta": { "progressToken": "p1" } } }))
        .await;
    let progress = client.recv().await;
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "p1");
    let log = client.recv().await;
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["data"], "working");
    let answer = client.recv().await;
    assert_eq!(answer["id"], 50);
    assert_eq!(answer["result"]["content"][0]["text"], "notified");
}

#[tokio::test]
async fn a_2025_handler_asks_the_client_and_gets_its_answer_back() {
    let mut client = Client::start(server());
    client.initialize("2025-11-25").await;
    client
        .send(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": { "name": "probe_ask" } }))
        .await;
    let asked = client.recv().await;
    assert_eq!(asked["method"], "elicitation/create");
    let id = asked["id"].clone();
    // An answer to no pending request changes nothing.
    client
        .send(&json!({ "jsonrpc": "2.0", "id": "rea-ask-999", "result": { "action": "decline" } }))
        .await;
    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": id, "result": { "action": "accept", "content": {} } }),
        )
        .await;
    let answer = client.recv().await;
    assert_eq!(answer["id"], 7);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "answered \"accept\""
    );
}

/// The first round of `tool`: its `input_required` result.
async fn first_round(client: &mut Client, tool: &str) -> Value {
    let first = client
        .request_modern("tools/call", json!({ "name": tool }), json!({}))
        .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"]["inputRequests"]["confirm"].is_object());
    first["result"].clone()
}

fn retry(tool: &str, state: &Value) -> Value {
    json!({ "name": tool, "inputResponses": { "confirm": { "action": "accept", "content": {} } },
            "requestState": state })
}

#[tokio::test]
async fn a_2026_handler_gets_its_sealed_state_back_on_the_retry() {
    let mut client = Client::start(server());
    let first = first_round(&mut client, "probe_input").await;
    let state = &first["requestState"];
    assert!(state.is_string());
    let done = client
        .request_modern("tools/call", retry("probe_input", state), json!({}))
        .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "\"probe_input\" with 1"
    );
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let mut client = Client::start(server());
    let first = first_round(&mut client, "probe_input").await;
    let sealed = first["requestState"].as_str().unwrap();
    // Flip one hex digit of the payload: the tag no longer matches.
    let mut tampered: Vec<char> = sealed.chars().collect();
    tampered[3] = if tampered[3] == '0' { '1' } else { '0' };
    let tampered: String = tampered.into_iter().collect();
    let refused = client
        .request_modern(
            "tools/call",
            retry("probe_input", &json!(tampered)),
            json!({}),
        )
        .await;
    snapshot("tampered_state", &refused["error"]);
    let appended = client
        .request_modern(
            "tools/call",
            retry("probe_input", &json!(format!("{sealed}-TAMPERED"))),
            json!({}),
        )
        .await;
    assert_eq!(appended["error"]["code"], -32602);
    let garbage = client
        .request_modern(
            "tools/call",
            retry("probe_input", &json!("not a state")),
            json!({}),
        )
        .await;
    snapshot("malformed_state", &garbage["error"]);
}

#[tokio::test]
async fn another_requests_state_is_refused() {
    let mut client = Client::start(server());
    let first = first_round(&mut client, "probe_input").await;
    let replayed = client
        .request_modern(
            "tools/call",
            retry("probe_other", &first["requestState"]),
            json!({}),
        )
        .await;
    snapshot("state_of_another_tool", &replayed["error"]);
}

#[tokio::test]
async fn a_state_for_another_method_is_refused() {
    let mut client = Client::start(server());
    let first = first_round(&mut client, "probe_input").await;
    let prompt = client
        .request_modern(
            "prompts/get",
            json!({ "name": "probe_prompt", "requestState": first["requestState"] }),
            json!({}),
        )
        .await;
    snapshot("state_of_another_method", &prompt["error"]);
}

#[tokio::test]
async fn a_missing_client_capability_is_minus_32021_naming_it() {
    let mut client = Client::start(server());
    let refused = client
        .request_modern("tools/call", json!({ "name": "probe_sampling" }), json!({}))
        .await;
    snapshot("missing_capability", &refused["error"]);
}
