//! What every HTTP request passes before any work: the Host and Origin allow-lists (a web
//! page must not reach a local server through DNS rebinding) and the bearer token.
//!
//! The checks read headers only and are pure, so they are tested (and fuzzed) without a
//! socket.

use std::path::{Path, PathBuf};

use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, HOST, ORIGIN};

/// Host names a loopback server answers to, on any port.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The shortest accepted bearer token, in characters: 128 bits as hex.
pub const MIN_TOKEN_CHARS: usize = 32;

/// A bearer token every request must carry (`Authorization: Bearer <token>`), compared in
/// constant time. Printable ASCII without spaces, at least [`MIN_TOKEN_CHARS`] long.
#[derive(Clone)]
pub struct BearerToken(Vec<u8>);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never printed: logs must not hold the secret.
        f.write_str("BearerToken(..)")
    }
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The token file cannot be read.
    #[error("cannot read the token file {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The token is shorter than [`MIN_TOKEN_CHARS`].
    #[error("the bearer token has {chars} characters; at least {MIN_TOKEN_CHARS} are required")]
    TooShort {
        /// Its length.
        chars: usize,
    },
    /// The token holds a character outside printable ASCII, or a space.
    #[error("the bearer token must be printable ASCII without spaces")]
    NotPrintable,
}

impl BearerToken {
    /// A token from its text (surrounding whitespace, such as a final newline, is dropped).
    pub fn new(text: &str) -> Result<BearerToken, TokenError> {
        let token = text.trim();
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::NotPrintable);
        }
        if token.len() < MIN_TOKEN_CHARS {
            return Err(TokenError::TooShort { chars: token.len() });
        }
        Ok(BearerToken(token.as_bytes().to_vec()))
    }

    /// The token a file holds (`--token-file`).
    pub fn from_file(path: &Path) -> Result<BearerToken, TokenError> {
        let text = std::fs::read_to_string(path).map_err(|error| TokenError::Read {
            path: path.to_owned(),
            error,
        })?;
        BearerToken::new(&text)
    }

    /// Whether `presented` is this token. The time taken depends on the lengths only, never
    /// on where the bytes first differ.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let mut difference = self.0.len() ^ presented.len();
        for index in 0..self.0.len().max(presented.len()) {
            let expected = self.0.get(index).copied().unwrap_or(0);
            let given = presented.get(index).copied().unwrap_or(0);
            difference |= usize::from(expected ^ given);
        }
        difference == 0
    }
}

/// Why a request was refused before any work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The Host header names a host this server does not serve (403).
    Host,
    /// The Origin header names an origin that is not allowed (403).
    Origin,
    /// The bearer token is missing or wrong (401).
    Token,
    /// The request carries more than one Host header (400, as RFC 9112 section 3.2 asks).
    DuplicateHost,
}

impl Refusal {
    /// What the client is told.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Host => {
                "Forbidden: the Host header names a host this server does not serve (see --allow-host)"
            }
            Refusal::Origin => {
                "Forbidden: the Origin header names an origin this server does not allow (see --allow-origin)"
            }
            Refusal::Token => {
                "Unauthorized: send the server's bearer token as Authorization: Bearer <token>"
            }
            Refusal::DuplicateHost => "Bad request: a request carries exactly one Host header",
        }
    }
}

/// The allow-lists and the token.
#[derive(Clone, Debug, Default)]
pub struct Guard {
    /// Host names served besides the loopback names (lowercase, without port).
    pub hosts: Vec<String>,
    /// Origins allowed besides loopback ones (`scheme://host[:port]`, lowercase).
    pub origins: Vec<String>,
    /// The token every request must carry, if any.
    pub token: Option<BearerToken>,
}

impl Guard {
    /// Checks one request's headers: Host, then Origin, then the token. Each of Host and
    /// Origin may come once (two are refused, whatever they say), and each is parsed exactly:
    /// `host[:port]`, `scheme://host[:port]`, nothing before or after.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        // HTTP/1.1 requires Host; a request without one is not from a browser, so it is not a
        // rebinding attempt, and the token (when set) still applies.
        if let Some(host) = single(headers, HOST).map_err(|()| Refusal::DuplicateHost)? {
            let host = host.to_str().map_err(|_| Refusal::Host)?;
            if !self.serves_host(host) {
                return Err(Refusal::Host);
            }
        }
        if let Some(origin) = single(headers, ORIGIN).map_err(|()| Refusal::Origin)? {
            let origin = origin.to_str().map_err(|_| Refusal::Origin)?;
            if !self.allows_origin(origin) {
                return Err(Refusal::Origin);
            }
        }
        if let Some(token) = &self.token {
            let presented = single(headers, AUTHORIZATION)
                .ok()
                .flatten()
                .and_then(|value| bearer_credentials(value.as_bytes()))
                .unwrap_or_default();
            if !token.matches(presented) {
                return Err(Refusal::Token);
            }
        }
        Ok(())
    }

    fn serves_host(&self, host: &str) -> bool {
        let Some(name) = host_name(host) else {
            return false;
        };
        let name = name.to_ascii_lowercase();
        LOOPBACK_HOSTS.contains(&name.as_str()) || self.hosts.contains(&name)
    }

    fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        host_name(rest).is_some_and(|name| LOOPBACK_HOSTS.contains(&name))
    }
}

/// The one value of header `name`: `Ok(None)` when absent, `Err` when it comes twice or more.
fn single(
    headers: &HeaderMap,
    name: axum::http::HeaderName,
) -> Result<Option<&axum::http::HeaderValue>, ()> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    match values.next() {
        Some(_) => Err(()),
        None => Ok(first),
    }
}

/// The credentials of `Authorization: Bearer <token>`: the scheme compared without case (RFC
/// 9110 section 11.1), one or more spaces, then the token.
fn bearer_credentials(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer";
    let scheme = value.get(..SCHEME.len())?;
    if !scheme.eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    let rest = &value[SCHEME.len()..];
    let token = rest.trim_ascii_start();
    (token.len() < rest.len() && rest.first() == Some(&b' ')).then_some(token)
}

/// The host of a `host[:port]` authority, exactly: an IPv6 literal keeps its brackets and
/// may be followed only by `:port`; a name holds no `:`, `@`, `/` or the like; a port is
/// digits. `None` for anything else (`[::1]evil.com`, `[::1]@evil.com`, `a:b:c`).
fn host_name(host: &str) -> Option<&str> {
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let (name, rest) = host.split_at(end + 1);
        match rest.strip_prefix(':') {
            Some(port) => (name, Some(port)),
            None if rest.is_empty() => (name, None),
            None => return None,
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if port.is_some_and(|port| !port.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let literal = name.starts_with('[');
    let inner = if literal {
        &name[1..name.len() - 1]
    } else {
        name
    };
    let allowed = |b: u8| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_') || (literal && b == b':')
    };
    (!inner.is_empty() && inner.bytes().all(allowed)).then_some(name)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(axum::http::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn loopback_hosts_and_origins_pass_on_any_port() {
        let guard = Guard::default();
        for host in ["localhost:3000", "127.0.0.1", "[::1]:8080", "LOCALHOST"] {
            assert_eq!(guard.check(&headers(&[(HOST, host)])), Ok(()), "{host}");
        }
        for origin in [
            "http://localhost:5173",
            "https://127.0.0.1",
            "http://[::1]:1",
        ] {
            assert_eq!(
                guard.check(&headers(&[(ORIGIN, origin)])),
                Ok(()),
                "{origin}"
            );
        }
    }

    #[test]
    fn other_hosts_and_origins_are_refused_unless_allowed() {
        let guard = Guard::default();
        assert_eq!(
            guard.check(&headers(&[(HOST, "evil.example.com")])),
            Err(Refusal::Host)
        );
        assert_eq!(
            guard.check(&headers(&[(ORIGIN, "http://evil.example.com")])),
            Err(Refusal::Origin)
        );
        assert_eq!(
            guard.check(&headers(&[(ORIGIN, "null")])),
            Err(Refusal::Origin)
        );
        assert_eq!(
            guard.check(&headers(&[(HOST, "localhost.evil.com:80")])),
            Err(Refusal::Host)
        );
        let allowing = Guard {
            hosts: vec!["rea.internal".into()],
            origins: vec!["https://rea.internal".into()],
            token: None,
        };
        let allowed = headers(&[(HOST, "rea.internal:443"), (ORIGIN, "https://rea.internal")]);
        assert_eq!(allowing.check(&allowed), Ok(()));
    }

    #[test]
    fn hosts_and_origins_are_parsed_exactly() {
        let guard = Guard::default();
        for host in [
            "[::1]evil.com",
            "[::1].evil.com:80",
            "[::1]:80x",
            "localhost:8o",
            "[]",
        ] {
            assert_eq!(
                guard.check(&headers(&[(HOST, host)])),
                Err(Refusal::Host),
                "{host}"
            );
        }
        for origin in [
            "http://[::1]@evil.com",
            "http://localhost@evil.com",
            "http://[::1]/x",
            "http://localhost:1/",
            "http://[::1]evil.com",
        ] {
            assert_eq!(
                guard.check(&headers(&[(ORIGIN, origin)])),
                Err(Refusal::Origin),
                "{origin}"
            );
        }
    }

    #[test]
    fn a_second_host_or_origin_header_is_refused() {
        let guard = Guard::default();
        let mut twice = HeaderMap::new();
        twice.append(HOST, HeaderValue::from_static("localhost"));
        twice.append(HOST, HeaderValue::from_static("evil.com"));
        assert_eq!(guard.check(&twice), Err(Refusal::DuplicateHost));
        let mut twice = HeaderMap::new();
        twice.append(ORIGIN, HeaderValue::from_static("http://localhost"));
        twice.append(ORIGIN, HeaderValue::from_static("http://evil.com"));
        assert_eq!(guard.check(&twice), Err(Refusal::Origin));
    }

    #[test]
    fn the_token_must_match_exactly() {
        let token = "0123456789abcdef0123456789abcdef";
        let guard = Guard {
            token: Some(BearerToken::new(&format!("{token}\n")).unwrap()),
            ..Guard::default()
        };
        let bearer = |value: &str| headers(&[(AUTHORIZATION, value)]);
        assert_eq!(guard.check(&bearer(&format!("Bearer {token}"))), Ok(()));
        // The scheme is case-insensitive (RFC 9110 section 11.1); the token is not.
        for scheme in ["bearer", "BEARER", "bEaReR"] {
            assert_eq!(guard.check(&bearer(&format!("{scheme} {token}"))), Ok(()));
        }
        assert_eq!(guard.check(&bearer(&format!("Bearer  {token}"))), Ok(()));
        assert_eq!(
            guard.check(&bearer(&format!("Bearer {}", token.to_uppercase()))),
            Err(Refusal::Token)
        );
        assert_eq!(
            guard.check(&bearer(&format!("Bearer{token}"))),
            Err(Refusal::Token)
        );
        assert_eq!(guard.check(&HeaderMap::new()), Err(Refusal::Token));
        assert_eq!(guard.check(&bearer(token)), Err(Refusal::Token));
        assert_eq!(
            guard.check(&bearer(&format!("Bearer {token}0"))),
            Err(Refusal::Token)
        );
        assert_eq!(
            guard.check(&bearer(&format!("Bearer {}", &token[1..]))),
            Err(Refusal::Token)
        );
    }

    #[test]
    fn short_or_unprintable_tokens_are_refused() {
        assert!(matches!(
            BearerToken::new("short"),
            Err(TokenError::TooShort { chars: 5 })
        ));
        assert!(matches!(
            BearerToken::new("0123456789abcdef 0123456789abcdef"),
            Err(TokenError::NotPrintable)
        ));
    }
}
