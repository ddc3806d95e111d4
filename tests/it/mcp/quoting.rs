//! One quoting rule on the wire: answers to `tools/call` (tool errors and JSON-RPC errors),
//! `prompts/get` and `completion/complete` quote at most 64 consecutive characters of what the
//! client sent, through the real stdio loop.

use crate::support::Client;
use crate::support::caller_text::{Echoes, cases, long_value};
use crate::support::fixtures::{self, Format, Spec};
use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

/// Calls every tool `tools/list` names with the hostile value in each argument, as a string
/// (one call per argument: a sample of the in-process walk in `tools::quoting`), and checks
/// every error answer; returns how many calls answered an error.
async fn walk_the_listed_tools(
    client: &mut Client,
    echoes: &Echoes<'_>,
    value: &str,
    filler: &str,
) -> usize {
    let listed = client.request("tools/list", json!({})).await;
    let mut calls = 0;
    for tool in listed["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        let fillers = [filler.to_owned()];
        for case in cases(name, &tool["inputSchema"], value, &fillers) {
            if case.form != "a string" {
                continue;
            }
            let answer = client
                .request(
                    "tools/call",
                    json!({"name": name, "arguments": case.arguments}),
                )
                .await;
            assert!(
                answer["result"].is_object(),
                "{}: {answer}",
                case.describe()
            );
            // A success may keep the value as given (an unknown's question); an error quotes.
            if answer["result"]["isError"] != true {
                continue;
            }
            if let Some(problem) = echoes.problem(&case.describe(), &answer.to_string()) {
                panic!("{problem}");
            }
            calls += 1;
        }
    }
    calls
}

#[tokio::test]
async fn no_answer_on_the_wire_quotes_more_than_64_characters_of_caller_text() {
    let value = long_value(16);
    let echoes = Echoes::of(&value);
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    let check = |answer: &Value, what: &str| {
        if let Some(problem) = echoes.problem(what, &answer.to_string()) {
            panic!("{problem}");
        }
    };

    let closed = walk_the_listed_tools(&mut client, &echoes, &value, "x").await;
    let scratch = tempfile::tempdir().unwrap();
    let binary = scratch.path().join("sample.elf");
    std::fs::write(&binary, fixtures::build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let opened = client
        .request(
            "tools/call",
            json!({"name": "open_binary", "arguments": {"path": binary.display().to_string()}}),
        )
        .await;
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    let first = client
        .request(
            "tools/call",
            json!({"name": "list_procedures", "arguments": {"limit": 1}}),
        )
        .await;
    let address = first["result"]["structuredContent"]["procedures"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let open = walk_the_listed_tools(&mut client, &echoes, &value, &address).await;
    assert!(closed > 50 && open > 50, "{closed} and {open} errors");

    // JSON-RPC errors: an unknown tool, prompt, argument or reference type.
    let requests = [
        ("tools/call", json!({"name": value, "arguments": {}})),
        ("prompts/get", json!({"name": value})),
        (
            "prompts/get",
            json!({"name": "trace_crash", "arguments": {"symptom": "x", (value.clone()): "y"}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": value, "name": "trace_crash"},
                   "argument": {"name": "symptom", "value": ""}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": value},
                   "argument": {"name": "symptom", "value": ""}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "trace_crash"},
                   "argument": {"name": value, "value": ""}}),
        ),
        (value.as_str(), json!({})),
    ];
    for (index, (method, params)) in requests.into_iter().enumerate() {
        let answer = client.request(method, params).await;
        assert!(answer["error"].is_object(), "request {index}: {answer}");
        check(&answer, &format!("request {index}"));
    }
    client.finish().await;
}
