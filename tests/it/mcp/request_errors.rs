//! Every JSON-RPC error the server sends, as `RequestError` builds it: one snapshot of each
//! variant's code and message, and the property that caller text is always cut.

use proptest::prelude::*;
use rea::mcp::{ErrorCode, RequestError};
use rea::prompts::{InvalidCursor, PromptError};
use rea::tools::UnknownTool;
use serde_json::{Value, json};

/// Caller text longer than any message quotes.
fn long() -> String {
    "x".repeat(100)
}

fn every_variant() -> Vec<RequestError> {
    vec![
        RequestError::NotUtf8 { offset: 7 },
        RequestError::LoneSurrogateEscape {
            line: 1,
            column: 12,
        },
        RequestError::NotJson {
            reason: "expected value at line 1 column 1".to_owned(),
        },
        RequestError::EmptyBatch,
        RequestError::LoneSurrogateInRequest,
        RequestError::LoneSurrogateInNotification,
        RequestError::NotAnObject { kind: "a number" },
        RequestError::MissingJsonrpc,
        RequestError::WrongJsonrpc {
            found: Value::String(long()),
        },
        RequestError::MissingMethod,
        RequestError::MethodNotString { kind: "an array" },
        RequestError::InvalidId { id: json!(1.5) },
        RequestError::LineTooLong {
            bytes: 5_000_000,
            limit: 4_194_304,
        },
        RequestError::AlreadyInitialized,
        RequestError::DuplicateId {
            id: Value::String(long()),
        },
        RequestError::BatchNotAccepted,
        RequestError::BatchTooLong { limit: 32 },
        RequestError::InitializeInBatch,
        RequestError::NotInitialized {
            method: long().into(),
        },
        RequestError::Busy {
            in_flight: 16,
            waiting: 64,
        },
        RequestError::MethodNotFound {
            method: long().into(),
        },
        RequestError::ParamsNotObject {
            method: "prompts/get",
        },
        RequestError::MissingField {
            path: "params.ref",
            field: "name",
        },
        RequestError::NotAString {
            path: "params",
            field: "name",
        },
        RequestError::NotAnObjectField {
            path: "params",
            field: "arguments",
        },
        RequestError::NotStringMap {
            path: "params",
            field: "arguments",
        },
        RequestError::ArgumentNotString {
            path: "params.context",
            field: "arguments",
            key: long().into(),
        },
        RequestError::ToolsCursor {
            cursor: long().into(),
        },
        RequestError::from(InvalidCursor { cursor: "7".into() }),
        RequestError::from(UnknownTool {
            name: "open_everything".into(),
        }),
        RequestError::from(PromptError::UnknownPrompt {
            prompt: "investigate_everything".into(),
        }),
        RequestError::ResourceReference(rea::resources::ResourceError::UnknownTemplate {
            uri: long().into(),
        }),
        RequestError::ResourceNotFound {
            uri: long().into(),
            error: rea::resources::ResourceError::UnknownSession {
                handle: long().into(),
            },
        },
        RequestError::ResourceUnresolved {
            uri: "rea://nothing/here".into(),
            error: rea::resources::ResourceError::UnknownUri {
                uri: "rea://nothing/here".into(),
            },
        },
        RequestError::UnknownReference {
            found: long().into(),
        },
        RequestError::CompletionValueTooLong {
            prompt: "trace_crash".into(),
            argument: long().into(),
            chars: 4_097,
        },
        RequestError::MissingEnvelopeKey {
            key: "io.modelcontextprotocol/protocolVersion",
        },
        RequestError::EnvelopeKeyType {
            key: "io.modelcontextprotocol/clientCapabilities",
            expected: "an object",
        },
        RequestError::UnsupportedProtocolVersion {
            requested: long().into(),
        },
        RequestError::LegacyVersionInEnvelope {
            requested: "2025-11-25".into(),
        },
        RequestError::InvalidLogLevel {
            field: "params.level",
            found: Value::String(long()),
        },
        RequestError::RemovedIn2026 {
            method: long().into(),
        },
        RequestError::TooManyListens { limit: 64 },
        RequestError::TooManyMcpSessions { limit: 256 },
        RequestError::HttpBusy { in_flight: 128 },
        RequestError::ShuttingDown { grace_secs: 10.0 },
        RequestError::NoWorker,
        RequestError::Subscription,
        RequestError::Unencodable,
        RequestError::ResponseTooLarge {
            bytes: 5_000_000,
            limit: 4_194_304,
        },
    ]
}

#[test]
fn every_request_error_on_the_wire() {
    let lines: Vec<String> = every_variant()
        .iter()
        .map(|error| error.to_object().to_string())
        .collect();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("mcp_request_errors__every_variant", lines.join("\n"));
    });
}

#[test]
fn the_jsonrpsee_object_carries_the_same_code_and_message() {
    for error in every_variant() {
        let object = jsonrpsee::types::ErrorObjectOwned::from(error.clone());
        assert_eq!(object.code(), error.code().code());
        assert_eq!(object.message(), error.to_string());
        assert_eq!(
            object
                .data()
                .map(|data| serde_json::from_str::<Value>(data.get()).unwrap()),
            error.data()
        );
    }
}

proptest! {
    /// Whatever the client sent, a message quotes at most 64 characters of it (plus `...`),
    /// so no error echoes long input.
    #[test]
    fn caller_text_is_always_cut(text in "\\PC{0,300}") {
        let quoting = [
            RequestError::MethodNotFound { method: text.clone().into() },
            RequestError::ToolsCursor { cursor: text.clone().into() },
            RequestError::UnknownReference { found: text.clone().into() },
            RequestError::ArgumentNotString { path: "params", field: "arguments", key: text.clone().into() },
            RequestError::CompletionValueTooLong {
                prompt: text.clone().into(),
                argument: text.clone().into(),
                chars: 5_000,
            },
            RequestError::DuplicateId { id: Value::String(text.clone()) },
            RequestError::WrongJsonrpc { found: Value::String(text.clone()) },
            RequestError::UnsupportedProtocolVersion { requested: text.clone().into() },
            RequestError::LegacyVersionInEnvelope { requested: text.clone().into() },
            RequestError::InvalidLogLevel { field: "params.level", found: Value::String(text.clone()) },
            RequestError::RemovedIn2026 { method: text.clone().into() },
        ];
        for error in quoting {
            let template = match &error {
                RequestError::CompletionValueTooLong { .. } => 2,
                _ => 1,
            };
            let message = error.to_string();
            // A quoted character is at most 6 characters of JSON escape (`\u0001`).
            prop_assert!(
                message.chars().count() <= 140 + template * (6 * 64 + 5),
                "{message}"
            );
            prop_assert!(matches!(
                error.code(),
                ErrorCode::InvalidRequest
                    | ErrorCode::MethodNotFound
                    | ErrorCode::InvalidParams
                    | ErrorCode::UnsupportedProtocolVersion
            ));
            if let Some(data) = error.data() {
                prop_assert!(data["requested"].as_str().unwrap().chars().count() <= 67);
            }
        }
    }
}
