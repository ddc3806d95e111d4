//! Protocol versions and the `initialize` result.

use serde_json::{Value, json};

/// The version string of the 2026 revision (served beside the [`ProtocolVersion`]s, which
/// are the revisions `initialize` negotiates).
pub const MODERN_VERSION: &str = "2026-07-28";

/// A protocol revision this server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// `2024-11-05`.
    V2024_11_05,
    /// `2025-03-26`: the only revision with JSON-RPC batches.
    V2025_03_26,
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-11-25`: the latest, answered when a client asks for an unknown version.
    V2025_11_25,
}

impl ProtocolVersion {
    /// Supported versions, newest first.
    pub const SUPPORTED: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The latest supported version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// The supported version named `text`, if any.
    pub fn parse(text: &str) -> Option<ProtocolVersion> {
        Self::SUPPORTED.into_iter().find(|v| v.as_str() == text)
    }

    /// Echo a supported requested version, else answer the latest.
    pub fn negotiate(requested: Option<&str>) -> ProtocolVersion {
        requested
            .and_then(ProtocolVersion::parse)
            .unwrap_or(ProtocolVersion::LATEST)
    }

    /// Whether JSON-RPC batches are accepted under this version.
    pub fn accepts_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Whether the `completions` capability exists in this version (added in 2025-03-26).
    pub fn has_completions_capability(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }
}

/// The tasks extension's identifier (2026-07-28, SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What the server offers, used to build the capabilities object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Whether the tool catalog is non-empty (the `tools` capability is advertised only then).
    pub tools: bool,
    /// Whether 2025 clients may subscribe to resources (an extension offers it).
    pub subscribe: bool,
}

/// The server's name and version as `version` describes it (`title` since 2025-06-18):
/// `serverInfo` of `initialize`, and serverInfo in the `_meta` of 2026 results.
pub(crate) fn server_info(version: ProtocolVersion) -> Value {
    let mut server_info = json!({ "name": "rea", "version": env!("CARGO_PKG_VERSION") });
    if version >= ProtocolVersion::V2025_06_18 {
        server_info["title"] = json!("REA guided reverse engineering");
    }
    server_info
}

/// The `initialize` result for `version`.
pub fn initialize_result(version: ProtocolVersion, offer: Offer, instructions: &str) -> Value {
    json!({
        "protocolVersion": version.as_str(),
        "capabilities": capabilities(offer, Some(version)),
        "serverInfo": server_info(version),
        "instructions": instructions,
    })
}

/// Every version the server speaks, newest first (`supportedVersions` of `server/discover`
/// and `data.supported` of `-32022`).
pub fn supported_versions() -> Vec<&'static str> {
    std::iter::once(MODERN_VERSION)
        .chain(ProtocolVersion::SUPPORTED.iter().map(|v| v.as_str()))
        .collect()
}

/// The capabilities both eras advertise: prompts (with list changes), completions (from
/// 2025-03-26 on), logging, and tools when the catalog has any. `version` is the negotiated
/// 2025 revision; `None` for 2026-07-28.
pub fn capabilities(offer: Offer, version: Option<ProtocolVersion>) -> Value {
    let mut capabilities = json!({ "prompts": { "listChanged": true }, "logging": {} });
    if version.is_none_or(ProtocolVersion::has_completions_capability) {
        capabilities["completions"] = json!({});
    }
    if offer.tools {
        capabilities["tools"] = json!({ "listChanged": false });
        match version {
            // 2026-07-28: the tasks extension (SEP-2663).
            None => {
                capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
            }
            // 2025-11-25: the experimental task methods, for tools/call.
            Some(version) if version >= ProtocolVersion::V2025_11_25 => {
                capabilities["tasks"] = json!({
                    "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } }
                });
            }
            Some(_) => {}
        }
    }
    capabilities["resources"] = json!({ "subscribe": offer.subscribe, "listChanged": false });
    capabilities
}
