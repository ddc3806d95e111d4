//! Shared test harness: an in-process client over the real stdio loop that validates every
//! message the server emits against the official MCP JSON Schema of the negotiated version.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use rea::mcp::Server;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// MCP schema versions the tests validate against, with their definitions key.
const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn schema_document(version: &str) -> &'static Value {
    static DOCS: OnceLock<HashMap<&'static str, Value>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        VERSIONS
            .iter()
            .map(|v| {
                let path = format!(
                    "{}/tests/mcp-schema/{v}/schema.json",
                    env!("CARGO_MANIFEST_DIR")
                );
                let text = std::fs::read_to_string(&path).expect("schema file present");
                (*v, serde_json::from_str(&text).expect("schema is JSON"))
            })
            .collect()
    });
    &docs[version]
}

fn definitions_key(version: &str) -> &'static str {
    if schema_document(version).get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    }
}

/// Validates `instance` against definition `name` of the official schema of `version`.
pub fn assert_schema_valid(version: &str, name: &str, instance: &Value) {
    let validator = super::schema::validator(&format!("mcp/{version}#{name}"), || {
        let mut schema = schema_document(version).clone();
        let defs = definitions_key(version);
        schema
            .as_object_mut()
            .unwrap()
            .insert("$ref".into(), json!(format!("#/{defs}/{name}")));
        jsonschema::validator_for(&schema).expect("schema compiles")
    });
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} is not a valid {name} of MCP {version}: {errors:?}"
    );
}

/// The schema definition of the result of `method`.
fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        _ => return None,
    })
}

/// Checks one emitted message (not a batch) against the schema of `version`.
pub fn check_message(version: &str, methods: &HashMap<String, String>, message: &Value) {
    if message.get("method").is_some() {
        if message.get("id").is_some() {
            // A request of the server's own (`roots/list`).
            assert_schema_valid(version, "JSONRPCRequest", message);
            assert_schema_valid(version, "ServerRequest", message);
        } else {
            assert_schema_valid(version, "JSONRPCNotification", message);
            assert_schema_valid(version, "ServerNotification", message);
        }
        return;
    }
    if let Some(error) = message.get("error") {
        if message["id"].is_null() {
            // JSON-RPC 2.0 answers errors whose id could not be read with `"id": null`; the MCP
            // schemas cannot express a null id, so only the error object is checked.
            let envelope = if VERSIONS[3] == version {
                "JSONRPCErrorResponse"
            } else {
                "JSONRPCError"
            };
            let mut without_id = message.clone();
            without_id
                .as_object_mut()
                .unwrap()
                .insert("id".into(), json!("null-id"));
            assert_schema_valid(version, envelope, &without_id);
            assert!(error["code"].is_i64());
        } else {
            let envelope = if VERSIONS[3] == version {
                "JSONRPCErrorResponse"
            } else {
                "JSONRPCError"
            };
            assert_schema_valid(version, envelope, message);
        }
        return;
    }
    assert_schema_valid(version, "JSONRPCResponse", message);
    let method = methods.get(&message["id"].to_string());
    if let Some(definition) = method.and_then(|m| result_definition(m)) {
        assert_schema_valid(version, definition, &message["result"]);
    }
}

/// An in-process MCP client driving the real stdio loop over in-memory pipes.
pub struct Client {
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The negotiated version (schema used for validation); latest until `initialize`.
    pub version: String,
    methods: HashMap<String, String>,
    next_id: i64,
}

impl Client {
    /// Starts `server` on in-memory pipes.
    pub fn start(server: Server) -> Client {
        let (client_in, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, client_out) = tokio::io::duplex(1 << 20);
        let served =
            tokio::spawn(async move { server.serve(BufReader::new(server_in), server_out).await });
        Client {
            input: Some(client_in),
            output: BufReader::new(client_out).lines(),
            served,
            version: VERSIONS[3].to_owned(),
            methods: HashMap::new(),
            next_id: 1,
        }
    }

    /// Sends raw bytes (a newline is not added).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.input
            .as_mut()
            .expect("input open")
            .write_all(bytes)
            .await
            .unwrap();
    }

    /// Sends `message` as one line, remembering the method of requests for validation.
    pub async fn send(&mut self, message: &Value) {
        if let (Some(id), Some(method)) = (message.get("id"), message.get("method")) {
            self.methods
                .insert(id.to_string(), method.as_str().unwrap_or("").to_owned());
        }
        let mut line = message.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes()).await;
    }

    /// The next emitted line as JSON, validated against the negotiated version's schema.
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.output.next_line())
            .await
            .expect("server answered in time")
            .unwrap()
            .expect("server output open");
        let message: Value = serde_json::from_str(&line).expect("server emits JSON lines");
        match &message {
            Value::Array(items) => {
                assert!(!items.is_empty(), "empty batch response");
                for item in items {
                    check_message(&self.version, &self.methods, item);
                }
            }
            single => check_message(&self.version, &self.methods, single),
        }
        message
    }

    /// Whether a line arrives within `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.output.next_line()).await {
            Ok(Ok(Some(line))) => {
                let message: Value = serde_json::from_str(&line).unwrap();
                check_message(&self.version, &self.methods, &message);
                Some(message)
            }
            _ => None,
        }
    }

    /// Sends a request with a fresh integer id and returns its response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let response = self.recv().await;
        assert_eq!(
            response["id"],
            json!(id),
            "response to the request just sent"
        );
        response
    }

    /// `initialize` with `version` then `notifications/initialized`.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let response = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": { "name": "rea-tests", "version": "0" }
                }),
            )
            .await;
        self.version = response["result"]["protocolVersion"]
            .as_str()
            .unwrap()
            .to_owned();
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        response
    }

    /// `initialize` (2025-11-25) declaring the `roots` capability, then
    /// `notifications/initialized`; the server's `roots/list` request is the next message.
    pub async fn initialize_with_roots(&mut self) {
        let answer = self
            .request(
                "initialize",
                json!({ "protocolVersion": "2025-11-25", "capabilities": { "roots": { "listChanged": true } },
                        "clientInfo": { "name": "rea-tests", "version": "0" } }),
            )
            .await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        self.version = "2025-11-25".to_owned();
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
    }

    /// Closes the input and waits for the server to exit; returns what it emitted after.
    pub async fn finish(mut self) -> Vec<Value> {
        self.input.take();
        let mut rest = Vec::new();
        while let Ok(Some(line)) = self.output.next_line().await {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        tokio::time::timeout(Duration::from_secs(20), self.served)
            .await
            .expect("server exits at end of input")
            .unwrap()
            .expect("server exits cleanly");
        rest
    }
}
