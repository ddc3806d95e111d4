//! Shared test harness: an in-process client over the real stdio loop that validates every
//! message the server emits against the official MCP JSON Schema of its era: an answer against
//! the version its request was sent under (the negotiated 2025 version, or 2026-07-28 for a
//! request carrying the `_meta` envelope), a listen-stream notification (tagged with a
//! subscription id) against 2026-07-28, a `notifications/message` against the era of the latest
//! request, any other notification against the negotiated version. A server-to-client request
//! to a client that has only spoken 2026-07-28 fails the test (2026 has none).

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use rea::mcp::Server;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// MCP schema versions the tests validate against, with their definitions key.
const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    MODERN,
];

/// The 2026 revision.
pub const MODERN: &str = "2026-07-28";

/// `_meta` key naming a listen stream.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The `_meta` envelope of a 2026 request from this client, with `extra` keys added.
pub fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "rea-tests", "version": "0" },
    });
    if let Value::Object(extra) = extra {
        meta.as_object_mut().unwrap().extend(extra);
    }
    meta
}

/// `params` with the 2026 `_meta` envelope added.
pub fn with_modern_meta(mut params: Value, extra: Value) -> Value {
    params
        .as_object_mut()
        .expect("params are an object")
        .insert("_meta".into(), modern_meta(extra));
    params
}

/// The version a request with `params` is answered under: 2026-07-28 when its `_meta` carries
/// the protocol-version claim, else `negotiated`.
fn request_version(params: Option<&Value>, negotiated: &str) -> String {
    let claims = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .is_some();
    if claims { MODERN } else { negotiated }.to_owned()
}

fn schema_document(version: &str) -> &'static Value {
    static DOCS: OnceLock<HashMap<&'static str, Value>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| {
        VERSIONS
            .iter()
            .map(|v| {
                let path = crate::root().join(format!("tests/mcp-schema/{v}/schema.json"));
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
        "logging/setLevel" => "EmptyResult",
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        _ => return None,
    })
}

/// The envelope definition of an error answer under `version`.
fn error_envelope(version: &str) -> &'static str {
    if version >= "2025-11-25" {
        "JSONRPCErrorResponse"
    } else {
        "JSONRPCError"
    }
}

/// What the client knows when it checks a message: the version a request was sent under and
/// its method, by id; the negotiated version; the version of the latest request.
pub struct Sent<'a> {
    /// Method and version of each request sent, by the JSON text of its id.
    pub methods: &'a HashMap<String, (String, String)>,
    /// The negotiated 2025 version (latest until `initialize`).
    pub negotiated: &'a str,
    /// The version of the latest request sent.
    pub latest: &'a str,
    /// Whether the client sent `initialize` (a 2025 client).
    pub initialized: bool,
}

/// Checks one emitted message (not a batch) against the schema of its era.
pub fn check_message(sent: &Sent<'_>, message: &Value) {
    if message.get("method").is_some() {
        if message.get("id").is_some() {
            // A request of the server's own (`roots/list`): 2025 only, and only to a client
            // that initialized.
            assert!(
                sent.initialized,
                "a server-to-client request to a client that never sent initialize: {message}"
            );
            assert_schema_valid(sent.negotiated, "JSONRPCRequest", message);
            assert_schema_valid(sent.negotiated, "ServerRequest", message);
        } else {
            let tagged = message["params"]["_meta"].get(SUBSCRIPTION_ID).is_some();
            let version =
                if tagged || message["method"] == "notifications/subscriptions/acknowledged" {
                    MODERN
                } else if message["method"] == "notifications/message" {
                    sent.latest
                } else {
                    sent.negotiated
                };
            assert_schema_valid(version, "JSONRPCNotification", message);
            assert_schema_valid(version, "ServerNotification", message);
        }
        return;
    }
    let sent_as = sent.methods.get(&message["id"].to_string());
    let version = sent_as.map_or(sent.negotiated, |(_, version)| version.as_str());
    if let Some(error) = message.get("error") {
        let envelope = error_envelope(version);
        if message["id"].is_null() {
            // JSON-RPC 2.0 answers errors whose id could not be read with `"id": null`; the MCP
            // schemas cannot express a null id, so only the error object is checked.
            let mut without_id = message.clone();
            without_id
                .as_object_mut()
                .unwrap()
                .insert("id".into(), json!("null-id"));
            assert_schema_valid(version, envelope, &without_id);
            assert!(error["code"].is_i64());
        } else {
            assert_schema_valid(version, envelope, message);
        }
        if error["code"] == -32022 {
            assert_schema_valid(version, "UnsupportedProtocolVersionError", message);
        }
        return;
    }
    assert_schema_valid(version, "JSONRPCResponse", message);
    if version == MODERN {
        // `input_required` only with its input requests (an extension's handler asked).
        let result_type = if message["result"]["inputRequests"].is_object() {
            "input_required"
        } else {
            "complete"
        };
        assert_eq!(message["result"]["resultType"], result_type, "{message}");
        assert_eq!(
            message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "rea",
            "{message}"
        );
    } else {
        assert!(message["result"].get("resultType").is_none(), "{message}");
    }
    if message["result"]["resultType"] == "input_required" {
        assert_schema_valid(version, "InputRequiredResult", &message["result"]);
    } else if let Some(definition) = sent_as.and_then(|(method, _)| result_definition(method)) {
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
    methods: HashMap<String, (String, String)>,
    latest: String,
    initialized: bool,
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
            latest: VERSIONS[3].to_owned(),
            initialized: false,
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
            let version = request_version(message.get("params"), &self.version);
            let method = method.as_str().unwrap_or("");
            if method == "initialize" && version != MODERN {
                self.initialized = true;
            }
            self.latest = version.clone();
            self.methods
                .insert(id.to_string(), (method.to_owned(), version));
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
        self.check(&message);
        message
    }

    /// Checks an emitted line (a message or a batch) against the schemas of its era.
    fn check(&self, message: &Value) {
        let sent = Sent {
            methods: &self.methods,
            negotiated: &self.version,
            latest: &self.latest,
            initialized: self.initialized,
        };
        match message {
            Value::Array(items) => {
                assert!(!items.is_empty(), "empty batch response");
                for item in items {
                    check_message(&sent, item);
                }
            }
            single => check_message(&sent, single),
        }
    }

    /// Whether a line arrives within `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.output.next_line()).await {
            Ok(Ok(Some(line))) => {
                let message: Value = serde_json::from_str(&line).unwrap();
                self.check(&message);
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

    /// Sends a request with a fresh integer id and returns its response and the
    /// `notifications/message` lines that came before it.
    pub async fn request_told(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let mut told = Vec::new();
        loop {
            let message = self.recv().await;
            if message["method"] == "notifications/message" {
                told.push(message);
                continue;
            }
            assert_eq!(
                message["id"],
                json!(id),
                "response to the request just sent"
            );
            return (message, told);
        }
    }

    /// Sends a 2026 request (the `_meta` envelope added to `params`, with `extra` keys) with a
    /// fresh integer id and returns its response.
    pub async fn request_modern(&mut self, method: &str, params: Value, extra: Value) -> Value {
        self.request(method, with_modern_meta(params, extra)).await
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
            let message = serde_json::from_str(&line).unwrap();
            self.check(&message);
            rest.push(message);
        }
        tokio::time::timeout(Duration::from_secs(20), self.served)
            .await
            .expect("server exits at end of input")
            .unwrap()
            .expect("server exits cleanly");
        rest
    }
}
