//! One pass over catalog JSON that never builds the document as a [`serde_json::Value`]: the
//! root, the documents and their heads are read key by key, and the items of `segments` and
//! `procedures` one at a time, their text borrowed from the input. An item that has exactly
//! the shape the schema asks for goes straight into the document's table; anything else is
//! rebuilt as a (small) `Value` and checked with the schema itself, so the schema stays the
//! one judge of validity and of its messages (see [`super::parse`]).
//!
//! # Memory
//!
//! A `serde_json::Value` costs about 25 times the text it holds; the file is never held as
//! one. Only the first refused document, segment and procedure are kept: the schema then
//! judges a *reduced* catalog (the root, that document's head, that segment, that procedure),
//! and the pointer of its first error is mapped back to the real indices. The message is the
//! one the schema gives for the whole file, with the same precedence: syntax, then the schema,
//! then the rules, each in document order. A 62.7 MiB catalog of 1.6 million procedures opens
//! with a peak of 2.7 times its size (it was 25 times) and its table keeps 1.5 times.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::parse::{
    Catalog, CatalogDocument, CatalogError, CatalogSegment, Validators, field, permissions_of,
    procedure_rule_broken, read_procedure, read_segment, repeated_segment, text, validators,
};
use crate::providers::table::TableBuilder;
use crate::session::{Address, ProcedureSource};

/// A field of an item: text borrowed from the input where it has no escapes, a non-negative
/// integer, or any other JSON value.
pub(super) enum Scalar<'de> {
    Text(Cow<'de, str>),
    Count(u64),
    Other(Value),
}

impl Scalar<'_> {
    fn into_value(self) -> Value {
        match self {
            Scalar::Text(text) => Value::String(text.into_owned()),
            Scalar::Count(count) => Value::from(count),
            Scalar::Other(value) => value,
        }
    }
}

/// The keys the schema allows in a procedure, in the order [`Fields::values`] holds them.
pub(super) const PROCEDURE_KEYS: &[&str] = &["address", "name", "raw_name", "size", "segment"];

/// The keys the schema allows in a segment.
pub(super) const SEGMENT_KEYS: &[&str] = &["name", "address", "size", "permissions"];

/// An item (a procedure or a segment) read as an object: its known fields (the last of
/// repeated keys wins, as in a `Value`) and the names of the others.
pub(super) struct Fields<'de> {
    keys: &'static [&'static str],
    pub(super) values: [Option<Scalar<'de>>; 5],
    pub(super) unknown: Vec<String>,
}

impl<'de> Fields<'de> {
    /// The text of the field at `index`, if it is a string.
    pub(super) fn text(&self, index: usize) -> Option<&str> {
        match &self.values[index] {
            Some(Scalar::Text(text)) => Some(text),
            _ => None,
        }
    }

    /// The item as a `Value` (unknown keys hold `null`: only their names matter to the schema,
    /// which allows no other keys).
    pub(super) fn into_value(self) -> Value {
        let mut map = Map::new();
        for (key, value) in self.keys.iter().zip(self.values) {
            if let Some(value) = value {
                map.insert((*key).to_owned(), value.into_value());
            }
        }
        for key in self.unknown {
            map.insert(key, Value::Null);
        }
        Value::Object(map)
    }
}

/// An array item: an object's fields, or a value of another type.
pub(super) enum Item<'de> {
    Fields(Fields<'de>),
    Whole(Value),
}

struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scalar<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other(Value::Bool(value)))
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other(Value::from(value)))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Count(value))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other(Value::from(value)))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Owned(value.to_owned())))
    }

    fn visit_borrowed_str<E: Error>(self, value: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Borrowed(value)))
    }

    fn visit_string<E: Error>(self, value: String) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Owned(value)))
    }

    fn visit_unit<E: Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Other(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
        Ok(Scalar::Other(Value::deserialize(
            SeqAccessDeserializer::new(seq),
        )?))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
        Ok(Scalar::Other(Value::deserialize(
            MapAccessDeserializer::new(map),
        )?))
    }
}

/// An object key, borrowed where it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cow<'de, str>, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object key")
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(value.to_owned()))
    }

    fn visit_borrowed_str<E: Error>(self, value: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(value))
    }

    fn visit_string<E: Error>(self, value: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(value))
    }
}

/// One item of `segments` or `procedures`.
struct ItemSeed {
    keys: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Item<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = Item<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item<'de>, A::Error> {
        let mut fields = Fields {
            keys: self.keys,
            values: Default::default(),
            unknown: Vec::new(),
        };
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match self.keys.iter().position(|known| *known == key) {
                Some(index) => fields.values[index] = Some(map.next_value_seed(ScalarSeed)?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                    fields.unknown.push(key.into_owned());
                }
            }
        }
        Ok(Item::Fields(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Item<'de>, A::Error> {
        Ok(Item::Whole(Value::deserialize(
            SeqAccessDeserializer::new(seq),
        )?))
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::Bool(value)))
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::from(value)))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::from(value)))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::from(value)))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::from(value)))
    }

    fn visit_unit<E: Error>(self) -> Result<Item<'de>, E> {
        Ok(Item::Whole(Value::Null))
    }
}

/// Where the elements of an array go, one at a time.
trait Elements {
    /// Reads the next element; `false` at the end of the array.
    fn next<'de, A: SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<bool, A::Error>;
}

/// An array streamed into `E`, or (`Some`) a value of another type, kept whole.
struct ArrayOr<'a, E>(&'a mut E);

impl<'de, E: Elements> DeserializeSeed<'de> for ArrayOr<'_, E> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<Value>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, E: Elements> Visitor<'de> for ArrayOr<'_, E> {
    type Value = Option<Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Value>, A::Error> {
        while self.0.next(&mut seq)? {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Value>, A::Error> {
        Ok(Some(Value::deserialize(MapAccessDeserializer::new(map))?))
    }

    fn visit_bool<E2: Error>(self, value: bool) -> Result<Option<Value>, E2> {
        Ok(Some(Value::Bool(value)))
    }

    fn visit_i64<E2: Error>(self, value: i64) -> Result<Option<Value>, E2> {
        Ok(Some(Value::from(value)))
    }

    fn visit_u64<E2: Error>(self, value: u64) -> Result<Option<Value>, E2> {
        Ok(Some(Value::from(value)))
    }

    fn visit_f64<E2: Error>(self, value: f64) -> Result<Option<Value>, E2> {
        Ok(Some(Value::from(value)))
    }

    fn visit_str<E2: Error>(self, value: &str) -> Result<Option<Value>, E2> {
        Ok(Some(Value::from(value)))
    }

    fn visit_unit<E2: Error>(self) -> Result<Option<Value>, E2> {
        Ok(Some(Value::Null))
    }
}

struct Procedures<'a> {
    walk: &'a Walk,
    document: &'a mut DocumentState,
    index: usize,
}

impl Elements for Procedures<'_> {
    fn next<'de, A: SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<bool, A::Error> {
        if !self.document.wants_procedures() {
            return Ok(seq.next_element::<IgnoredAny>()?.is_some());
        }
        let Some(item) = seq.next_element_seed(ItemSeed {
            keys: PROCEDURE_KEYS,
        })?
        else {
            return Ok(false);
        };
        self.document.procedure(self.walk, self.index, item);
        self.index += 1;
        Ok(true)
    }
}

struct Segments<'a> {
    walk: &'a Walk,
    document: &'a mut DocumentState,
    index: usize,
}

impl Elements for Segments<'_> {
    fn next<'de, A: SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<bool, A::Error> {
        if !self.document.wants_segments() {
            return Ok(seq.next_element::<IgnoredAny>()?.is_some());
        }
        let Some(item) = seq.next_element_seed(ItemSeed { keys: SEGMENT_KEYS })? else {
            return Ok(false);
        };
        self.document.segment(self.walk, self.index, item);
        self.index += 1;
        Ok(true)
    }
}

/// One element of `documents`.
struct DocumentSeed<'a> {
    walk: &'a mut Walk,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if !self.walk.checking() {
            while map.next_key::<IgnoredAny>()?.is_some() {
                map.next_value::<IgnoredAny>()?;
            }
            return Ok(());
        }
        let mut document = self.walk.begin_document(self.index);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = match &*key {
                "procedures" => {
                    document.restart_procedures();
                    let mut elements = Procedures {
                        walk: self.walk,
                        document: &mut document,
                        index: 0,
                    };
                    map.next_value_seed(ArrayOr(&mut elements))?
                        .unwrap_or(Value::Array(Vec::new()))
                }
                "segments" => {
                    document.restart_segments();
                    let mut elements = Segments {
                        walk: self.walk,
                        document: &mut document,
                        index: 0,
                    };
                    map.next_value_seed(ArrayOr(&mut elements))?
                        .unwrap_or(Value::Array(Vec::new()))
                }
                "name" | "format" | "architecture" => map.next_value::<Value>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    Value::Null
                }
            };
            document.head.insert(key.into_owned(), value);
        }
        self.walk.end_document(document);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let value = Value::deserialize(SeqAccessDeserializer::new(seq))?;
        self.walk.whole_document(self.index, value);
        Ok(())
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::Bool(value));
        Ok(())
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::from(value));
        Ok(())
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::from(value));
        Ok(())
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::from(value));
        Ok(())
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::from(value));
        Ok(())
    }

    fn visit_unit<E: Error>(self) -> Result<(), E> {
        self.walk.whole_document(self.index, Value::Null);
        Ok(())
    }
}

struct Documents<'a> {
    walk: &'a mut Walk,
    index: usize,
}

impl Elements for Documents<'_> {
    fn next<'de, A: SeqAccess<'de>>(&mut self, seq: &mut A) -> Result<bool, A::Error> {
        let seed = DocumentSeed {
            walk: self.walk,
            index: self.index,
        };
        if seq.next_element_seed(seed)?.is_none() {
            return Ok(false);
        }
        self.index += 1;
        self.walk.counted_document();
        Ok(true)
    }
}

/// The whole catalog: the root object key by key (`documents` streamed), or any other value
/// kept whole. Returns the root with each streamed array replaced by `[]`.
pub(super) struct RootSeed<'a> {
    pub(super) walk: &'a mut Walk,
}

impl<'de> DeserializeSeed<'de> for RootSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RootSeed<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut root = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = match &*key {
                "documents" => {
                    self.walk.begin_documents();
                    let mut elements = Documents {
                        walk: self.walk,
                        index: 0,
                    };
                    match map.next_value_seed(ArrayOr(&mut elements))? {
                        Some(value) => {
                            self.walk.documents_not_streamed();
                            value
                        }
                        None => Value::Array(Vec::new()),
                    }
                }
                "schema" | "version" | "producer" => map.next_value::<Value>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    Value::Null
                }
            };
            root.insert(key.into_owned(), value);
        }
        Ok(Value::Object(root))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_unit<E: Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// Parses and validates catalog text (UTF-8, with or without a byte-order mark).
pub(crate) fn parse_catalog(text: &[u8]) -> Result<Catalog, CatalogError> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let mut walk = Walk::new(validators()?);
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let root = RootSeed { walk: &mut walk }
        .deserialize(&mut deserializer)
        .and_then(|root| deserializer.end().map(|()| root))
        .map_err(|error| CatalogError::Json {
            line: error.line(),
            column: error.column(),
            message: error.to_string(),
        })?;
    if let Some(error) = walk.schema_error(root) {
        return Err(error);
    }
    if let Some(error) = walk.rule.take() {
        return Err(error);
    }
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (index, document) in walk.documents.iter().enumerate() {
        if let Some(first) = names.insert(&document.name, index) {
            return Err(field(
                &format!("/documents/{index}/name"),
                format!(
                    "document name {:?} repeats /documents/{first}/name",
                    crate::text::Quoted::new(&document.name)
                ),
            ));
        }
    }
    Ok(Catalog {
        documents: walk.documents,
    })
}

/// The first document the schema refuses something in, reduced to what can be refused.
struct Refused {
    index: usize,
    /// The document (its head, streamed arrays as `[]`), or the value in its place.
    document: Value,
    segment: Option<(usize, Value)>,
    procedure: Option<(usize, Value)>,
}

/// What the walk over a catalog has found so far.
pub(super) struct Walk {
    validators: &'static Validators,
    /// Whether `documents` was an array, streamed element by element.
    streamed: bool,
    count: usize,
    refused: Option<Refused>,
    /// The first rule broken, in document order.
    rule: Option<CatalogError>,
    documents: Vec<CatalogDocument>,
}

impl Walk {
    fn new(validators: &'static Validators) -> Walk {
        Walk {
            validators,
            streamed: false,
            count: 0,
            refused: None,
            rule: None,
            documents: Vec::new(),
        }
    }

    /// Whether anything still needs checking: once a document is refused, later ones cannot
    /// change the first schema error.
    pub(super) fn checking(&self) -> bool {
        self.refused.is_none()
    }

    /// Whether documents are still built (nothing refused, no rule broken).
    fn building(&self) -> bool {
        self.refused.is_none() && self.rule.is_none()
    }

    /// A `documents` key starts (again: the last one wins, as in a `Value`).
    pub(super) fn begin_documents(&mut self) {
        self.streamed = true;
        self.count = 0;
        self.refused = None;
        self.rule = None;
        self.documents.clear();
    }

    pub(super) fn documents_not_streamed(&mut self) {
        self.streamed = false;
    }

    pub(super) fn counted_document(&mut self) {
        self.count += 1;
    }

    pub(super) fn begin_document(&self, index: usize) -> DocumentState {
        DocumentState {
            index,
            building: self.building(),
            head: Map::new(),
            segments: Vec::new(),
            segment_rule: None,
            refused_segment: None,
            procedures: TableBuilder::default(),
            procedure_rule: None,
            refused_procedure: None,
        }
    }

    /// A document that is not an object.
    pub(super) fn whole_document(&mut self, index: usize, value: Value) {
        if self.checking() {
            self.refuse(Refused {
                index,
                document: value,
                segment: None,
                procedure: None,
            });
        }
    }

    fn refuse(&mut self, refused: Refused) {
        self.refused = Some(refused);
        self.documents = Vec::new();
    }

    pub(super) fn end_document(&mut self, document: DocumentState) {
        let DocumentState {
            index,
            building,
            head,
            segments,
            segment_rule,
            refused_segment,
            procedures,
            procedure_rule,
            refused_procedure,
        } = document;
        let head = Value::Object(head);
        if refused_segment.is_some()
            || refused_procedure.is_some()
            || !self.validators.document.is_valid(&head)
        {
            self.refuse(Refused {
                index,
                document: head,
                segment: refused_segment,
                procedure: refused_procedure,
            });
            return;
        }
        if !building || !self.building() {
            return;
        }
        let pointer = format!("/documents/{index}");
        let broken = segment_rule
            .or_else(|| repeated_segment(&segments, &pointer))
            .or_else(|| procedure_rule_broken(&procedures, &segments, procedure_rule, &pointer));
        if let Some(error) = broken {
            self.rule = Some(error);
            self.documents = Vec::new();
            return;
        }
        self.documents.push(CatalogDocument {
            name: text(&head, "name").unwrap_or_default(),
            format: text(&head, "format"),
            architecture: text(&head, "architecture"),
            segments,
            procedures,
        });
    }

    /// The first error the schema finds in the catalog, judged on `root` with the refused
    /// document (if any) in place of `documents`.
    fn schema_error(&mut self, mut root: Value) -> Option<CatalogError> {
        let refused = self.refused.take();
        let mut mapping = None;
        if self.streamed
            && let Some(map) = root.as_object_mut()
        {
            let documents = match refused {
                Some(refused) => {
                    let mut document = refused.document;
                    if let Some(map) = document.as_object_mut() {
                        if let Some((_, segment)) = &refused.segment {
                            map.insert("segments".to_owned(), Value::Array(vec![segment.clone()]));
                        }
                        if let Some((_, procedure)) = &refused.procedure {
                            map.insert(
                                "procedures".to_owned(),
                                Value::Array(vec![procedure.clone()]),
                            );
                        }
                    }
                    mapping = Some((
                        refused.index,
                        refused.segment.map(|(index, _)| index),
                        refused.procedure.map(|(index, _)| index),
                    ));
                    vec![document]
                }
                None if self.count == 0 => Vec::new(),
                None => vec![serde_json::json!({"name": "valid", "procedures": []})],
            };
            map.insert("documents".to_owned(), Value::Array(documents));
        }
        let error = self.validators.whole.iter_errors(&root).next()?;
        let pointer = error.instance_path().as_str().to_owned();
        let pointer = match mapping {
            Some((document, segment, procedure)) => {
                real_pointer(&pointer, document, segment, procedure)
            }
            None => pointer,
        };
        Some(field(&pointer, crate::schemas::message(&error)))
    }
}

/// `pointer` into the reduced catalog, as a pointer into the real one: document 0 is
/// `document`, its segment 0 and procedure 0 are `segment` and `procedure`.
fn real_pointer(
    pointer: &str,
    document: usize,
    segment: Option<usize>,
    procedure: Option<usize>,
) -> String {
    let mut parts: Vec<String> = pointer.split('/').map(str::to_owned).collect();
    if parts.get(1).map(String::as_str) == Some("documents") && parts.get(2).is_some() {
        parts[2] = document.to_string();
        let item = match parts.get(3).map(String::as_str) {
            Some("segments") => segment,
            Some("procedures") => procedure,
            _ => None,
        };
        if let (Some(index), Some(_)) = (item, parts.get(4)) {
            parts[4] = index.to_string();
        }
    }
    parts.join("/")
}

/// One document while the walk is inside it.
pub(super) struct DocumentState {
    index: usize,
    building: bool,
    /// The keys other than the streamed arrays (`[]` in their place, `null` for unknown keys).
    pub(super) head: Map<String, Value>,
    segments: Vec<CatalogSegment>,
    segment_rule: Option<CatalogError>,
    refused_segment: Option<(usize, Value)>,
    procedures: TableBuilder,
    /// The first procedure whose size breaks a rule: its index and the error.
    procedure_rule: Option<(usize, CatalogError)>,
    refused_procedure: Option<(usize, Value)>,
}

impl DocumentState {
    /// A `procedures` key starts (again).
    pub(super) fn restart_procedures(&mut self) {
        self.procedures = TableBuilder::default();
        self.procedure_rule = None;
        self.refused_procedure = None;
    }

    /// A `segments` key starts (again).
    pub(super) fn restart_segments(&mut self) {
        self.segments.clear();
        self.segment_rule = None;
        self.refused_segment = None;
    }

    /// Whether procedures still need reading (none refused yet).
    pub(super) fn wants_procedures(&self) -> bool {
        self.refused_procedure.is_none()
    }

    /// Whether segments still need reading (none refused yet).
    pub(super) fn wants_segments(&self) -> bool {
        self.refused_segment.is_none()
    }

    pub(super) fn procedure(&mut self, walk: &Walk, index: usize, item: Item<'_>) {
        let building = self.building && self.procedure_rule.is_none();
        let value = match item {
            Item::Fields(fields) => {
                if let Some(procedure) = fast_procedure(&fields) {
                    if building {
                        self.add(procedure);
                    }
                    return;
                }
                fields.into_value()
            }
            Item::Whole(value) => value,
        };
        if !walk.validators.procedure.is_valid(&value) {
            self.refused_procedure = Some((index, value));
            return;
        }
        if building {
            let pointer = format!("/documents/{}/procedures/{index}", self.index);
            match read_procedure(&value, &pointer) {
                Ok(procedure) => self.add(FastProcedure {
                    address: procedure.address,
                    name: procedure.name.as_deref(),
                    raw_name: procedure.raw_name.as_deref(),
                    size: procedure.size,
                    segment: procedure.segment.as_deref(),
                }),
                Err(error) => self.procedure_rule = Some((index, error)),
            }
        }
    }

    fn add(&mut self, procedure: FastProcedure<'_>) {
        let address = procedure.address.value();
        let name = match (procedure.name, procedure.raw_name) {
            (None, None) => None,
            (Some(name), raw) => Some((name, raw.unwrap_or(name))),
            (None, Some(raw)) => Some((raw, raw)),
        };
        self.procedures
            .add_named(address, ProcedureSource::Catalog, name, procedure.size);
        if let Some(segment) = procedure.segment {
            self.procedures.place(address, segment);
        }
    }

    pub(super) fn segment(&mut self, walk: &Walk, index: usize, item: Item<'_>) {
        let building = self.building && self.segment_rule.is_none();
        let value = match item {
            Item::Fields(fields) => {
                if let Some(segment) = fast_segment(&fields) {
                    if building {
                        self.segments.push(segment);
                    }
                    return;
                }
                fields.into_value()
            }
            Item::Whole(value) => value,
        };
        if !walk.validators.segment.is_valid(&value) {
            self.refused_segment = Some((index, value));
            return;
        }
        if building {
            let pointer = format!("/documents/{}/segments/{index}", self.index);
            match read_segment(&value, &pointer) {
                Ok(segment) => self.segments.push(segment),
                Err(error) => self.segment_rule = Some(error),
            }
        }
    }
}

/// A procedure as the table takes it, its text borrowed.
struct FastProcedure<'a> {
    address: Address,
    name: Option<&'a str>,
    raw_name: Option<&'a str>,
    size: Option<u64>,
    segment: Option<&'a str>,
}

/// Whether `text` is a valid `name` of the schema: 1 to 4,096 characters.
fn is_name(text: &str) -> bool {
    !text.is_empty() && (text.len() <= 4096 || text.chars().count() <= 4096)
}

/// An optional name field: `Ok(None)` when absent, `Err` when the schema may refuse it.
fn optional_name<'a>(fields: &'a Fields<'_>, index: usize) -> Result<Option<&'a str>, ()> {
    match (&fields.values[index], fields.text(index)) {
        (None, _) => Ok(None),
        (Some(_), Some(text)) if is_name(text) => Ok(Some(text)),
        _ => Err(()),
    }
}

/// `fields` as a procedure when it certainly satisfies the schema; `None` when the schema
/// must judge it (the check is never looser than the schema).
fn fast_procedure<'a>(fields: &'a Fields<'_>) -> Option<FastProcedure<'a>> {
    if !fields.unknown.is_empty() {
        return None;
    }
    let address = Address::parse(fields.text(0)?).ok()?;
    let size = match &fields.values[3] {
        None => None,
        Some(Scalar::Count(size)) if *size >= 1 => Some(*size),
        Some(_) => return None,
    };
    Some(FastProcedure {
        address,
        name: optional_name(fields, 1).ok()?,
        raw_name: optional_name(fields, 2).ok()?,
        size,
        segment: optional_name(fields, 4).ok()?,
    })
}

/// `fields` as a segment when it certainly satisfies the schema.
fn fast_segment(fields: &Fields<'_>) -> Option<CatalogSegment> {
    if !fields.unknown.is_empty() {
        return None;
    }
    let name = fields.text(0).filter(|name| is_name(name))?;
    let address = Address::parse(fields.text(1)?).ok()?;
    let Some(Scalar::Count(size)) = &fields.values[2] else {
        return None;
    };
    let permissions = match &fields.values[3] {
        None => "r--",
        Some(_) => fields.text(3).filter(|text| {
            let bytes = text.as_bytes();
            bytes.len() == 3
                && matches!(bytes[0], b'r' | b'-')
                && matches!(bytes[1], b'w' | b'-')
                && matches!(bytes[2], b'x' | b'-')
        })?,
    };
    Some(CatalogSegment {
        name: name.to_owned(),
        address,
        size: *size,
        permissions: permissions_of(permissions),
    })
}
