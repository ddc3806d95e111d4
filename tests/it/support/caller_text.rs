//! Caller text in answers: a distinctive 4,096-character value, the calls that put it in
//! every argument of every tool (enumerated from the catalog's input schemas, never from a
//! list written here), and the check that an answer quotes at most 64 consecutive characters
//! of it (the crate's one quoting rule, `text::cut`).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

/// Characters of the hostile value: the longest text argument the schemas accept.
pub const LONG_CHARS: usize = 4096;

/// Most consecutive characters of caller text an answer may quote.
pub const QUOTED_CHARS: usize = 64;

/// A 4,096-character ASCII value no answer contains by chance: letters and digits from a
/// fixed pseudo-random sequence (`seed` picks the sequence), so any 65 consecutive characters
/// of it found in an answer were copied from it.
pub fn long_value(seed: u64) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..LONG_CHARS)
        .map(|_| {
            // xorshift64*: deterministic and spread enough for a test value.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let index = state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 58;
            char::from(ALPHABET[index as usize % ALPHABET.len()])
        })
        .collect()
}

/// The windows of `QUOTED_CHARS + 1` characters of an ASCII value, to look for in answers.
pub struct Echoes<'a> {
    windows: HashSet<&'a [u8]>,
}

impl<'a> Echoes<'a> {
    /// The windows of `value` (ASCII, as [`long_value`] makes it).
    pub fn of(value: &'a str) -> Echoes<'a> {
        assert!(value.is_ascii());
        Echoes {
            windows: value.as_bytes().windows(QUOTED_CHARS + 1).collect(),
        }
    }

    /// Where `text` quotes more than [`QUOTED_CHARS`] consecutive characters of the value: the
    /// byte offset of the first such run, if any. (The value is ASCII, so a run of its bytes is
    /// a run of its characters.)
    pub fn first_in(&self, text: &str) -> Option<usize> {
        text.as_bytes()
            .windows(QUOTED_CHARS + 1)
            .position(|window| self.windows.contains(window))
    }

    /// What is wrong when `text` quotes more than [`QUOTED_CHARS`] characters of the value:
    /// `what`, and the text around the first such run.
    pub fn problem(&self, what: &str, text: &str) -> Option<String> {
        let at = self.first_in(text)?;
        let start = text.floor_char_boundary(at.saturating_sub(40));
        let end = text.ceil_char_boundary((at + 100).min(text.len()));
        Some(format!(
            "{what}: the answer quotes more than {QUOTED_CHARS} characters of the value at byte \
             {at} of {}: ...{}...",
            text.len(),
            &text[start..end]
        ))
    }
}

/// The forms the hostile value takes in one argument, whatever the argument's type: the
/// string itself (for an integer, a string where a number is expected), an array of such
/// strings, an object with it as key and value, and an array of such objects.
pub fn forms(value: &str) -> Vec<(&'static str, Value)> {
    let keyed = || {
        let mut object = Map::new();
        object.insert(value.to_owned(), json!(value));
        Value::Object(object)
    };
    vec![
        ("a string", json!(value)),
        ("an array of strings", json!([value, value])),
        ("an object", keyed()),
        ("an array of objects", json!([keyed(), keyed()])),
    ]
}

/// One call of the walk: a tool, the argument holding the hostile value (or `None` for an
/// argument name the tool does not have), the form, and the arguments.
pub struct Case {
    /// The tool.
    pub tool: String,
    /// The argument that holds the value; `None` when the value is an extra argument's name.
    pub argument: Option<String>,
    /// How the value is given (see [`forms`]).
    pub form: &'static str,
    /// The arguments of the call.
    pub arguments: Map<String, Value>,
}

impl Case {
    /// Names the case in a failure message.
    pub fn describe(&self) -> String {
        let argument = self.argument.as_deref().unwrap_or("<an extra argument>");
        format!("{}({argument} = {})", self.tool, self.form)
    }
}

/// Every call of the walk over a tool: each argument of its input schema in each of the
/// [`forms`] of `value`, its other required arguments filled in from their schemas (free text
/// from `fillers`, one call per filler), plus an extra argument named `value`.
pub fn cases(tool: &str, schema: &Value, value: &str, fillers: &[String]) -> Vec<Case> {
    let mut cases = Vec::new();
    let properties = schema["properties"].as_object().expect("properties");
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .map(|name| name.as_str().expect("a required name"))
        .collect();
    for (argument, _) in properties {
        let others: Vec<(&String, &Value)> = properties
            .iter()
            .filter(|(name, _)| *name != argument && required.contains(&name.as_str()))
            .collect();
        let needs_text = others.iter().any(|(_, schema)| is_free_text(schema));
        let fillers: &[String] = if needs_text { fillers } else { &fillers[..1] };
        for filler in fillers {
            for (form, hostile) in forms(value) {
                let mut arguments: Map<String, Value> = others
                    .iter()
                    .map(|(name, schema)| ((*name).clone(), example(schema, filler)))
                    .collect();
                arguments.insert(argument.clone(), hostile);
                cases.push(Case {
                    tool: tool.to_owned(),
                    argument: Some(argument.clone()),
                    form,
                    arguments,
                });
            }
        }
    }
    let mut arguments: Map<String, Value> = required
        .iter()
        .map(|name| ((*name).to_owned(), example(&properties[*name], &fillers[0])))
        .collect();
    arguments.insert(value.to_owned(), json!(value));
    cases.push(Case {
        tool: tool.to_owned(),
        argument: None,
        form: "a string",
        arguments,
    });
    cases
}

/// Whether a parameter schema takes free text (a string with no pattern and no options).
fn is_free_text(schema: &Value) -> bool {
    schema["type"] == "string" && schema.get("pattern").is_none() && schema.get("enum").is_none()
}

/// A value a parameter's schema accepts: its default or minimum, its first option, the
/// simplest text its pattern matches, the fewest items it allows, an empty object, or
/// `filler` for free text.
fn example(schema: &Value, filler: &str) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    match schema["type"].as_str() {
        Some("integer") => schema["minimum"].clone(),
        Some("string") => match schema.get("pattern").and_then(Value::as_str) {
            Some(pattern) => json!(matching(pattern)),
            None => json!(filler),
        },
        Some("array") => {
            let count = schema["minItems"].as_u64().unwrap_or(0);
            Value::Array(
                (0..count)
                    .map(|_| example(&schema["items"], filler))
                    .collect(),
            )
        }
        Some("object") => json!({}),
        other => panic!("no example for a parameter of type {other:?}: {schema}"),
    }
}

/// The shortest text matching a pattern of the form `^LITERAL[CLASS]{MIN,MAX}$` (the form the
/// catalog's patterns take): the literal, then MIN times the class's first character.
pub fn matching(pattern: &str) -> String {
    let body = pattern
        .strip_prefix('^')
        .and_then(|p| p.strip_suffix('$'))
        .unwrap_or_else(|| unsupported(pattern));
    let (literal, rest) = body.split_once('[').unwrap_or_else(|| unsupported(pattern));
    let (class, repeat) = rest.split_once(']').unwrap_or_else(|| unsupported(pattern));
    let first = class.chars().next().unwrap_or_else(|| unsupported(pattern));
    let minimum: usize = repeat
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .next()
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| unsupported(pattern));
    format!("{literal}{}", first.to_string().repeat(minimum))
}

fn unsupported(pattern: &str) -> ! {
    panic!("extend `matching` for the pattern {pattern:?}")
}
