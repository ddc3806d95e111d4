//! The rendering contract of prompts (docs/CONTRACT.md section 7), checked independently of
//! the renderer: shared by the rendering properties, the `prompt_render` fuzz target and the
//! replay of its saved inputs, so a fuzz finding replays as a plain test. Every check panics
//! with a message on violation.

use std::collections::BTreeMap;

use crate::prompts::{
    BinarySession, MAX_PROMPT_VALUE_CHARS, PromptDefinition, PromptError, RenderedPrompt,
    ToolAvailability, builtin_prompts, render,
};

/// The lines around the data line, as the contract fixes them.
const FENCE_OPEN: &str = "```json";
const FENCE_CLOSE: &str = "```";

/// Characters that must never appear raw in the data line.
const FORBIDDEN_IN_DATA: [char; 6] = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}', '`'];

/// Checks a successful rendering of `arguments` and returns the text outside the data line.
pub fn check_rendering(rendered: &RenderedPrompt, arguments: &BTreeMap<String, String>) -> String {
    let text = rendered.text();
    let (before, data, after) = split_on_data_line(text);
    assert_eq!(
        data,
        rendered.data_json(),
        "data_json() is not the fenced line"
    );
    let (own_before, own_after) = rendered.outside_data();
    assert_eq!(
        (before, after),
        (own_before, own_after),
        "outside_data() disagrees"
    );

    for forbidden in FORBIDDEN_IN_DATA {
        assert!(
            !data.contains(forbidden),
            "data line holds raw {forbidden:?}"
        );
    }
    assert!(
        !data.chars().any(|c| c.is_control() && c != ' '),
        "data line holds a raw control character"
    );
    let pairs = ordered_pairs(data);
    let keys: Vec<&String> = pairs.iter().map(|(key, _)| key).collect();
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "keys not strictly sorted: {keys:?}"
    );
    let parsed: BTreeMap<String, String> = pairs.into_iter().collect();
    assert_eq!(
        &parsed, arguments,
        "data line does not parse back to the arguments"
    );
    format!("{before}\u{0}{after}")
}

/// Splits `text` into the text before the data line, the data line and the text after it,
/// asserting there is exactly one fenced data block and that its body is a single line.
pub fn split_on_data_line(text: &str) -> (&str, &str, &str) {
    let open = format!("\n{FENCE_OPEN}\n");
    let mut opens = text.match_indices(&open);
    let (open_at, _) = opens.next().expect("no data block opening fence");
    assert!(opens.next().is_none(), "more than one data block");
    let data_start = open_at + open.len();
    let line_len = text[data_start..].find('\n').expect("data line never ends");
    let data_end = data_start + line_len;
    let after = &text[data_end..];
    assert!(
        after.starts_with(&format!("\n{FENCE_CLOSE}\n")),
        "the data line is not followed by the closing fence"
    );
    let fence_lines = text.lines().filter(|line| line.starts_with("```")).count();
    assert_eq!(fence_lines, 2, "fence lines outside the data block");
    (&text[..data_start], &text[data_start..data_end], after)
}

/// The members of a JSON object of strings, in the order written.
pub fn ordered_pairs(json: &str) -> Vec<(String, String)> {
    struct Pairs(Vec<(String, String)>);
    impl<'de> serde::Deserialize<'de> for Pairs {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = Pairs;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object of strings")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Pairs, A::Error> {
                    let mut pairs = Vec::new();
                    while let Some(pair) = map.next_entry()? {
                        pairs.push(pair);
                    }
                    Ok(Pairs(pairs))
                }
            }
            deserializer.deserialize_map(Visitor)
        }
    }
    match serde_json::from_str::<Pairs>(json) {
        Ok(Pairs(pairs)) => pairs,
        Err(error) => panic!("data line is not a JSON object of strings ({error}): {json}"),
    }
}

/// The same argument names with different values.
pub fn with_other_values(arguments: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    arguments
        .iter()
        .map(|(name, value)| (name.clone(), format!("other {}", value.len())))
        .collect()
}

/// Renders `arguments` and the same names with other values, and checks that both meet the
/// contract and agree outside the data line.
pub fn check_value_independence(
    def: &PromptDefinition,
    arguments: &BTreeMap<String, String>,
    others: &BTreeMap<String, String>,
    tools: &ToolAvailability,
) {
    let first = render(def, arguments, tools).expect("valid arguments rejected");
    let second = render(def, others, tools).expect("valid arguments rejected");
    assert_eq!(
        check_rendering(&first, arguments),
        check_rendering(&second, others),
        "text outside the data block depends on argument values"
    );
    assert_eq!(first.description(), second.description());
}

/// The first error the contract requires for `arguments`, if any.
pub fn expected_error(
    def: &PromptDefinition,
    arguments: &BTreeMap<String, String>,
) -> Option<PromptError> {
    let prompt = def.name.clone();
    if let Some(name) = arguments.keys().find(|name| def.argument(name).is_none()) {
        return Some(PromptError::UnknownArgument {
            prompt: prompt.into(),
            argument: name.clone().into(),
        });
    }
    if let Some(argument) = def
        .arguments
        .iter()
        .find(|a| a.required && !arguments.contains_key(&a.name))
    {
        return Some(PromptError::MissingArgument {
            prompt: prompt.into(),
            argument: argument.name.clone().into(),
        });
    }
    arguments.iter().find_map(|(name, value)| {
        let chars = value.chars().count();
        (chars > MAX_PROMPT_VALUE_CHARS).then(|| PromptError::ValueTooLong {
            prompt: prompt.clone().into(),
            argument: name.clone().into(),
            chars,
        })
    })
}

/// One fuzz input, interpreted as a rendering request, checked against the contract.
///
/// Layout: byte 0 picks the built-in prompt; bytes 1-2 are a little-endian mask (bit i offers
/// workflow tool i, bit 14 offers `open_binary`, bit 15 opens a binary); the rest is split on
/// 0xFF into segments whose first byte picks an argument of the prompt (or, past the last
/// argument, makes the rest of the segment a raw argument name with an empty value) and whose
/// remaining bytes, decoded lossily as UTF-8, are the value.
pub fn check_fuzz_input(data: &[u8]) {
    let prompts = builtin_prompts();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let def = &prompts[usize::from(pick) % prompts.len()];
    let (mask, rest) = match rest {
        [low, high, rest @ ..] => (u16::from_le_bytes([*low, *high]), rest),
        _ => (0, &[][..]),
    };
    let tools = fuzz_availability(def, mask);

    let mut arguments = BTreeMap::new();
    for segment in rest.split(|&byte| byte == 0xFF).filter(|s| !s.is_empty()) {
        let index = usize::from(segment[0]) % (def.arguments.len() + 1);
        let text = String::from_utf8_lossy(&segment[1..]).into_owned();
        match def.arguments.get(index) {
            Some(argument) => arguments.insert(argument.name.clone(), text),
            None => arguments.insert(text, String::new()),
        };
    }

    match expected_error(def, &arguments) {
        Some(expected) => {
            assert_eq!(render(def, &arguments, &tools), Err(expected));
        }
        None => check_value_independence(def, &arguments, &with_other_values(&arguments), &tools),
    }
}

fn fuzz_availability(def: &PromptDefinition, mask: u16) -> ToolAvailability {
    let mut offered: Vec<&str> = def
        .workflow
        .iter()
        .enumerate()
        .filter(|(index, _)| *index < 14 && mask & (1 << index) != 0)
        .map(|(_, tool)| tool.as_str())
        .collect();
    if mask & (1 << 14) != 0 {
        offered.push("open_binary");
    }
    let binary = if mask & (1 << 15) != 0 {
        BinarySession::Open
    } else {
        BinarySession::Closed
    };
    ToolAvailability::new(offered, binary)
}
