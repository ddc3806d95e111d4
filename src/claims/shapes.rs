//! The result shapes evaluation reads (documented on [`super`]) as typed views that borrow from
//! the record. A field of another shape reads as absent ([`Loose`]) and a list item of another
//! shape is skipped, so one odd value never hides the rest of a record; a record whose required
//! fields are missing is skipped by the reader in `sightings.rs`.

use serde::de::{Deserializer, IgnoredAny};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::Value;

use crate::inventory::ExecutableFormat;

/// A `T`, or nothing when the value has another shape.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Loose<T> {
    /// The value has the shape.
    Shaped(T),
    /// It has another shape (or, as a default, is absent).
    Other(IgnoredAny),
}

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose::Other(IgnoredAny)
    }
}

impl<T> Loose<T> {
    /// The value, when it has the shape, by reference.
    pub(super) fn shaped_ref(&self) -> Option<&T> {
        match self {
            Loose::Shaped(value) => Some(value),
            Loose::Other(_) => None,
        }
    }

    /// The value, when it has the shape.
    pub(super) fn shaped(self) -> Option<T> {
        match self {
            Loose::Shaped(value) => Some(value),
            Loose::Other(_) => None,
        }
    }
}

/// A list whose items of shape `T` are read (nothing when it is not a list).
pub(super) type List<T> = Loose<Vec<Loose<T>>>;

/// The items of shape `T` of a [`List`].
pub(super) fn items<T>(list: List<T>) -> impl Iterator<Item = T> {
    list.shaped()
        .into_iter()
        .flatten()
        .filter_map(Loose::shaped)
}

/// A field that may be absent, `null`, of its shape or of another: `None` when absent (the
/// `deserialize_with` of such fields runs only for present ones).
pub(super) type Present<T> = Option<Loose<T>>;

fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Present<T>, D::Error> {
    Loose::deserialize(deserializer).map(Some)
}

/// Reads a record's result or arguments as the view `T`; `None` when it is not an object.
pub(super) fn view<'a, T: Deserialize<'a>>(value: &'a Value) -> Option<T> {
    value
        .is_object()
        .then(|| T::deserialize(value).ok())
        .flatten()
}

/// An owned reading, for the shapes that keep no borrow.
pub(super) fn owned<T: DeserializeOwned>(value: &Value) -> Option<T> {
    value
        .is_object()
        .then(|| T::deserialize(value).ok())
        .flatten()
}

/// The `document` field of a result or of the arguments.
#[derive(Debug, Deserialize)]
pub(super) struct Documented<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) document: Present<&'a str>,
}

/// A name as results give it: a string, or `{name, raw_name}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum NameValue<'a> {
    /// A display name.
    Text(&'a str),
    /// A name and its raw (mangled) form.
    Pair {
        #[serde(borrow, default)]
        name: Loose<&'a str>,
        #[serde(borrow, default)]
        raw_name: Loose<&'a str>,
    },
}

impl<'a> NameValue<'a> {
    /// The names it holds, display name first.
    pub(super) fn names(self) -> impl Iterator<Item = &'a str> {
        let (first, second) = match self {
            NameValue::Text(name) => (Some(name), None),
            NameValue::Pair { name, raw_name } => (name.shaped(), raw_name.shaped()),
        };
        first.into_iter().chain(second)
    }
}

/// A `procedure_info` result, an item of `search_procedures` or an entry of `list_procedures`
/// (whose `raw_name` is not read).
#[derive(Debug, Deserialize)]
pub(super) struct Procedure<'a> {
    #[serde(borrow, default)]
    pub(super) address: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) name: Loose<NameValue<'a>>,
    #[serde(borrow, default)]
    pub(super) raw_name: Loose<NameValue<'a>>,
    #[serde(borrow, default)]
    pub(super) aliases: List<NameValue<'a>>,
}

/// A `search_procedures` or `list_procedures` result.
#[derive(Debug, Deserialize)]
pub(super) struct ProcedurePage<'a> {
    #[serde(borrow, default)]
    pub(super) procedures: List<Procedure<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) next_cursor: Present<Option<&'a str>>,
}

/// The `cursor` argument of a paged call.
#[derive(Debug, Deserialize)]
pub(super) struct Paged<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) cursor: Present<Option<&'a str>>,
}

/// A `read_bytes` result.
#[derive(Debug, Deserialize)]
pub(super) struct Bytes<'a> {
    #[serde(borrow, default)]
    pub(super) address: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) hex: Loose<&'a str>,
}

/// The `schema` field that marks an inventory page.
#[derive(Debug, Deserialize)]
pub(super) struct Schema<'a> {
    #[serde(borrow, default)]
    pub(super) schema: Loose<&'a str>,
}

/// A `list_artifact_occurrences` result.
#[derive(Debug, Deserialize)]
pub(super) struct OccurrenceList {
    #[serde(default)]
    pub(super) occurrences: List<Occurrence>,
}

/// One occurrence of a `list_artifact_occurrences` result.
#[derive(Debug, Deserialize)]
pub(super) struct Occurrence {
    pub(super) occurrence_id: String,
    pub(super) sha256: String,
    #[serde(default)]
    pub(super) format: Loose<ExecutableFormat>,
}

/// A procedure as `callees` and `disassemble` name it: `{address, name}`.
#[derive(Debug, Deserialize)]
pub(super) struct ProcedureRef<'a> {
    #[serde(borrow, default)]
    pub(super) address: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) name: Loose<&'a str>,
}

/// The `analysis` of a `callees` or `disassemble` result.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Analysis {
    #[serde(default)]
    pub(super) complete: Loose<bool>,
}

/// A `callees` or `disassemble` result: the procedure, its calls, the page and the analysis.
#[derive(Debug, Deserialize)]
pub(super) struct CallPage<'a> {
    #[serde(borrow, default)]
    pub(super) procedure: Loose<ProcedureRef<'a>>,
    #[serde(borrow, default)]
    pub(super) callees: List<Callee<'a>>,
    #[serde(borrow, default)]
    pub(super) instructions: List<Instruction<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(super) next_cursor: Present<Option<&'a str>>,
    #[serde(default)]
    pub(super) analysis: Loose<Analysis>,
}

/// One edge of a `callees` result.
#[derive(Debug, Deserialize)]
pub(super) struct Callee<'a> {
    #[serde(borrow, default)]
    pub(super) procedure: Loose<ProcedureRef<'a>>,
    #[serde(borrow, default)]
    pub(super) import: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) kind: Loose<&'a str>,
}

/// One instruction of a `disassemble` result.
#[derive(Debug, Deserialize)]
pub(super) struct Instruction<'a> {
    #[serde(borrow, default)]
    pub(super) target: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) target_kind: Loose<&'a str>,
    #[serde(borrow, default)]
    pub(super) target_name: Loose<&'a str>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_item_or_field_of_another_shape_hides_nothing_else() {
        let result = json!({
            "procedures": [
                {"address": "0x10", "name": {"name": "f", "raw_name": "_Z1fv"}, "aliases": ["g", 7]},
                "not a procedure",
                {"address": 16, "name": "h"},
            ],
            "next_cursor": null,
        });
        let page: ProcedurePage<'_> = view(&result).unwrap();
        assert!(matches!(page.next_cursor, Some(Loose::Shaped(None))));
        let procedures: Vec<Procedure<'_>> = items(page.procedures).collect();
        assert_eq!(procedures.len(), 2, "the string item is skipped");
        let mut procedures = procedures.into_iter();
        let first = procedures.next().unwrap();
        assert_eq!(first.address.shaped(), Some("0x10"));
        let names: Vec<&str> = first.name.shaped().unwrap().names().collect();
        assert_eq!(names, ["f", "_Z1fv"]);
        let aliases: Vec<&str> = items(first.aliases).flat_map(NameValue::names).collect();
        assert_eq!(aliases, ["g"], "the number alias is skipped");
        let second = procedures.next().unwrap();
        assert_eq!(second.address.shaped(), None, "a number is no address");
        assert_eq!(
            second.name.shaped().unwrap().names().collect::<Vec<_>>(),
            ["h"]
        );
    }

    #[test]
    fn a_present_field_tells_absent_null_text_and_other_apart() {
        let cursor = |arguments: Value| {
            let paged: Paged<'_> = view(&arguments).unwrap();
            match paged.cursor {
                None => "absent",
                Some(Loose::Shaped(None)) => "null",
                Some(Loose::Shaped(Some(_))) => "text",
                Some(Loose::Other(_)) => "other",
            }
        };
        assert_eq!(cursor(json!({})), "absent");
        assert_eq!(cursor(json!({"cursor": null})), "null");
        assert_eq!(cursor(json!({"cursor": "c1"})), "text");
        assert_eq!(cursor(json!({"cursor": 3})), "other");
        assert!(view::<Paged<'_>>(&json!(["not", "an", "object"])).is_none());
    }
}
