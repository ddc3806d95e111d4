//! The protocol rules both transports follow, each written once and free of I/O: where a 2026
//! request goes, what a notification asks of its connection, when a batch is accepted and
//! which of its members run, and what an answer carries. The connection core
//! ([`super::connection::ConnectionCore`]) applies them for both transports; stdio
//! ([`super::server`]) and HTTP ([`super::http`]) only act on what it decides, each writing in
//! its own way (a line on the output; a status, a body or an SSE stream).

use serde_json::{Value, json};

use super::era::{self, Caching, Envelope, ModernMethod};
use super::error::RequestError;
use super::handlers::INSTRUCTIONS;
use super::message::{Message, Notification, Request, RequestKey};
use super::method::Method;
use super::protocol::{Offer, ProtocolVersion};

/// One answer as a transport writes it: its JSON line and, when it is an error, its code, so
/// that HTTP picks its status without parsing the line again.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The whole JSON-RPC response, one line.
    pub(crate) line: String,
    /// The JSON-RPC error code, when the answer is an error.
    pub(crate) error_code: Option<i32>,
}

impl Answer {
    /// `error`, answered to request `id`.
    pub(crate) fn refusal(error: &RequestError, id: &Value) -> Answer {
        Answer {
            line: error.to_response(id).to_string(),
            error_code: Some(error.code().code()),
        }
    }

    /// `result`, answered to request `id`.
    fn result(result: &Value, id: &Value) -> Answer {
        Answer {
            line: json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string(),
            error_code: None,
        }
    }
}

/// Where a 2026 request goes once its envelope is checked.
#[derive(Debug)]
pub(crate) enum ModernRoute {
    /// A method both eras share: run through the method table, with the log level its
    /// envelope opted in to and its result decorated with `caching`.
    Shared {
        /// What the envelope said.
        envelope: Envelope,
        /// The `ttlMs` and `cacheScope` of a cacheable result.
        caching: Option<Caching>,
    },
    /// `server/discover`, answered without the method table.
    Discover(Answer),
    /// `subscriptions/listen`: a stream the transport keeps open.
    Listen,
}

/// Routes a 2026 request for a server that offers `offer`: its envelope is checked first
/// (`-32602`), then its method (`-32601` for one the 2026 revision removed or never had).
/// No `initialize` is needed first: that rule belongs to the 2025 revisions.
pub(crate) fn route_modern(request: &Request, offer: Offer) -> Result<ModernRoute, RequestError> {
    let envelope = Envelope::check(request.params.as_ref())?;
    let method = request.known.map_or(ModernMethod::Unknown, |method| {
        method.modern(request.params.as_ref(), offer)
    });
    match method {
        ModernMethod::Shared { caching } => Ok(ModernRoute::Shared { envelope, caching }),
        ModernMethod::Discover => {
            let result = era::discover_result(offer, INSTRUCTIONS);
            Ok(ModernRoute::Discover(Answer::result(&result, &request.id)))
        }
        ModernMethod::Listen => Ok(ModernRoute::Listen),
        ModernMethod::Removed => Err(RequestError::RemovedIn2026 {
            method: request.method.as_str().into(),
        }),
        ModernMethod::Unknown => Err(RequestError::MethodNotFound {
            method: request.method.as_str().into(),
        }),
    }
}

/// Whether `request` needs a running slot ([`Method::needs_slot`]; a method rea does not know
/// is answered `-32601` in one, like any other request).
pub(crate) fn needs_slot(request: &Request) -> bool {
    request.known.is_none_or(Method::needs_slot)
}

/// What a 2025 notification asks of its connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NotificationRule {
    /// `notifications/initialized`: the client is ready (stdio then asks for its roots).
    Initialized,
    /// `notifications/roots/list_changed`: the client's roots are to be asked again.
    RootsListChanged,
    /// `notifications/cancelled` naming a request by id.
    Cancelled(RequestKey),
    /// Anything else, or a cancellation that names no valid id: nothing to do.
    Ignored,
}

/// What `notification` asks for.
pub(crate) fn notification_rule(notification: &Notification) -> NotificationRule {
    match notification.method.as_str() {
        "notifications/initialized" => NotificationRule::Initialized,
        "notifications/roots/list_changed" => NotificationRule::RootsListChanged,
        "notifications/cancelled" => notification
            .params
            .as_ref()
            .and_then(|params| params.get("requestId"))
            .and_then(RequestKey::of)
            .map_or(NotificationRule::Ignored, NotificationRule::Cancelled),
        _ => NotificationRule::Ignored,
    }
}

/// A batch is accepted only on a connection that negotiated a version with batches
/// (2025-03-26); before `initialize` and under any other version it is refused whole.
pub(crate) fn accept_batch(version: Option<ProtocolVersion>) -> Result<(), RequestError> {
    if version.is_some_and(ProtocolVersion::accepts_batches) {
        Ok(())
    } else {
        Err(RequestError::BatchNotAccepted)
    }
}

/// One member of a batch that gets an answer: already answered (invalid) or still to run.
pub(crate) enum BatchEntry {
    Answered(Value),
    Run(Request),
}

/// A batch sorted by what each member needs: the members to answer in order, the
/// notifications and the client's responses to act on.
pub(crate) struct AdmittedBatch {
    pub(crate) entries: Vec<BatchEntry>,
    pub(crate) notifications: Vec<Notification>,
    pub(crate) responses: Vec<Value>,
}

/// Admits a batch's members: a request at or past `limit` messages
/// ([`super::ShellConfig::max_batch_messages`]) is answered with `-32600` unrun, so is an
/// `initialize`; invalid members are answered with their error; malformed responses are
/// logged and dropped.
pub(crate) fn admit_batch(messages: Vec<Message>, limit: usize) -> AdmittedBatch {
    let mut batch = AdmittedBatch {
        entries: Vec::new(),
        notifications: Vec::new(),
        responses: Vec::new(),
    };
    for (index, message) in messages.into_iter().enumerate() {
        let entry = match message {
            Message::Request(request) if index >= limit => {
                let error = RequestError::BatchTooLong { limit };
                BatchEntry::Answered(error.to_response(&request.id))
            }
            Message::Request(request) if request.known == Some(Method::Initialize) => {
                let error = RequestError::InitializeInBatch;
                BatchEntry::Answered(error.to_response(&request.id))
            }
            Message::Request(request) => BatchEntry::Run(request),
            Message::Invalid { id, error } => BatchEntry::Answered(error.to_response(&id)),
            Message::Notification(notification) => {
                batch.notifications.push(notification);
                continue;
            }
            Message::ClientResponse(response) => {
                batch.responses.push(response);
                continue;
            }
            Message::MalformedResponse { reason } => {
                tracing::warn!(reason, "dropped a malformed response from the client");
                continue;
            }
        };
        batch.entries.push(entry);
    }
    batch
}

/// A batch none of whose requests runs: each is answered with `refusal`.
pub(crate) fn refused_batch(entries: Vec<BatchEntry>, refusal: &RequestError) -> Value {
    let answers = entries
        .into_iter()
        .map(|entry| match entry {
            BatchEntry::Answered(answer) => answer,
            BatchEntry::Run(request) => refusal.to_response(&request.id),
        })
        .collect();
    Value::Array(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::error::ErrorCode;
    use crate::mcp::message::classify_message;
    use crate::mcp::message::fixtures::{envelope, request};

    #[test]
    fn every_modern_method_kind_has_its_route() {
        let offer = Offer {
            tools: true,
            subscribe: false,
        };
        let route = |method: &str| route_modern(&request(1, method, envelope()), offer);
        assert!(matches!(
            route("tools/list"),
            Ok(ModernRoute::Shared { .. })
        ));
        assert!(matches!(
            route("completion/complete"),
            Ok(ModernRoute::Shared { caching: None, .. })
        ));
        assert!(matches!(
            route("subscriptions/listen"),
            Ok(ModernRoute::Listen)
        ));
        match route("server/discover") {
            Ok(ModernRoute::Discover(answer)) => {
                assert_eq!(answer.error_code, None);
                let answer: Value = serde_json::from_str(&answer.line).unwrap();
                assert_eq!(answer["id"], 1);
                assert_eq!(answer["result"]["resultType"], "complete");
            }
            other => panic!("{other:?}"),
        }
        // The methods the 2026 revision removed, and one it never had.
        let refused = [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
            "no/such/method",
        ];
        for method in refused {
            let refused = route(method).unwrap_err();
            assert_eq!(refused.code(), ErrorCode::MethodNotFound, "{method}");
        }
        let without_envelope = route_modern(&request(1, "tools/list", json!({})), offer);
        assert_eq!(
            without_envelope.unwrap_err().code(),
            ErrorCode::InvalidParams
        );
    }

    #[test]
    fn every_notification_kind_has_its_rule() {
        let notification = |method: &str, params: Value| Notification {
            method: method.to_owned(),
            params: Some(params),
        };
        let cases = [
            (
                "notifications/initialized",
                json!({}),
                NotificationRule::Initialized,
            ),
            (
                "notifications/roots/list_changed",
                json!({}),
                NotificationRule::RootsListChanged,
            ),
            (
                "notifications/cancelled",
                json!({"requestId": -7}),
                NotificationRule::Cancelled(RequestKey::Integer(-7)),
            ),
            (
                "notifications/cancelled",
                json!({"requestId": "a"}),
                NotificationRule::Cancelled(RequestKey::Text("a".to_owned())),
            ),
            (
                "notifications/cancelled",
                json!({"requestId": null}),
                NotificationRule::Ignored,
            ),
            (
                "notifications/cancelled",
                json!({}),
                NotificationRule::Ignored,
            ),
            (
                "notifications/progress",
                json!({}),
                NotificationRule::Ignored,
            ),
        ];
        for (method, params, rule) in cases {
            assert_eq!(
                notification_rule(&notification(method, params.clone())),
                rule,
                "{method} {params}"
            );
        }
    }

    #[test]
    fn only_a_version_with_batches_accepts_them() {
        assert!(accept_batch(None).is_err());
        for version in ProtocolVersion::SUPPORTED {
            assert_eq!(
                accept_batch(Some(version)).is_ok(),
                version == ProtocolVersion::V2025_03_26,
                "{version:?}"
            );
        }
    }

    #[test]
    fn a_batch_runs_at_most_limit_members_and_never_initialize() {
        let messages: Vec<Message> = (0..5)
            .map(|id| {
                let method = if id == 1 { "initialize" } else { "ping" };
                classify_message(json!({"jsonrpc": "2.0", "id": id, "method": method}))
            })
            .chain([classify_message(
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )])
            .collect();
        let batch = admit_batch(messages, 3);
        assert_eq!(batch.notifications.len(), 1);
        let runs: Vec<bool> = batch
            .entries
            .iter()
            .map(|entry| matches!(entry, BatchEntry::Run(_)))
            .collect();
        assert_eq!(runs, [true, false, true, false, false]);
        let refused = refused_batch(batch.entries, &RequestError::NoWorker);
        assert_eq!(refused.as_array().map(Vec::len), Some(5));
    }
}
