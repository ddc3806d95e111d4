//! The official MCP conformance suite's fixture tools, prompts and resources, served beside
//! rea's own through the library's extension point ([`rea::mcp::Extension`]).
//!
//! ```text
//! cargo run --release --example conformance_server -- --http 127.0.0.1:0
//! ```
//!
//! It prints `rea: serving MCP over Streamable HTTP at http://ADDR/mcp` on stderr, as
//! `rea serve --http` does. The names, texts and shapes are the ones the suite's scenarios
//! ask for (`@modelcontextprotocol/conformance` 0.2.0-alpha.12); `tests/it/conformance.rs` runs
//! every scored scenario of the 2025-11-25 and 2026-07-28 requirement sets against it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rea::mcp::http::HttpConfig;
use rea::mcp::{
    Extension, ExtensionContext, ExtensionError, Handled, ListKind, LogLevel, Reply, Server,
    ServerConfig,
};
use serde_json::{Map, Value, json};

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file with no samples (8 kHz, mono, 8 bits).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// The suite's fixtures.
#[derive(Debug)]
pub(crate) struct Fixtures;

fn text(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": { "type": "object", "properties": properties, "required": required },
    })
}

fn no_arguments(name: &str, description: &str) -> Value {
    tool(name, description, json!({}), &[])
}

fn elicitation(message: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": required },
        },
    })
}

fn sampling(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": max_tokens,
        },
    })
}

fn list_roots() -> Value {
    json!({ "method": "roots/list", "params": {} })
}

/// Whether `response` answers an input request of `method` in the shape its result has.
fn answers(method: &str, response: &Value) -> bool {
    match method {
        "elicitation/create" => response["action"].is_string(),
        "sampling/createMessage" => response["content"].is_object(),
        "roots/list" => response["roots"].is_array(),
        _ => false,
    }
}

/// The client's answers to `requests` when every one is there and well formed; else the
/// `input_required` reply that asks for them (again), keeping `state`.
fn gather(
    context: &ExtensionContext,
    requests: &[(&str, Value)],
    state: Option<Value>,
) -> Result<Map<String, Value>, Reply> {
    let responses = context.input_responses();
    let mut answered = Map::new();
    let mut missing = Map::new();
    for (key, request) in requests {
        let method = request["method"].as_str().unwrap_or_default();
        match responses.and_then(|r| r.get(*key)) {
            Some(response) if answers(method, response) => {
                answered.insert((*key).to_owned(), response.clone());
            }
            _ => {
                missing.insert((*key).to_owned(), request.clone());
            }
        }
    }
    if missing.is_empty() {
        Ok(answered)
    } else {
        // Everything is asked again, so the retry carries a consistent set.
        let requests = requests
            .iter()
            .map(|(key, request)| ((*key).to_owned(), request.clone()))
            .collect();
        Err(Reply::InputRequired { requests, state })
    }
}

fn elicited(response: &Value, field: &str) -> String {
    response["content"][field]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| response["content"][field].to_string())
}

fn sampled(response: &Value) -> String {
    response["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn sleep() -> tokio::time::Sleep {
    tokio::time::sleep(Duration::from_millis(50))
}

/// `tool` with `execution.taskSupport` = `support` (`optional` or `required`).
fn task_tool(
    name: &str,
    description: &str,
    properties: Value,
    required: &[&str],
    support: &str,
) -> Value {
    let mut definition = tool(name, description, properties, required);
    definition["execution"] = json!({ "taskSupport": support });
    definition
}

/// The fixtures of the tasks scenarios (`tasks-*`, SEP-2663).
fn task_tools() -> Vec<Value> {
    vec![
        tool(
            "greet",
            "Greets synchronously (never a task)",
            json!({ "name": { "type": "string" } }),
            &[],
        ),
        task_tool(
            "slow_compute",
            "Sleeps `seconds` (as a task when the client supports tasks), then answers",
            json!({ "seconds": { "type": "number" }, "label": { "type": "string" } }),
            &[],
            "optional",
        ),
        task_tool(
            "failing_job",
            "A task that answers a tool error after about a second",
            json!({}),
            &[],
            "required",
        ),
        task_tool(
            "protocol_error_job",
            "A task that fails with a protocol error",
            json!({}),
            &[],
            "optional",
        ),
        task_tool(
            "confirm_delete",
            "A task that asks the user to confirm, then answers",
            json!({ "filename": { "type": "string" } }),
            &[],
            "optional",
        ),
        task_tool(
            "multi_input",
            "A task that asks two questions at once",
            json!({}),
            &[],
            "optional",
        ),
        task_tool(
            "test_tool_with_task",
            "Asks for a name (input_required), then goes on as a task that greets it",
            json!({}),
            &[],
            "required",
        ),
    ]
}

/// Sleeps `duration` in steps, stopping early when the call is cancelled; whether it was.
async fn sleep_unless_cancelled(context: &ExtensionContext, duration: Duration) -> bool {
    let end = tokio::time::Instant::now() + duration;
    while tokio::time::Instant::now() < end {
        if context.is_cancelled() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    context.is_cancelled()
}

fn cancelled() -> ExtensionError {
    ExtensionError::Failed("cancelled".into())
}

impl Fixtures {
    /// The tasks scenarios' fixtures; `None`: not one of them.
    async fn call_task_fixture(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        context: &ExtensionContext,
    ) -> Option<Result<Reply, ExtensionError>> {
        let complete = |value: Value| Some(Ok(Reply::Complete(value)));
        match name {
            "greet" => {
                let who = arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("World");
                complete(text(&format!("Hello, {who}!")))
            }
            "slow_compute" => {
                let seconds = arguments
                    .get("seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    .clamp(0.0, 600.0);
                let label = arguments.get("label").and_then(Value::as_str).unwrap_or("");
                if seconds > 0.0 {
                    context.escalate();
                }
                if sleep_unless_cancelled(context, Duration::from_secs_f64(seconds)).await {
                    return Some(Err(cancelled()));
                }
                complete(text(&format!("Computed after {seconds} s: {label}")))
            }
            "failing_job" => {
                context.escalate();
                if sleep_unless_cancelled(context, Duration::from_secs(1)).await {
                    return Some(Err(cancelled()));
                }
                complete(json!({
                    "isError": true,
                    "content": [{ "type": "text", "text": "The job failed (as this fixture always does)" }],
                }))
            }
            "protocol_error_job" => {
                context.escalate();
                tokio::time::sleep(Duration::from_millis(200)).await;
                Some(Err(ExtensionError::Failed(
                    "the job hit an internal error (as this fixture always does)".into(),
                )))
            }
            "confirm_delete" | "multi_input" => {
                let file = arguments
                    .get("filename")
                    .and_then(Value::as_str)
                    .unwrap_or("the file")
                    .to_owned();
                let confirm = elicitation(
                    &format!("Delete {file}?"),
                    json!({ "confirm": { "type": "boolean" } }),
                    &["confirm"],
                );
                let mut requests = Map::new();
                if name == "confirm_delete" {
                    requests.insert("confirm".into(), confirm);
                } else {
                    let ask = |message: &str| {
                        elicitation(message, json!({ "name": { "type": "string" } }), &["name"])
                    };
                    requests.insert("first".into(), ask("First name?"));
                    requests.insert("second".into(), ask("Second name?"));
                }
                if !context.escalate() {
                    // Without tasks: the 2026 input_required round trip.
                    let requests: Vec<(&str, Value)> = requests
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.clone()))
                        .collect();
                    return Some(match gather(context, &requests, None) {
                        Ok(_) => Ok(Reply::Complete(text(&format!("{name}: done")))),
                        Err(ask) => Ok(ask),
                    });
                }
                let answers = match context.request_input(requests).await {
                    Ok(answers) => answers,
                    Err(error) => return Some(Err(error)),
                };
                let accepted = answers
                    .values()
                    .filter(|answer| answer["action"] == "accept")
                    .count();
                complete(text(&format!(
                    "{name}: {accepted} of {} answers accepted ({file})",
                    answers.len()
                )))
            }
            "test_tool_with_task" => {
                let ask = elicitation(
                    "What is your name?",
                    json!({ "name": { "type": "string" } }),
                    &["name"],
                );
                let answered = match gather(context, &[("user_name", ask)], None) {
                    Ok(answered) => answered,
                    Err(ask) => return Some(Ok(ask)),
                };
                let who = elicited(&answered["user_name"], "name");
                context.escalate();
                if sleep_unless_cancelled(context, Duration::from_millis(500)).await {
                    return Some(Err(cancelled()));
                }
                complete(text(&format!("Hello, {who}! (from a task)")))
            }
            _ => None,
        }
    }

    async fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        context: &ExtensionContext,
    ) -> Result<Reply, ExtensionError> {
        let complete = |value: Value| Ok(Reply::Complete(value));
        match name {
            "test_simple_text" => complete(text("This is a simple text response for testing.")),
            "test_image_content" => complete(json!({
                "content": [{ "type": "image", "data": PNG, "mimeType": "image/png" }]
            })),
            "test_audio_content" => complete(json!({
                "content": [{ "type": "audio", "data": WAV, "mimeType": "audio/wav" }]
            })),
            "test_embedded_resource" => complete(json!({
                "content": [{ "type": "resource", "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                } }]
            })),
            "test_multiple_content_types" => complete(json!({
                "content": [
                    { "type": "text", "text": "Multiple content types test:" },
                    { "type": "image", "data": PNG, "mimeType": "image/png" },
                    { "type": "resource", "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": "{\"test\":\"data\",\"value\":123}",
                    } },
                ]
            })),
            "test_error_handling" => complete(json!({
                "isError": true,
                "content": [{ "type": "text", "text": "This tool intentionally returns an error for testing" }],
            })),
            "test_tool_with_logging" | "test_logging_tool" => {
                context
                    .log(LogLevel::Info, json!("Tool execution started"))
                    .await;
                sleep().await;
                context
                    .log(LogLevel::Info, json!("Tool processing data"))
                    .await;
                sleep().await;
                context
                    .log(LogLevel::Info, json!("Tool execution completed"))
                    .await;
                complete(text("Tool with logging executed successfully"))
            }
            "test_tool_with_progress" => {
                for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if step > 0 {
                        sleep().await;
                    }
                    context.progress(progress, Some(100.0), None).await;
                }
                complete(text("Tool with progress executed successfully"))
            }
            "test_sampling" => {
                let prompt = required(arguments, "prompt")?;
                require(context, "sampling")?;
                let request = sampling(prompt, 100);
                let result = context
                    .ask("sampling/createMessage", request["params"].clone())
                    .await?;
                let answer = result["content"]["text"].as_str().unwrap_or_default();
                complete(text(&format!("LLM response: {answer}")))
            }
            "test_elicitation" => {
                let message = required(arguments, "message")?;
                require(context, "elicitation")?;
                let request = elicitation(
                    message,
                    json!({
                        "username": { "type": "string", "description": "User's response" },
                        "email": { "type": "string", "description": "User's email address" },
                    }),
                    &["username", "email"],
                );
                let result = context
                    .ask("elicitation/create", request["params"].clone())
                    .await?;
                complete(text(&format!(
                    "User response: action={}, content={}",
                    result["action"].as_str().unwrap_or_default(),
                    result["content"]
                )))
            }
            "test_elicitation_sep1034_defaults" => {
                require(context, "elicitation")?;
                let request = elicitation(
                    "Please review and update the form fields with defaults",
                    json!({
                        "name": { "type": "string", "description": "User name", "default": "John Doe" },
                        "age": { "type": "integer", "description": "User age", "default": 30 },
                        "score": { "type": "number", "description": "User score", "default": 95.5 },
                        "status": { "type": "string", "description": "User status",
                                    "enum": ["active", "inactive", "pending"], "default": "active" },
                        "verified": { "type": "boolean", "description": "Verification status", "default": true },
                    }),
                    &[],
                );
                self.elicit_and_report(context, request).await
            }
            "test_elicitation_sep1330_enums" => {
                require(context, "elicitation")?;
                let request = elicitation(
                    "Please select options from the enum fields",
                    json!({
                        "untitledSingle": { "type": "string", "description": "Choose an option",
                                            "enum": ["option1", "option2", "option3"] },
                        "titledSingle": { "type": "string", "description": "Choose a titled option",
                                          "oneOf": [
                                              { "const": "value1", "title": "First Option" },
                                              { "const": "value2", "title": "Second Option" },
                                              { "const": "value3", "title": "Third Option" },
                                          ] },
                        "legacyEnum": { "type": "string", "description": "Choose a legacy option",
                                        "enum": ["opt1", "opt2", "opt3"],
                                        "enumNames": ["Option One", "Option Two", "Option Three"] },
                        "untitledMulti": { "type": "array", "description": "Choose multiple options",
                                           "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                        "titledMulti": { "type": "array", "description": "Choose multiple titled options",
                                         "items": { "anyOf": [
                                             { "const": "value1", "title": "First Choice" },
                                             { "const": "value2", "title": "Second Choice" },
                                             { "const": "value3", "title": "Third Choice" },
                                         ] } },
                    }),
                    &[],
                );
                self.elicit_and_report(context, request).await
            }
            "test_missing_capability" => {
                require(context, "sampling")?;
                match gather(context, &[("answer", sampling("Say hello", 20))], None) {
                    Ok(answered) => {
                        complete(text(&format!("Sampled: {}", sampled(&answered["answer"]))))
                    }
                    Err(ask) => Ok(ask),
                }
            }
            "test_streaming_elicitation" => {
                let name = elicitation(
                    "What is your name?",
                    json!({ "name": { "type": "string" } }),
                    &["name"],
                );
                match gather(context, &[("user_name", name)], None) {
                    Ok(answered) => complete(text(&format!(
                        "Hello, {}!",
                        elicited(&answered["user_name"], "name")
                    ))),
                    Err(ask) => Ok(ask),
                }
            }
            "test_trigger_tool_change" => {
                context.list_changed(ListKind::Tools);
                complete(text("Announced a tools list change"))
            }
            "test_trigger_prompt_change" => {
                context.list_changed(ListKind::Prompts);
                complete(text("Announced a prompts list change"))
            }
            "test_input_required_result_elicitation" => {
                let name = elicitation(
                    "What is your name?",
                    json!({ "name": { "type": "string" } }),
                    &["name"],
                );
                match gather(context, &[("user_name", name)], None) {
                    Ok(answered) => complete(text(&format!(
                        "Hello, {}!",
                        elicited(&answered["user_name"], "name")
                    ))),
                    Err(ask) => Ok(ask),
                }
            }
            "test_input_required_result_sampling" => {
                let question = sampling("What is the capital of France?", 100);
                match gather(context, &[("capital_question", question)], None) {
                    Ok(answered) => complete(text(&format!(
                        "The model answered: {}",
                        sampled(&answered["capital_question"])
                    ))),
                    Err(ask) => Ok(ask),
                }
            }
            "test_input_required_result_list_roots" => {
                match gather(context, &[("client_roots", list_roots())], None) {
                    Ok(answered) => {
                        let roots: Vec<&str> = answered["client_roots"]["roots"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|root| root["uri"].as_str())
                            .collect();
                        complete(text(&format!("Client roots: {}", roots.join(", "))))
                    }
                    Err(ask) => Ok(ask),
                }
            }
            "test_input_required_result_request_state"
            | "test_input_required_result_tampered_state" => {
                let confirm = elicitation(
                    "Please confirm",
                    json!({ "ok": { "type": "boolean" } }),
                    &["ok"],
                );
                let state = json!({ "tool": name, "step": "confirm" });
                let kept = context.state() == Some(&state);
                match gather(
                    context,
                    &[("confirm", confirm.clone())],
                    Some(state.clone()),
                ) {
                    Ok(_) if kept => complete(text("Confirmed: state-ok")),
                    Ok(_) => Ok(Reply::InputRequired {
                        requests: [("confirm".to_owned(), confirm)].into_iter().collect(),
                        state: Some(state),
                    }),
                    Err(ask) => Ok(ask),
                }
            }
            "test_input_required_result_multiple_inputs" => {
                let requests = [
                    (
                        "user_name",
                        elicitation(
                            "What is your name?",
                            json!({ "name": { "type": "string" } }),
                            &["name"],
                        ),
                    ),
                    ("greeting", sampling("Generate a greeting", 50)),
                    ("client_roots", list_roots()),
                ];
                let state = json!({ "tool": name });
                match gather(context, &requests, Some(state.clone())) {
                    Ok(answered) if context.state() == Some(&state) => complete(text(&format!(
                        "Name: {}; greeting: {}; roots: {}",
                        elicited(&answered["user_name"], "name"),
                        sampled(&answered["greeting"]),
                        answered["client_roots"]["roots"]
                            .as_array()
                            .map_or(0, Vec::len)
                    ))),
                    Ok(_) => Ok(Reply::InputRequired {
                        requests: requests
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                        state: Some(state),
                    }),
                    Err(ask) => Ok(ask),
                }
            }
            "test_input_required_result_multi_round" => {
                let step1 = elicitation(
                    "Step 1: What is your name?",
                    json!({ "name": { "type": "string" } }),
                    &["name"],
                );
                let step2 = elicitation(
                    "Step 2: What is your favorite color?",
                    json!({ "color": { "type": "string" } }),
                    &["color"],
                );
                let round = context
                    .state()
                    .and_then(|s| s["round"].as_u64())
                    .unwrap_or(0);
                match round {
                    1 => match gather(context, &[("step1", step1)], context.state().cloned()) {
                        Ok(answered) => Ok(Reply::InputRequired {
                            requests: [("step2".to_owned(), step2)].into_iter().collect(),
                            state: Some(
                                json!({ "round": 2, "name": elicited(&answered["step1"], "name") }),
                            ),
                        }),
                        Err(ask) => Ok(ask),
                    },
                    2 => match gather(context, &[("step2", step2)], context.state().cloned()) {
                        Ok(answered) => {
                            let kept = context
                                .state()
                                .map(|s| s["name"].clone())
                                .unwrap_or_default();
                            complete(text(&format!(
                                "Hello {}, your favorite color is {}",
                                kept.as_str().unwrap_or_default(),
                                elicited(&answered["step2"], "color")
                            )))
                        }
                        Err(ask) => Ok(ask),
                    },
                    _ => Ok(Reply::InputRequired {
                        requests: [("step1".to_owned(), step1)].into_iter().collect(),
                        state: Some(json!({ "round": 1 })),
                    }),
                }
            }
            "test_input_required_result_capabilities" => {
                let mut requests = Vec::new();
                if context.has_client_capability("sampling") {
                    requests.push(("question", sampling("What is 2 + 2?", 10)));
                }
                if context.has_client_capability("elicitation") {
                    requests.push((
                        "user_name",
                        elicitation(
                            "What is your name?",
                            json!({ "name": { "type": "string" } }),
                            &["name"],
                        ),
                    ));
                }
                if requests.is_empty() {
                    return complete(text("The client declared neither sampling nor elicitation"));
                }
                match gather(context, &requests, None) {
                    Ok(answered) => {
                        complete(text(&format!("Answered {} request(s)", answered.len())))
                    }
                    Err(ask) => Ok(ask),
                }
            }
            _ => Err(ExtensionError::Failed(format!("no fixture tool {name}"))),
        }
    }

    async fn elicit_and_report(
        &self,
        context: &ExtensionContext,
        request: Value,
    ) -> Result<Reply, ExtensionError> {
        let result = context
            .ask("elicitation/create", request["params"].clone())
            .await?;
        Ok(Reply::Complete(text(&format!(
            "Elicitation completed: action={}, content={}",
            result["action"].as_str().unwrap_or_default(),
            result["content"]
        ))))
    }

    fn prompt(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        context: &ExtensionContext,
    ) -> Result<Reply, ExtensionError> {
        let user = |content: Value| json!({ "role": "user", "content": content });
        let complete = |messages: Vec<Value>| Ok(Reply::Complete(json!({ "messages": messages })));
        match name {
            "test_simple_prompt" => complete(vec![user(
                json!({ "type": "text", "text": "This is a simple prompt for testing." }),
            )]),
            "test_prompt_with_arguments" => {
                let arg1 = required(arguments, "arg1")?;
                let arg2 = required(arguments, "arg2")?;
                complete(vec![user(json!({
                    "type": "text",
                    "text": format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
                }))])
            }
            "test_prompt_with_embedded_resource" => {
                let uri = required(arguments, "resourceUri")?;
                complete(vec![
                    user(json!({ "type": "resource", "resource": {
                        "uri": uri,
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    } })),
                    user(
                        json!({ "type": "text", "text": "Please process the embedded resource above." }),
                    ),
                ])
            }
            "test_prompt_with_image" => complete(vec![
                user(json!({ "type": "image", "data": PNG, "mimeType": "image/png" })),
                user(json!({ "type": "text", "text": "Please analyze the image above." })),
            ]),
            "test_input_required_result_prompt" => {
                let request = elicitation(
                    "What context should the prompt use?",
                    json!({ "context": { "type": "string" } }),
                    &["context"],
                );
                match gather(context, &[("user_context", request)], None) {
                    Ok(answered) => complete(vec![user(json!({
                        "type": "text",
                        "text": format!("Use this context: {}", elicited(&answered["user_context"], "context")),
                    }))]),
                    Err(ask) => Ok(ask),
                }
            }
            _ => Err(ExtensionError::Failed(format!("no fixture prompt {name}"))),
        }
    }
}

/// The string argument `name`.
fn required<'a>(arguments: &'a Map<String, Value>, name: &str) -> Result<&'a str, ExtensionError> {
    arguments[name].as_str().ok_or_else(|| {
        ExtensionError::InvalidParams(format!("the argument {name} (a string) is required"))
    })
}

/// Refuses a request whose client did not declare `capability`.
fn require(context: &ExtensionContext, capability: &str) -> Result<(), ExtensionError> {
    if context.has_client_capability(capability) {
        Ok(())
    } else {
        Err(ExtensionError::MissingClientCapability(
            capability.to_owned(),
        ))
    }
}

const TOOLS_2025: [(&str, &str); 8] = [
    ("test_simple_text", "Returns a simple text response"),
    ("test_image_content", "Returns an image"),
    ("test_audio_content", "Returns audio"),
    ("test_embedded_resource", "Returns an embedded resource"),
    (
        "test_multiple_content_types",
        "Returns text, an image and a resource",
    ),
    (
        "test_tool_with_logging",
        "Sends three log messages while it runs",
    ),
    ("test_error_handling", "Always answers an error result"),
    ("test_tool_with_progress", "Reports progress while it runs"),
];

const TOOLS_NO_ARGUMENTS: [(&str, &str); 15] = [
    (
        "test_elicitation_sep1034_defaults",
        "Elicits a form whose fields have defaults",
    ),
    (
        "test_elicitation_sep1330_enums",
        "Elicits a form with every enum variant",
    ),
    (
        "test_missing_capability",
        "Needs the sampling client capability",
    ),
    ("test_logging_tool", "Logs at info level while it runs"),
    ("test_streaming_elicitation", "Asks for the user's name"),
    ("test_trigger_tool_change", "Announces a tools list change"),
    (
        "test_trigger_prompt_change",
        "Announces a prompts list change",
    ),
    (
        "test_input_required_result_elicitation",
        "Asks for the user's name (input_required)",
    ),
    (
        "test_input_required_result_sampling",
        "Asks the model a question (input_required)",
    ),
    (
        "test_input_required_result_list_roots",
        "Asks for the client's roots (input_required)",
    ),
    (
        "test_input_required_result_request_state",
        "Asks for a confirmation, keeping state",
    ),
    (
        "test_input_required_result_tampered_state",
        "Asks for a confirmation, keeping sealed state",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks three things at once",
    ),
    (
        "test_input_required_result_multi_round",
        "Asks in two rounds",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only what the client can answer",
    ),
];

impl Extension for Fixtures {
    fn tools(&self) -> Vec<Value> {
        let mut tools: Vec<Value> = TOOLS_2025
            .iter()
            .chain(TOOLS_NO_ARGUMENTS.iter())
            .map(|(name, description)| no_arguments(name, description))
            .collect();
        tools.push(tool(
            "test_sampling",
            "Asks the client's model",
            json!({ "prompt": { "type": "string", "description": "The prompt to send to the LLM" } }),
            &["prompt"],
        ));
        tools.push(tool(
            "test_elicitation",
            "Asks the user",
            json!({ "message": { "type": "string", "description": "The message to show the user" } }),
            &["message"],
        ));
        tools.extend(task_tools());
        tools
    }

    fn prompts(&self) -> Vec<Value> {
        vec![
            json!({ "name": "test_simple_prompt", "description": "A simple prompt" }),
            json!({ "name": "test_prompt_with_arguments", "description": "A prompt with arguments",
                    "arguments": [
                        { "name": "arg1", "description": "First test argument", "required": true },
                        { "name": "arg2", "description": "Second test argument", "required": true },
                    ] }),
            json!({ "name": "test_prompt_with_embedded_resource", "description": "A prompt embedding a resource",
                    "arguments": [{ "name": "resourceUri", "description": "URI of the resource to embed", "required": true }] }),
            json!({ "name": "test_prompt_with_image", "description": "A prompt with an image" }),
            json!({ "name": "test_input_required_result_prompt", "description": "A prompt that asks for context" }),
        ]
    }

    fn resources(&self) -> Vec<Value> {
        vec![
            json!({ "uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain" }),
            json!({ "uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png" }),
            json!({ "uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain" }),
        ]
    }

    fn resource_templates(&self) -> Vec<Value> {
        vec![json!({
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "description": "A resource template with one variable",
            "mimeType": "application/json",
        })]
    }

    fn subscribe(&self) -> bool {
        true
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        Box::pin(async move {
            let ours = self.tools().iter().any(|tool| tool["name"] == name);
            if !ours {
                return None;
            }
            if let Some(reply) = self.call_task_fixture(name, arguments, context).await {
                return Some(reply);
            }
            Some(self.call(name, arguments, context).await)
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        Box::pin(async move {
            let ours = self.prompts().iter().any(|prompt| prompt["name"] == name);
            ours.then(|| self.prompt(name, arguments, context))
        })
    }

    fn read_resource<'a>(&'a self, uri: &'a str, context: &'a ExtensionContext) -> Handled<'a> {
        let _ = context;
        Box::pin(async move {
            let content = match uri {
                "test://static-text" => json!({ "uri": uri, "mimeType": "text/plain",
                    "text": "This is the content of the static text resource." }),
                "test://static-binary" => {
                    json!({ "uri": uri, "mimeType": "image/png", "blob": PNG })
                }
                "test://watched-resource" => json!({ "uri": uri, "mimeType": "text/plain",
                    "text": "A resource clients subscribe to." }),
                _ => {
                    let id = uri
                        .strip_prefix("test://template/")?
                        .strip_suffix("/data")?;
                    if id.is_empty() || id.contains('/') {
                        return None;
                    }
                    let body = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                    json!({ "uri": uri, "mimeType": "application/json", "text": body.to_string() })
                }
            };
            Some(Ok(Reply::Complete(json!({ "contents": [content] }))))
        })
    }

    fn complete(
        &self,
        reference: &Map<String, Value>,
        argument: &str,
        value: &str,
    ) -> Option<Vec<String>> {
        let prompt = reference.get("name").and_then(Value::as_str)?;
        if prompt != "test_prompt_with_arguments" {
            return None;
        }
        let candidates: &[&str] = match argument {
            "arg1" => &["hello", "help", "hold"],
            "arg2" => &["world", "word", "work"],
            _ => &[],
        };
        Some(
            candidates
                .iter()
                .filter(|c| c.starts_with(value))
                .map(|c| (*c).to_owned())
                .collect(),
        )
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => addr.parse()?,
        _ => return Err("usage: conformance_server --http ADDR:PORT".into()),
    };
    let server = Server::new(ServerConfig::default()).with_extension(Arc::new(Fixtures));
    let config = HttpConfig::default();
    let listener = rea::mcp::http::bind(addr, &config).await?;
    eprintln!(
        "rea: serving MCP over Streamable HTTP at http://{}/mcp",
        listener.local_addr()?
    );
    server.serve_http(listener, config).await?;
    Ok(())
}
