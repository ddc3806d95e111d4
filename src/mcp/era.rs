//! The two protocol eras served side by side (docs/CONTRACT.md section 8c): the 2025 handshake
//! revisions and 2026-07-28, classified per message and never pinned.
//!
//! Everything here is transport-neutral: it reads a request's method and params and builds
//! result members, so the stdio loop and a later HTTP endpoint classify, check and decorate the
//! same way.
//!
//! - [`classify`]: a request whose `params._meta` carries a 2026 envelope key
//!   (`io.modelcontextprotocol/protocolVersion`, `.../clientCapabilities`, `.../clientInfo` or
//!   `.../logLevel`) is [`Era::Modern`]; everything else, `initialize` included, is
//!   [`Era::Legacy`], served as the 2025 revisions are.
//! - [`Envelope::check`]: the envelope of a modern request: the version must be
//!   [`MODERN_VERSION`] (else `-32022` with `data: {supported, requested}`), the client
//!   capabilities an object, a log level one of the eight [`LogLevel`]s (else `-32602`).
//! - [`ModernMethod`]: what a modern request asks for (the table is the method type's, in
//!   `method.rs`: [`ModernMethod::of`]); `ping`, `logging/setLevel`, `resources/subscribe`,
//!   `resources/unsubscribe` and `initialize` are gone in 2026 (`-32601`).
//! - [`result_members`] and [`discover_result`]: `resultType`, serverInfo in `_meta`, and
//!   `ttlMs`/`cacheScope` on the cacheable results ([`Caching`]: `public` for what is the
//!   same for every client, `private` for a read of a session's resource).

use serde_json::{Map, Value, json};

use super::error::RequestError;
use super::protocol::{Offer, ProtocolVersion, capabilities, server_info};
use crate::resources;

pub use super::protocol::{MODERN_VERSION, supported_versions};

/// `_meta` key of the protocol version a 2026 request is sent under.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities for one 2026 request.
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the log level a 2026 request opts in to.
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key of the server's name and version.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key naming the `subscriptions/listen` stream it belongs to.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// How messages name the log level of a 2026 request.
const LOG_LEVEL_FIELD: &str = "params._meta[\"io.modelcontextprotocol/logLevel\"]";

/// The envelope keys whose presence makes a request a 2026 one.
const ENVELOPE_KEYS: [&str; 4] = [
    PROTOCOL_VERSION_KEY,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
];

/// How long a client may keep a `tools/list` or `server/discover` result: the catalog and the
/// capabilities never change while the process runs.
pub const STABLE_TTL_MS: u64 = 60_000;

/// How long a client may keep a `prompts/list` result: none, since a prompt file can change
/// it at any time (listen streams announce the change).
pub const PROMPTS_TTL_MS: u64 = 0;

/// Most `subscriptions/listen` streams open at once in the process.
pub const MAX_LISTENS: usize = 64;

/// Who may reuse a cached 2026 result (`cacheScope`, as HTTP's `Cache-Control: public` and
/// `private`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// The same for every client: any cache may keep it and serve it to anyone.
    Public,
    /// Data of one client's binary session: only that client's own cache may keep it.
    Private,
}

impl CacheScope {
    /// The scope's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// How long and by whom a 2026 result may be cached: its `ttlMs` and `cacheScope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caching {
    /// `ttlMs`: how long the result stays fresh (0: stale at once).
    pub ttl_ms: u64,
    /// `cacheScope`.
    pub scope: CacheScope,
}

impl Caching {
    /// A result that is the same for every client, fresh for `ttl_ms`.
    pub const fn public(ttl_ms: u64) -> Caching {
        Caching {
            ttl_ms,
            scope: CacheScope::Public,
        }
    }

    /// A result of one client's binary session: `private`, and stale at once (the session
    /// changes with every tool call).
    pub const PRIVATE: Caching = Caching {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };

    /// The caching of a `resources/read` of `params.uri`: the static resources (the published
    /// schemas and the templates guide, compiled into the server) are public and fresh for
    /// [`STABLE_TTL_MS`]; everything else names a binary session (or is an extension's, whose
    /// audience the server cannot know), and is private.
    pub fn of_read(params: Option<&Value>) -> Caching {
        let uri = params
            .and_then(|params| params.get("uri"))
            .and_then(Value::as_str);
        if uri.is_some_and(resources::is_static) {
            Caching::public(STABLE_TTL_MS)
        } else {
            Caching::PRIVATE
        }
    }
}

/// The protocol era of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// The 2025 revisions (and 2024-11-05): `initialize` first, state per connection.
    Legacy,
    /// 2026-07-28: every request carries its version and capabilities in `_meta`.
    Modern,
}

/// The era of a request with `params` (body first: the envelope in `params._meta` decides).
pub fn classify(params: Option<&Value>) -> Era {
    let claims = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| ENVELOPE_KEYS.iter().any(|key| meta.contains_key(*key)));
    if claims { Era::Modern } else { Era::Legacy }
}

/// The eight log levels of `notifications/message`, least severe first (RFC 5424 order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `notice`.
    Notice,
    /// `warning`.
    Warning,
    /// `error`.
    Error,
    /// `critical`.
    Critical,
    /// `alert`.
    Alert,
    /// `emergency`.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `text`, if any.
    pub fn parse(text: &str) -> Option<LogLevel> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == text)
    }

    /// The level at `value` (a JSON string naming one of the eight), or the `-32602` error
    /// naming `field`.
    pub(crate) fn from_value(value: &Value, field: &'static str) -> Result<LogLevel, RequestError> {
        value
            .as_str()
            .and_then(LogLevel::parse)
            .ok_or_else(|| RequestError::InvalidLogLevel {
                field,
                found: value.clone(),
            })
    }
}

/// What the envelope of a valid 2026 request tells the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Envelope {
    /// The log level the request opted in to; without one, no `notifications/message` is
    /// sent for it.
    pub log_level: Option<LogLevel>,
}

impl Envelope {
    /// Checks the `_meta` envelope of a 2026 request's `params`.
    pub fn check(params: Option<&Value>) -> Result<Envelope, RequestError> {
        let meta = params
            .and_then(|params| params.get("_meta"))
            .and_then(Value::as_object);
        let Some(meta) = meta else {
            return Err(RequestError::MissingEnvelopeKey {
                key: PROTOCOL_VERSION_KEY,
            });
        };
        let version = match meta.get(PROTOCOL_VERSION_KEY) {
            None => {
                return Err(RequestError::MissingEnvelopeKey {
                    key: PROTOCOL_VERSION_KEY,
                });
            }
            Some(Value::String(version)) => version,
            Some(_) => {
                return Err(RequestError::EnvelopeKeyType {
                    key: PROTOCOL_VERSION_KEY,
                    expected: "a string",
                });
            }
        };
        if ProtocolVersion::parse(version).is_some() {
            // A 2025 revision is served, but through `initialize`, never in an envelope.
            return Err(RequestError::LegacyVersionInEnvelope {
                requested: version.as_str().into(),
            });
        }
        if version != MODERN_VERSION {
            return Err(RequestError::UnsupportedProtocolVersion {
                requested: version.as_str().into(),
            });
        }
        match meta.get(CLIENT_CAPABILITIES_KEY) {
            None => {
                return Err(RequestError::MissingEnvelopeKey {
                    key: CLIENT_CAPABILITIES_KEY,
                });
            }
            Some(Value::Object(_)) => {}
            Some(_) => {
                return Err(RequestError::EnvelopeKeyType {
                    key: CLIENT_CAPABILITIES_KEY,
                    expected: "an object",
                });
            }
        }
        let log_level = meta
            .get(LOG_LEVEL_KEY)
            .map(|value| LogLevel::from_value(value, LOG_LEVEL_FIELD))
            .transpose()?;
        Ok(Envelope { log_level })
    }
}

/// What a 2026 request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModernMethod {
    /// `server/discover`.
    Discover,
    /// `subscriptions/listen`.
    Listen,
    /// A method both eras share, served by the same handler; `caching` tells whether its
    /// result carries `ttlMs` and `cacheScope`, and their values.
    Shared {
        /// The `ttlMs` and `cacheScope` of a cacheable result.
        caching: Option<Caching>,
    },
    /// A 2025 method the 2026 revision removed (`-32601` saying so).
    Removed,
    /// No such method (`-32601`).
    Unknown,
}

/// The members every 2026 result carries (`resultType` and serverInfo in `_meta`), and
/// `ttlMs`/`cacheScope` when `caching` is given, as JSON object members without braces, to be
/// put first in a result object.
pub fn result_members(caching: Option<Caching>) -> String {
    let mut members = Map::new();
    members.insert("resultType".into(), json!("complete"));
    members.insert("_meta".into(), result_meta(Map::new()));
    if let Some(caching) = caching {
        members.insert("ttlMs".into(), json!(caching.ttl_ms));
        members.insert("cacheScope".into(), json!(caching.scope.as_str()));
    }
    let object = Value::Object(members).to_string();
    object[1..object.len() - 1].to_owned()
}

/// The `_meta` of a 2026 result: serverInfo and `extra`.
fn result_meta(mut extra: Map<String, Value>) -> Value {
    extra.insert(SERVER_INFO_KEY.into(), server_info(ProtocolVersion::LATEST));
    Value::Object(extra)
}

/// `result` (a JSON object's text, as a handler answered it) with [`result_members`] put
/// first.
pub fn decorate_result(result: &str, caching: Option<Caching>) -> Option<String> {
    let rest = result.strip_prefix('{')?;
    let members = result_members(caching);
    let mut decorated = String::with_capacity(result.len() + members.len() + 2);
    decorated.push('{');
    decorated.push_str(&members);
    if !rest.trim_start().starts_with('}') {
        decorated.push(',');
    }
    decorated.push_str(rest);
    Some(decorated)
}

/// `result` with `resultType: kind` (`input_required`, or `task` for a `CreateTaskResult`)
/// and the result `_meta` put first; never cacheable.
pub fn decorate_typed(result: &str, kind: &str) -> Option<String> {
    let rest = result.strip_prefix('{')?;
    let mut members = Map::new();
    members.insert("resultType".into(), json!(kind));
    members.insert("_meta".into(), result_meta(Map::new()));
    let members = Value::Object(members).to_string();
    let mut decorated = String::with_capacity(result.len() + members.len());
    decorated.push_str(&members[..members.len() - 1]);
    if !rest.trim_start().starts_with('}') {
        decorated.push(',');
    }
    decorated.push_str(rest);
    Some(decorated)
}

/// The `server/discover` result.
pub fn discover_result(offer: Offer, instructions: &str) -> Value {
    json!({
        "resultType": "complete",
        "_meta": result_meta(Map::new()),
        "supportedVersions": supported_versions(),
        "capabilities": capabilities(offer, None),
        "instructions": instructions,
        "ttlMs": STABLE_TTL_MS,
        "cacheScope": CacheScope::Public.as_str(),
    })
}

/// Which change notifications one `subscriptions/listen` stream asked for and is honoured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ListenFilter {
    /// `notifications/prompts/list_changed`.
    pub prompts: bool,
    /// `notifications/tools/list_changed` (honoured when the catalog has tools; it never
    /// changes while the process runs).
    pub tools: bool,
    /// `notifications/resources/list_changed` (always honoured: the built-in
    /// `resources/list` and `resources/templates/list` never change while the server runs,
    /// so only an extension that changes its own lists ever sends one).
    pub resources: bool,
}

impl ListenFilter {
    /// The honoured subset of what `params.notifications` of a listen request asks for; a
    /// filter that is not an object is the `-32602` error.
    pub fn requested(params: Option<&Value>, offer: Offer) -> Result<ListenFilter, RequestError> {
        let asked = match params.and_then(|params| params.get("notifications")) {
            Some(Value::Object(asked)) => asked,
            Some(_) => {
                return Err(RequestError::NotAnObjectField {
                    path: "params",
                    field: "notifications",
                });
            }
            None => {
                return Err(RequestError::MissingField {
                    path: "params",
                    field: "notifications",
                });
            }
        };
        let wants = |key: &str| asked.get(key).and_then(Value::as_bool).unwrap_or(false);
        Ok(ListenFilter {
            prompts: wants("promptsListChanged"),
            tools: offer.tools && wants("toolsListChanged"),
            resources: wants("resourcesListChanged"),
        })
    }

    /// Whether this stream gets `method`.
    pub fn wants(self, method: &str) -> bool {
        match method {
            "notifications/prompts/list_changed" => self.prompts,
            "notifications/tools/list_changed" => self.tools,
            "notifications/resources/list_changed" => self.resources,
            _ => false,
        }
    }

    /// The `notifications/subscriptions/acknowledged` notification for the stream `id`.
    pub fn acknowledgement(self, id: &Value) -> Value {
        let mut honoured = Map::new();
        if self.prompts {
            honoured.insert("promptsListChanged".into(), json!(true));
        }
        if self.tools {
            honoured.insert("toolsListChanged".into(), json!(true));
        }
        if self.resources {
            honoured.insert("resourcesListChanged".into(), json!(true));
        }
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": { "notifications": honoured, "_meta": { SUBSCRIPTION_ID_KEY: id } },
        })
    }
}

/// `method` as a notification on the listen stream `id`.
pub fn stream_notification(method: &str, id: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": { "_meta": { SUBSCRIPTION_ID_KEY: id } } })
}

/// The result that ends the listen stream `id` gracefully (at shutdown).
pub fn listen_end(id: &Value) -> Value {
    let mut extra = Map::new();
    extra.insert(SUBSCRIPTION_ID_KEY.into(), id.clone());
    json!({ "jsonrpc": "2.0", "id": id, "result": { "resultType": "complete", "_meta": result_meta(extra) } })
}

/// The `notifications/cancelled` that closes the listen stream `id` on stdio.
pub fn listen_cancelled(id: &Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": { "requestId": id, "reason": "the server is shutting down" },
    })
}

/// A `notifications/message` at `level` from the logger `rea` carrying `text`.
pub fn log_message(level: LogLevel, text: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": { "level": level.as_str(), "logger": "rea", "data": text },
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn modern(meta: Value) -> Value {
        json!({ "_meta": meta })
    }

    #[test]
    fn an_envelope_key_claims_the_modern_era() {
        assert_eq!(classify(None), Era::Legacy);
        assert_eq!(classify(Some(&json!({ "_meta": {} }))), Era::Legacy);
        assert_eq!(
            classify(Some(&json!({ "_meta": { "progressToken": 1 } }))),
            Era::Legacy
        );
        for key in ENVELOPE_KEYS {
            assert_eq!(classify(Some(&modern(json!({ key: 1 })))), Era::Modern);
        }
    }

    #[test]
    fn decorated_results_stay_json_objects() {
        for result in ["{}", r#"{"a":1}"#, "{ }"] {
            let decorated: Value =
                serde_json::from_str(&decorate_result(result, Some(Caching::public(5))).unwrap())
                    .unwrap();
            assert_eq!(decorated["resultType"], "complete");
            assert_eq!(decorated["ttlMs"], 5);
            assert_eq!(decorated["cacheScope"], "public");
        }
    }

    #[test]
    fn reads_of_session_resources_are_private_and_static_ones_public() {
        let read = |uri: Value| {
            ModernMethod::of(
                "resources/read",
                Some(&json!({ "uri": uri })),
                Offer {
                    tools: true,
                    subscribe: false,
                },
            )
        };
        let public = ModernMethod::Shared {
            caching: Some(Caching::public(STABLE_TTL_MS)),
        };
        let private = ModernMethod::Shared {
            caching: Some(Caching::PRIVATE),
        };
        assert_eq!(read(json!("rea://schema/catalog-v1")), public);
        assert_eq!(read(json!("rea://guide/templates")), public);
        assert_eq!(
            read(json!("rea://session/bs_x/evidence/ev-000000000001")),
            private
        );
        assert_eq!(read(json!("rea://schema/catalog-v1/")), private);
        assert_eq!(read(json!(7)), private);
        assert_eq!(
            ModernMethod::of(
                "resources/read",
                None,
                Offer {
                    tools: true,
                    subscribe: false
                }
            ),
            private
        );
    }

    #[test]
    fn resource_list_changes_are_honoured_when_asked() {
        let asked =
            json!({ "notifications": { "resourcesListChanged": true, "toolsListChanged": true } });
        let filter = ListenFilter::requested(
            Some(&asked),
            Offer {
                tools: false,
                subscribe: false,
            },
        )
        .unwrap();
        assert_eq!(
            filter,
            ListenFilter {
                prompts: false,
                tools: false,
                resources: true
            }
        );
        assert!(filter.wants("notifications/resources/list_changed"));
        assert!(!filter.wants("notifications/resources/updated"));
        let acknowledged = filter.acknowledgement(&json!(1));
        assert_eq!(
            acknowledged["params"]["notifications"],
            json!({ "resourcesListChanged": true })
        );
        let silent = ListenFilter::requested(
            Some(&json!({ "notifications": {} })),
            Offer {
                tools: true,
                subscribe: false,
            },
        )
        .unwrap();
        assert!(!silent.wants("notifications/resources/list_changed"));
    }

    proptest! {
        /// Whatever the `_meta` holds, the check accepts exactly a string version equal to
        /// 2026-07-28 with object capabilities and an absent or valid level, and its errors
        /// are `-32602` or `-32022`.
        #[test]
        fn the_envelope_check_is_exact(
            version in prop_oneof![Just(json!(MODERN_VERSION)), Just(json!("2025-11-25")), Just(json!(7)), "\\PC{0,80}".prop_map(Value::from)],
            capabilities in prop_oneof![Just(json!({})), Just(json!([])), Just(json!("x"))],
            level in prop_oneof![Just(None), Just(Some(json!("warning"))), Just(Some(json!("loud"))), Just(Some(json!(3)))],
            drop_version in any::<bool>(),
            drop_capabilities in any::<bool>(),
        ) {
            let mut meta = Map::new();
            if !drop_version { meta.insert(PROTOCOL_VERSION_KEY.into(), version.clone()); }
            if !drop_capabilities { meta.insert(CLIENT_CAPABILITIES_KEY.into(), capabilities.clone()); }
            if let Some(level) = &level { meta.insert(LOG_LEVEL_KEY.into(), level.clone()); }
            let checked = Envelope::check(Some(&modern(Value::Object(meta))));
            let valid = !drop_version && !drop_capabilities && version == json!(MODERN_VERSION)
                && capabilities.is_object()
                && level.as_ref().is_none_or(|l| l.as_str().and_then(LogLevel::parse).is_some());
            prop_assert_eq!(checked.is_ok(), valid);
            if let Err(error) = checked {
                let code = error.code().code();
                prop_assert!(code == -32602 || code == -32022, "{code}");
                prop_assert_eq!(code == -32022, !drop_version && version.is_string() && version != json!(MODERN_VERSION));
            }
        }
    }
}
