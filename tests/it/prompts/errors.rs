//! Every user-visible error of the prompts layer, pinned by snapshot: the messages name the
//! prompt and the argument, and become JSON-RPC `-32602` messages in the mcp layer.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use rea::prompts::{
    ArgumentDefinition, BinarySession, DefinitionError, MAX_PROMPT_VALUE_CHARS, PromptDefinition,
    PromptError, PromptRegistry, ToolAvailability,
};

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        crate::support::snapshots::settings().bind(|| {
            insta::assert_snapshot!(format!("prompt_errors__{}", $name), $text);
        })
    };
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn render_error(prompt: &str, arguments: &BTreeMap<String, String>) -> PromptError {
    let tools = ToolAvailability::new(["open_binary"], BinarySession::Closed);
    PromptRegistry::with_builtin()
        .render(prompt, arguments, &tools)
        .expect_err("request must be rejected")
}

#[test]
fn unknown_prompt() {
    let error = render_error("investigate_everything", &args(&[]));
    assert_eq!(
        error,
        PromptError::UnknownPrompt {
            prompt: "investigate_everything".into()
        }
    );
    snapshot!("unknown_prompt", error.to_string());
}

#[test]
fn unknown_prompt_with_a_hostile_name_is_escaped_and_bounded() {
    let name = format!("x\n\"`\u{2028}{}", "y".repeat(10_000));
    let error = render_error(&name, &args(&[]));
    assert_eq!(
        error,
        PromptError::UnknownPrompt {
            prompt: name.into()
        }
    );
    snapshot!("unknown_prompt_hostile_name", error.to_string());
}

#[test]
fn unknown_argument() {
    let error = render_error(
        "trace_crash",
        &args(&[("symptom", "SIGSEGV"), ("function", "main")]),
    );
    assert_eq!(
        error,
        PromptError::UnknownArgument {
            prompt: "trace_crash".into(),
            argument: "function".into()
        }
    );
    snapshot!("unknown_argument", error.to_string());
}

#[test]
fn missing_required_argument() {
    let error = render_error(
        "compare_application_versions",
        &args(&[("baseline", "v1.zip")]),
    );
    assert_eq!(
        error,
        PromptError::MissingArgument {
            prompt: "compare_application_versions".into(),
            argument: "candidate".into()
        }
    );
    snapshot!("missing_required_argument", error.to_string());
}

#[test]
fn value_too_long() {
    let long = "é".repeat(MAX_PROMPT_VALUE_CHARS + 1);
    let error = render_error("verify_reconstruction", &args(&[("specification", &long)]));
    assert_eq!(
        error,
        PromptError::ValueTooLong {
            prompt: "verify_reconstruction".into(),
            argument: "specification".into(),
            chars: MAX_PROMPT_VALUE_CHARS + 1
        }
    );
    snapshot!("value_too_long", error.to_string());
}

#[test]
fn a_value_at_the_bound_is_accepted() {
    // Counted in scalar values, not bytes: 65,536 three-byte characters are fine.
    let at_bound = "한".repeat(MAX_PROMPT_VALUE_CHARS);
    let tools = ToolAvailability::default();
    let rendered = PromptRegistry::with_builtin()
        .render("trace_crash", &args(&[("symptom", &at_bound)]), &tools)
        .expect("a value of exactly the bound is valid");
    assert!(rendered.data_json().contains(&at_bound));
}

#[test]
fn an_unknown_argument_is_reported_before_a_missing_one() {
    // Validation order: unknown argument, then missing required argument, then length.
    let long = "x".repeat(MAX_PROMPT_VALUE_CHARS + 1);
    let error = render_error(
        "investigate_feature",
        &args(&[("zzz", ""), ("document", &long)]),
    );
    assert!(
        matches!(error, PromptError::UnknownArgument { ref argument, .. } if argument == "zzz")
    );
    let error = render_error("investigate_feature", &args(&[("document", &long)]));
    assert!(
        matches!(error, PromptError::MissingArgument { ref argument, .. } if argument == "feature")
    );
}

#[test]
fn argument_family_errors() {
    let registry = PromptRegistry::with_builtin();
    let unknown_prompt = registry.argument_family("nope", "document").unwrap_err();
    snapshot!("argument_family_unknown_prompt", unknown_prompt.to_string());
    let unknown_argument = registry
        .argument_family("trace_crash", "unknown")
        .unwrap_err();
    snapshot!(
        "argument_family_unknown_argument",
        unknown_argument.to_string()
    );
}

#[test]
fn invalid_cursor() {
    let registry = PromptRegistry::with_builtin();
    let error = registry
        .page(Some("not-a-cursor"), NonZeroUsize::MIN)
        .unwrap_err();
    assert_eq!(error.cursor, "not-a-cursor");
    snapshot!("invalid_cursor", error.to_string());
}

fn definition(name: &str, arguments: &[&str]) -> PromptDefinition {
    PromptDefinition {
        name: name.into(),
        title: "Custom".into(),
        description: "An integrator's prompt.".into(),
        arguments: arguments
            .iter()
            .map(|name| ArgumentDefinition {
                name: (*name).into(),
                description: "An argument.".into(),
                required: false,
                family: None,
            })
            .collect(),
        workflow: vec![],
    }
}

#[test]
fn definition_errors() {
    let mut registry = PromptRegistry::new();
    let cases = [
        (
            "definition_empty_prompt_name",
            definition("", &[]),
            DefinitionError::EmptyPromptName,
        ),
        (
            "definition_empty_argument_name",
            definition("custom", &["a", ""]),
            DefinitionError::EmptyArgumentName {
                prompt: "custom".into(),
            },
        ),
        (
            "definition_duplicate_argument",
            definition("custom", &["a", "b", "a"]),
            DefinitionError::DuplicateArgument {
                prompt: "custom".into(),
                argument: "a".into(),
            },
        ),
    ];
    for (name, def, expected) in cases {
        let error = registry.register(def).unwrap_err();
        assert_eq!(error, expected);
        snapshot!(name, error.to_string());
    }
    assert!(
        registry.list().is_empty(),
        "a rejected definition is not registered"
    );
}
