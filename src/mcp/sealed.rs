//! Sealed `requestState`: the opaque state a 2026 `input_required` result hands the client,
//! which the client echoes on its retry.
//!
//! The state is the handler's JSON value bound to the request it answered (the method and
//! the tool, prompt or resource it named) and to the time it was issued, then authenticated
//! with HMAC-SHA256 under a key drawn from the operating system's random source once per
//! process. A state that was altered, that another request was given, that is older than
//! [`MAX_AGE`], or that another process sealed, is refused: the client cannot forge what the
//! server will believe it said earlier. The state is authenticated, not encrypted: what a
//! handler puts in it is visible to the client.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// How long a sealed state is accepted after it was issued.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// Why a `requestState` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not of the shape this server issues (`<hex payload>.<hex tag>`).
    #[error("it is not a state this server issued")]
    Malformed,
    /// The tag does not authenticate the payload: the state was altered, or another process
    /// (or an earlier run of this one) sealed it.
    #[error("its integrity check failed (it was altered or not issued by this server process)")]
    Tampered,
    /// It was issued for another request (another method, or another tool, prompt or
    /// resource).
    #[error("it was issued for {issued}, not for {method} {target}")]
    OtherRequest {
        /// The method and target it was issued for.
        issued: String,
        /// The method of this request.
        method: String,
        /// The tool, prompt or resource this request names.
        target: String,
    },
    /// It is older than [`MAX_AGE`].
    #[error("it expired (a state is accepted for {} seconds)", MAX_AGE.as_secs())]
    Expired,
}

/// The key of this process, drawn once. `None` when the random source failed: then nothing
/// can be sealed or opened.
fn key() -> Option<&'static [u8; 32]> {
    static KEY: OnceLock<Option<[u8; 32]>> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).ok().map(|()| key)
    })
    .as_ref()
}

/// The HMAC-SHA256 (RFC 2104) state under `key`, from the maintained `hmac` crate.
fn mac(key: &[u8; 32]) -> Hmac<Sha256> {
    // A 32-byte key is shorter than SHA-256's block, which HMAC accepts as it is.
    <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC accepts a key of any length")
}

/// HMAC-SHA256 of `message` under `key`.
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut mac = mac(key);
    mac.update(message);
    mac.finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    text
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    text.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Seals `state` for a request of `method` naming `target`; `None` when the process has no
/// key (its random source failed).
pub fn seal(method: &str, target: &str, state: &Value) -> Option<String> {
    seal_at(method, target, state, now_secs())
}

fn seal_at(method: &str, target: &str, state: &Value, issued: u64) -> Option<String> {
    let key = key()?;
    let payload = json!({ "m": method, "t": target, "i": issued, "s": state }).to_string();
    let tag = hmac(key, payload.as_bytes());
    Some(format!("{}.{}", hex(payload.as_bytes()), hex(&tag)))
}

/// Opens a sealed state that a request of `method` naming `target` echoed: the handler's
/// value, once its tag, its request and its age are checked.
pub fn open(sealed: &str, method: &str, target: &str) -> Result<Value, StateError> {
    let (payload, tag) = sealed.split_once('.').ok_or(StateError::Malformed)?;
    let payload = unhex(payload).ok_or(StateError::Malformed)?;
    let tag = unhex(tag).ok_or(StateError::Tampered)?;
    let key = key().ok_or(StateError::Tampered)?;
    // `verify_slice` compares in time that does not depend on where the tags differ.
    let mut mac = mac(key);
    mac.update(&payload);
    mac.verify_slice(&tag).map_err(|_| StateError::Tampered)?;
    let mut opened: Value = serde_json::from_slice(&payload).map_err(|_| StateError::Malformed)?;
    let issued_method = opened["m"].as_str().unwrap_or_default();
    let issued_target = opened["t"].as_str().unwrap_or_default();
    if issued_method != method || issued_target != target {
        return Err(StateError::OtherRequest {
            issued: format!("{issued_method} {issued_target}"),
            method: method.to_owned(),
            target: crate::text::cut(target),
        });
    }
    let issued = opened["i"].as_u64().ok_or(StateError::Malformed)?;
    if now_secs().saturating_sub(issued) > MAX_AGE.as_secs() {
        return Err(StateError::Expired);
    }
    Ok(opened["s"].take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_an_independent_implementation() {
        // The tag Python's `hmac.new(b"\x0b" * 32, b"Hi There", hashlib.sha256)` computes.
        let key = [0x0bu8; 32];
        let tag = hmac(&key, b"Hi There");
        assert_eq!(
            hex(&tag),
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
    }

    #[test]
    fn an_old_state_expired() {
        let old = seal_at(
            "tools/call",
            "t",
            &json!(1),
            now_secs() - MAX_AGE.as_secs() - 5,
        )
        .expect("a key");
        assert_eq!(open(&old, "tools/call", "t"), Err(StateError::Expired));
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(
            unhex(&hex(&[0, 1, 0xab, 0xff])),
            Some(vec![0, 1, 0xab, 0xff])
        );
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }
}
