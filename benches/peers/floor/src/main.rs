//! The floor: the least an MCP completion server over stdio can do. It parses each request
//! line as JSON and answers `initialize` with a minimal result and any other request with one
//! canned completion of 100 values; notifications get no answer. `benches/e2e_stdio.rs` builds
//! and runs it beside `rea serve`, so one run measures both with the same driver.

use std::io::{BufRead, BufWriter, Write};

use serde_json::{Value, json};

fn main() {
    let values: Vec<String> = (0..100).map(|n| format!("document_name_{n:04}")).collect();
    let completion =
        json!({ "completion": { "values": values, "total": 10_000, "hasMore": true } }).to_string();
    let initialize = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": { "completions": {}, "prompts": {} },
        "serverInfo": { "name": "floor", "version": "0" }
    })
    .to_string();
    let stdin = std::io::stdin().lock();
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id") else {
            continue;
        };
        let result = if request.get("method").and_then(Value::as_str) == Some("initialize") {
            &initialize
        } else {
            &completion
        };
        let written = writeln!(
            stdout,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}"
        )
        .and_then(|()| stdout.flush());
        if written.is_err() {
            break;
        }
    }
}
