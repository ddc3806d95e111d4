//! Client roots: when the client declares the `roots` capability, the server asks for
//! `roots/list` (after `notifications/initialized`, and again on
//! `notifications/roots/list_changed`) and confines every path the tools touch to those roots
//! (within the `--root` directories, when the server has any). Over stdio only: a server over
//! HTTP has many clients, and one client's roots would confine them all, so there no client is
//! asked and `--root` alone confines.
//!
//! Until the first answer arrives, nothing is allowed: a client that declares roots is taken
//! at its word that it will name them (a request that touches paths waits for the answer, at
//! most [`ROOTS_WAIT`]). An empty list names no boundary (the MCP Inspector answers `[]` unless
//! its user adds roots): then the server's own confinement (`--root`, or none) holds, as over
//! HTTP. Roots that are not `file://` URIs, or that name no directory, are left out: a list of
//! only such roots allows nothing.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Longest a request that touches paths waits for the client's pending `roots/list` answer
/// before it runs under what is allowed until then (nothing, before the first answer).
pub(crate) const ROOTS_WAIT: Duration = Duration::from_millis(1_000);

/// What a `roots/list` answer says about the boundary.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ClientRoots {
    /// An empty list: the client names no boundary, the server's own confinement holds.
    Unnamed,
    /// The local paths of the `file://` roots of a non-empty list (possibly none of them).
    Named(Vec<PathBuf>),
}

/// The id prefix of the `roots/list` requests this server sends.
const ROOTS_ID_PREFIX: &str = "rea-roots-";

/// The `roots/list` request with serial `serial`.
pub(crate) fn roots_request(serial: u64) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": format!("{ROOTS_ID_PREFIX}{serial}"),
        "method": "roots/list",
    })
    .to_string()
}

/// The serial of a `roots/list` request id this server sent, if `id` is one.
pub(crate) fn answered_serial(id: &Value) -> Option<u64> {
    id.as_str()?.strip_prefix(ROOTS_ID_PREFIX)?.parse().ok()
}

/// What a `roots/list` result names: no boundary (an empty list), or the paths of its
/// `file://` roots; `None` when the answer is an error or not shaped as the schema says.
pub(crate) fn client_roots(response: &Value) -> Option<ClientRoots> {
    let roots = response.get("result")?.get("roots")?.as_array()?;
    if roots.is_empty() {
        return Some(ClientRoots::Unnamed);
    }
    Some(ClientRoots::Named(
        roots
            .iter()
            .filter_map(|root| root.get("uri")?.as_str())
            .filter_map(file_uri_path)
            .collect(),
    ))
}

/// The local path of a `file://` URI (`file:///p` or `file://localhost/p`), percent-decoded.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    if decoded.contains(&0) {
        return None;
    }
    Some(PathBuf::from(OsString::from_vec(decoded)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            file_uri_path("file:///home/a%20b/x"),
            Some(PathBuf::from("/home/a b/x"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
        assert_eq!(file_uri_path("file://host/x"), None);
        assert_eq!(file_uri_path("file:///a%00b"), None);
        assert_eq!(file_uri_path("file:///a%zz"), None);
    }

    #[test]
    fn only_well_formed_answers_name_roots() {
        let answer = json!({ "jsonrpc": "2.0", "id": "rea-roots-3",
            "result": { "roots": [{ "uri": "file:///tmp", "name": "t" }, { "uri": "s3://b" }] } });
        assert_eq!(answered_serial(&answer["id"]), Some(3));
        assert_eq!(
            client_roots(&answer),
            Some(ClientRoots::Named(vec![PathBuf::from("/tmp")]))
        );
        let only_remote =
            json!({ "id": "rea-roots-3", "result": { "roots": [{ "uri": "s3://b" }] } });
        assert_eq!(
            client_roots(&only_remote),
            Some(ClientRoots::Named(Vec::new()))
        );
        let empty = json!({ "id": "rea-roots-3", "result": { "roots": [] } });
        assert_eq!(client_roots(&empty), Some(ClientRoots::Unnamed));
        let error = json!({ "jsonrpc": "2.0", "id": "rea-roots-3", "error": { "code": -1, "message": "no" } });
        assert_eq!(client_roots(&error), None);
        assert_eq!(answered_serial(&json!(3)), None);
    }
}
