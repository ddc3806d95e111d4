//! Reading the JSON claim list into [`Claim`]s, with errors naming the claim and field.

use serde_json::{Map, Value};

use super::{Claim, ClaimError, MAX_CLAIM_BYTES, MAX_CLAIMS, ProcedureRef};
use crate::capture::integer;
use crate::core::MAX_VALUE_CHARS;
use crate::core::discovery::is_valid_address;
use crate::inventory::ExecutableFormat;

/// Every claim kind with its fields besides `kind`.
const KINDS: [(&str, &[&str]); 9] = [
    ("procedure_exists", &["document", "address"]),
    ("procedure_named", &["document", "address", "name"]),
    ("bytes_equal", &["document", "address", "hex"]),
    ("occurrence_digest", &["occurrence_id", "sha256"]),
    ("occurrence_format", &["occurrence_id", "format"]),
    ("capture_exit_code", &["capture", "code"]),
    ("capture_stdout_digest", &["capture", "sha256"]),
    ("capture_stderr_digest", &["capture", "sha256"]),
    ("calls", &["caller", "callee", "document"]),
];

/// Parses a claim list (see the module documentation for the language).
pub fn parse_claims(claims: &Value) -> Result<Vec<Claim>, ClaimError> {
    let list = claims.as_array().ok_or(ClaimError::NotAList)?;
    if list.len() > MAX_CLAIMS {
        return Err(ClaimError::TooMany {
            count: list.len(),
            limit: MAX_CLAIMS,
        });
    }
    list.iter()
        .enumerate()
        .map(|(index, claim)| {
            let object = claim.as_object().ok_or(ClaimError::NotAnObject { index })?;
            Fields { index, object }.claim()
        })
        .collect()
}

/// One claim object being read.
struct Fields<'a> {
    index: usize,
    object: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn claim(&self) -> Result<Claim, ClaimError> {
        let kind = self.string("kind")?;
        let Some((kind, fields)) = KINDS.iter().find(|(name, _)| *name == kind) else {
            let known: Vec<&str> = KINDS.iter().map(|(name, _)| *name).collect();
            let given: String = crate::text::cut(kind);
            return Err(self.malformed(
                "kind",
                format!(
                    "unknown kind {given:?}; expected one of {}",
                    known.join(", ")
                ),
            ));
        };
        if let Some(extra) = self
            .object
            .keys()
            .find(|key| *key != "kind" && !fields.contains(&key.as_str()))
        {
            return Err(self.malformed(extra, format!("is not a field of {kind} claims")));
        }
        Ok(match *kind {
            "procedure_exists" => Claim::ProcedureExists {
                document: self.text("document")?,
                address: self.address()?,
            },
            "procedure_named" => Claim::ProcedureNamed {
                document: self.text("document")?,
                address: self.address()?,
                name: self.text("name")?,
            },
            "bytes_equal" => Claim::BytesEqual {
                document: self.text("document")?,
                address: self.address()?,
                bytes: self.bytes()?,
            },
            "occurrence_digest" => Claim::OccurrenceDigest {
                occurrence_id: self.occurrence_id()?,
                sha256: self.sha256()?,
            },
            "occurrence_format" => Claim::OccurrenceFormat {
                occurrence_id: self.occurrence_id()?,
                format: self.format()?,
            },
            "capture_exit_code" => Claim::CaptureExitCode {
                capture: self.text("capture")?,
                code: self.code()?,
            },
            "capture_stdout_digest" => Claim::CaptureStdoutDigest {
                capture: self.text("capture")?,
                sha256: self.sha256()?,
            },
            "calls" => Claim::Calls {
                document: match self.object.get("document") {
                    Some(_) => Some(self.text("document")?),
                    None => None,
                },
                caller: self.procedure("caller")?,
                callee: self.procedure("callee")?,
            },
            _ => Claim::CaptureStderrDigest {
                capture: self.text("capture")?,
                sha256: self.sha256()?,
            },
        })
    }

    fn malformed(&self, field: &str, problem: impl Into<String>) -> ClaimError {
        ClaimError::Malformed {
            index: self.index,
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn field(&self, field: &str) -> Result<&Value, ClaimError> {
        self.object
            .get(field)
            .ok_or_else(|| self.malformed(field, "is required"))
    }

    fn string(&self, field: &str) -> Result<&str, ClaimError> {
        self.field(field)?
            .as_str()
            .ok_or_else(|| self.malformed(field, "must be a string"))
    }

    /// A non-empty string of at most [`MAX_VALUE_CHARS`] characters.
    fn text(&self, field: &str) -> Result<String, ClaimError> {
        let text = self.string(field)?;
        if text.is_empty() {
            return Err(self.malformed(field, "must not be empty"));
        }
        if text.chars().nth(MAX_VALUE_CHARS).is_some() {
            return Err(self.malformed(
                field,
                format!("is longer than {MAX_VALUE_CHARS} characters"),
            ));
        }
        Ok(text.to_owned())
    }

    fn address(&self) -> Result<u64, ClaimError> {
        let text = self.string("address")?;
        let value = is_valid_address(text)
            .then(|| u64::from_str_radix(&text[2..], 16).ok())
            .flatten();
        value.ok_or_else(|| {
            self.malformed(
                "address",
                "must be a canonical address: 0x and 1 to 16 lowercase hexadecimal digits, no leading zero",
            )
        })
    }

    /// A canonical address, or a name: any other text that does not start with `0x`.
    fn procedure(&self, field: &str) -> Result<ProcedureRef, ClaimError> {
        let text = self.text(field)?;
        if !text.starts_with("0x") {
            return Ok(ProcedureRef::Name(text));
        }
        is_valid_address(&text)
            .then(|| u64::from_str_radix(&text[2..], 16).ok())
            .flatten()
            .map(ProcedureRef::Address)
            .ok_or_else(|| {
                self.malformed(
                    field,
                    "starts with 0x, so must be a canonical address: 0x and 1 to 16 lowercase hexadecimal digits, no leading zero",
                )
            })
    }

    fn bytes(&self) -> Result<Vec<u8>, ClaimError> {
        let text = self.string("hex")?;
        let problem =
            format!("must be 1 to {MAX_CLAIM_BYTES} bytes as pairs of hexadecimal digits");
        if text.is_empty() || text.len() > 2 * MAX_CLAIM_BYTES {
            return Err(self.malformed("hex", problem));
        }
        decode_hex(text).ok_or_else(|| self.malformed("hex", problem))
    }

    fn sha256(&self) -> Result<String, ClaimError> {
        let text = self.string("sha256")?;
        if !is_lower_hex(text, 64) {
            return Err(self.malformed("sha256", "must be 64 lowercase hexadecimal digits"));
        }
        Ok(text.to_owned())
    }

    fn occurrence_id(&self) -> Result<String, ClaimError> {
        let text = self.string("occurrence_id")?;
        let valid = text
            .strip_prefix("occ-")
            .is_some_and(|digits| is_lower_hex(digits, 32));
        if !valid {
            return Err(self.malformed(
                "occurrence_id",
                "must be occ- and 32 lowercase hexadecimal digits",
            ));
        }
        Ok(text.to_owned())
    }

    fn format(&self) -> Result<ExecutableFormat, ClaimError> {
        serde_json::from_value(self.field("format")?.clone()).map_err(|_| {
            self.malformed(
                "format",
                "must be one of elf, mach-o, mach-o-fat, pe, zip, wasm, java-class, ar, script, unknown",
            )
        })
    }

    fn code(&self) -> Result<i64, ClaimError> {
        integer(self.field("code")?).ok_or_else(|| self.malformed("code", "must be an integer"))
    }
}

fn is_lower_hex(text: &str, digits: usize) -> bool {
    text.len() == digits && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Bytes from pairs of hexadecimal digits (either case); `None` if `text` is not that.
pub(super) fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            u8::try_from(high * 16 + low).ok()
        })
        .collect()
}
