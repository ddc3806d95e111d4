//! The six built-in prompts match docs/CONTRACT.md section 7: arguments, families, workflows,
//! titles and descriptions; and their `prompts/list` shape is pinned by snapshot.

use rea::core::Family;
use rea::prompts::{DEFAULT_PAGE_SIZE, PromptDefinition, PromptRegistry, builtin_prompts};

/// (prompt, required arguments, optional arguments with families), as docs/CONTRACT.md section 7
/// lists them.
type Row = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, Family)],
);

const ARGUMENT_TABLE: &[Row] = &[
    (
        "investigate_feature",
        &["feature"],
        &[
            ("document", Family::Document),
            ("procedure", Family::Procedure),
            ("provider", Family::Provider),
        ],
    ),
    (
        "compare_application_versions",
        &["baseline", "candidate"],
        &[
            ("baseline_manifest", Family::ArtifactManifest),
            ("candidate_manifest", Family::ArtifactManifest),
            ("occurrence", Family::ArtifactOccurrence),
            ("capture", Family::ProcessCapture),
        ],
    ),
    (
        "verify_reconstruction",
        &["specification"],
        &[
            ("evidence", Family::Evidence),
            ("document", Family::Document),
            ("procedure", Family::Procedure),
        ],
    ),
    (
        "trace_crash",
        &["symptom"],
        &[
            ("document", Family::Document),
            ("procedure", Family::Procedure),
            ("capture", Family::ProcessCapture),
            ("provider", Family::Provider),
        ],
    ),
    (
        "audit_residual_unknowns",
        &[],
        &[
            ("unknown", Family::ResidualUnknown),
            ("evidence", Family::Evidence),
        ],
    ),
    (
        "prepare_bounded_process_capture",
        &["objective"],
        &[
            ("occurrence", Family::ArtifactOccurrence),
            ("document", Family::Document),
            ("procedure", Family::Procedure),
            ("prior_capture", Family::ProcessCapture),
        ],
    ),
];

/// docs/CONTRACT.md section 7, "Workflows", as written there.
const WORKFLOW_TABLE: &[(&str, &[&str])] = &[
    (
        "investigate_feature",
        &[
            "list_documents",
            "set_current_document",
            "search_strings",
            "xrefs_to",
            "search_procedures",
            "list_procedures",
            "procedure_info",
            "disassemble",
            "decompile",
            "callees",
            "callers",
            "read_bytes",
            "get_evidence",
            "annotate",
            "register_unknown",
        ],
    ),
    (
        "compare_application_versions",
        &[
            "inventory_artifacts",
            "list_artifact_occurrences",
            "compare_inventories",
            "open_binary",
            "compare_procedures",
            "list_imports",
            "list_procedures",
            "procedure_info",
            "search_strings",
            "get_evidence",
            "register_unknown",
        ],
    ),
    (
        "verify_reconstruction",
        &[
            "list_evidence",
            "get_evidence",
            "procedure_info",
            "disassemble",
            "decompile",
            "callees",
            "read_bytes",
            "verify_reconstruction",
            "annotate",
            "register_unknown",
            "resolve_unknown",
        ],
    ),
    (
        "trace_crash",
        &[
            "list_documents",
            "set_current_document",
            "search_procedures",
            "procedure_info",
            "disassemble",
            "decompile",
            "callers",
            "xrefs_to",
            "read_bytes",
            "run_process_capture",
            "get_evidence",
            "annotate",
            "register_unknown",
        ],
    ),
    (
        "audit_residual_unknowns",
        &[
            "list_unknowns",
            "list_evidence",
            "get_evidence",
            "refine_unknown",
            "resolve_unknown",
        ],
    ),
    (
        "prepare_bounded_process_capture",
        &[
            "list_artifact_occurrences",
            "open_binary",
            "list_imports",
            "procedure_info",
            "callers",
            "search_strings",
            "get_evidence",
            "register_unknown",
            "run_process_capture",
            "import_process_capture",
        ],
    ),
];

fn builtin(name: &str) -> PromptDefinition {
    builtin_prompts()
        .into_iter()
        .find(|p| p.name == name)
        .expect(name)
}

#[test]
fn the_six_prompts_in_listed_order() {
    let names: Vec<String> = builtin_prompts().into_iter().map(|p| p.name).collect();
    let expected: Vec<&str> = ARGUMENT_TABLE.iter().map(|(name, ..)| *name).collect();
    assert_eq!(names, expected);
}

#[test]
fn arguments_and_families_match_the_spec_table() {
    for (name, required, optional) in ARGUMENT_TABLE {
        let def = builtin(name);
        let actual_required: Vec<&str> = def
            .arguments
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(actual_required, *required, "{name}");
        let actual_optional: Vec<(&str, Family)> = def
            .arguments
            .iter()
            .filter(|a| !a.required)
            .map(|a| {
                (
                    a.name.as_str(),
                    a.family.expect("optional arguments are completed"),
                )
            })
            .collect();
        // Every guided prompt also takes the binary session (CONTRACT.md section 13).
        let mut expected_optional = optional.to_vec();
        expected_optional.push(("session", Family::Session));
        assert_eq!(actual_optional, expected_optional, "{name}");
        for argument in def.arguments.iter().filter(|a| a.required) {
            assert_eq!(
                argument.family, None,
                "{name}.{}: required is free text",
                argument.name
            );
        }
    }
}

#[test]
fn workflows_match_the_spec_table() {
    for (name, tools) in WORKFLOW_TABLE {
        assert_eq!(builtin(name).workflow, *tools, "{name}");
    }
}

#[test]
fn every_prompt_and_argument_is_described() {
    for def in builtin_prompts() {
        assert!(
            !def.title.is_empty() && !def.description.is_empty(),
            "{}",
            def.name
        );
        def.validate().expect("built-ins are valid");
        for argument in &def.arguments {
            assert!(
                !argument.description.is_empty(),
                "{}.{}",
                def.name,
                argument.name
            );
            if let Some(family) = argument.family {
                let says = format!("({family} family)");
                assert!(
                    argument.description.contains(&says),
                    "{}.{} does not say {says}",
                    def.name,
                    argument.name
                );
            }
        }
    }
}

#[test]
fn argument_family_answers_completion_lookups() {
    let registry = PromptRegistry::with_builtin();
    for (name, required, optional) in ARGUMENT_TABLE {
        for argument in *required {
            assert_eq!(registry.argument_family(name, argument), Ok(None));
        }
        for (argument, family) in *optional {
            assert_eq!(registry.argument_family(name, argument), Ok(Some(*family)));
        }
    }
}

#[test]
fn prompts_list_shape() {
    let registry = PromptRegistry::with_builtin();
    let page = registry.page(None, DEFAULT_PAGE_SIZE).unwrap();
    assert_eq!(
        page.next_cursor, None,
        "all built-ins fit in the default page"
    );
    let json = serde_json::to_value(&page).unwrap();
    for prompt in json["prompts"].as_array().unwrap() {
        let mut keys: Vec<&String> = prompt.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["arguments", "description", "name", "title"],
            "no workflow on the wire"
        );
        for argument in prompt["arguments"].as_array().unwrap() {
            let mut keys: Vec<&String> = argument.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(
                keys,
                ["description", "name", "required"],
                "no family on the wire"
            );
        }
    }
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!("prompt_catalog__prompts_list", json);
    });
}
