//! The prompt registry: Added / Updated / Unchanged semantics that drive
//! `notifications/prompts/list_changed`, stable order, removal, and `prompts/list` paging with
//! opaque cursors.

use std::num::NonZeroUsize;

use rea::core::Family;
use rea::prompts::{
    ArgumentDefinition, BinarySession, InvalidCursor, PromptDefinition, PromptError,
    PromptRegistry, RegistryChange, ToolAvailability, builtin_prompts,
};

fn custom(name: &str) -> PromptDefinition {
    PromptDefinition {
        name: name.into(),
        title: format!("Custom {name}"),
        description: "An integrator's prompt.".into(),
        arguments: vec![ArgumentDefinition {
            name: "target".into(),
            description: "What to look at.".into(),
            required: true,
            family: None,
        }],
        workflow: vec!["list_documents".into()],
    }
}

fn names(registry: &PromptRegistry) -> Vec<&str> {
    registry.list().iter().map(|p| p.name.as_str()).collect()
}

fn size(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

/// Pages through the whole registry, returning the names of each page.
fn all_pages(registry: &PromptRegistry, page_size: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = registry.page(cursor.as_deref(), size(page_size)).unwrap();
        pages.push(page.prompts.iter().map(|p| p.name.to_owned()).collect());
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
}

#[test]
fn with_builtin_lists_the_six_prompts_in_order() {
    let registry = PromptRegistry::with_builtin();
    assert_eq!(registry.list(), builtin_prompts().as_slice());
    assert!(PromptRegistry::new().list().is_empty());
}

#[test]
fn registering_a_new_prompt_adds_it_at_the_end() {
    let mut registry = PromptRegistry::with_builtin();
    assert_eq!(registry.register(custom("mine")), Ok(RegistryChange::Added));
    assert!(RegistryChange::Added.catalog_changed());
    assert_eq!(names(&registry).last(), Some(&"mine"));
    assert_eq!(registry.get("mine"), Some(&custom("mine")));
}

#[test]
fn registering_an_identical_prompt_changes_nothing() {
    let mut registry = PromptRegistry::with_builtin();
    let before = registry.clone();
    for def in builtin_prompts() {
        assert_eq!(registry.register(def), Ok(RegistryChange::Unchanged));
    }
    assert!(!RegistryChange::Unchanged.catalog_changed());
    assert_eq!(registry, before);
}

#[test]
fn updating_a_prompt_replaces_it_in_place() {
    let mut registry = PromptRegistry::with_builtin();
    let order = names(&registry).join(",");
    let mut changed = builtin_prompts()[2].clone();
    changed.description.push_str(" Updated.");
    assert_eq!(
        registry.register(changed.clone()),
        Ok(RegistryChange::Updated)
    );
    assert!(RegistryChange::Updated.catalog_changed());
    assert_eq!(
        names(&registry).join(","),
        order,
        "an update keeps the listed order"
    );
    assert_eq!(registry.get(&changed.name), Some(&changed));
    assert_eq!(registry.register(changed), Ok(RegistryChange::Unchanged));
}

#[test]
fn any_field_difference_is_an_update() {
    // Workflow and families are not listed, but they change what prompts/get and completion
    // answer, so they count as a change too.
    let edits: [fn(&mut PromptDefinition); 6] = [
        |d| d.title.push('!'),
        |d| d.arguments[0].description.push('!'),
        |d| d.arguments[0].required = false,
        |d| d.arguments[0].family = Some(Family::Document),
        |d| d.workflow.push("get_evidence".into()),
        |d| d.arguments.reverse(),
    ];
    for edit in edits {
        let mut registry = PromptRegistry::new();
        let mut def = custom("mine");
        def.arguments.push(ArgumentDefinition {
            name: "other".into(),
            description: "Another.".into(),
            required: false,
            family: None,
        });
        registry.register(def.clone()).unwrap();
        edit(&mut def);
        assert_eq!(registry.register(def), Ok(RegistryChange::Updated));
    }
}

#[test]
fn removing_a_prompt() {
    let mut registry = PromptRegistry::with_builtin();
    let removed = registry.remove("trace_crash").expect("was registered");
    assert_eq!(removed.name, "trace_crash");
    assert_eq!(registry.get("trace_crash"), None);
    assert_eq!(registry.list().len(), 5);
    assert_eq!(registry.remove("trace_crash"), None);
}

#[test]
fn an_updated_registry_renders_the_update() {
    let mut registry = PromptRegistry::with_builtin();
    let mut def = builtin_prompts()[0].clone();
    def.title = "Find a feature".into();
    registry.register(def).unwrap();
    let arguments = [("feature".to_owned(), "sync".to_owned())].into();
    let tools = ToolAvailability::new(["list_documents"], BinarySession::Open);
    let rendered = registry
        .render("investigate_feature", &arguments, &tools)
        .unwrap();
    assert!(rendered.text().starts_with("# Find a feature\n"));
}

#[test]
fn argument_family_of_registered_prompts() {
    let mut registry = PromptRegistry::new();
    registry.register(custom("mine")).unwrap();
    assert_eq!(registry.argument_family("mine", "target"), Ok(None));
    assert_eq!(
        registry.argument_family("mine", "other"),
        Err(PromptError::UnknownArgument {
            prompt: "mine".into(),
            argument: "other".into()
        })
    );
    assert_eq!(
        registry.argument_family("trace_crash", "symptom"),
        Err(PromptError::UnknownPrompt {
            prompt: "trace_crash".into()
        })
    );
}

#[test]
fn paging_visits_every_prompt_once_in_order() {
    let mut registry = PromptRegistry::with_builtin();
    for name in ["a", "b", "c"] {
        registry.register(custom(name)).unwrap();
    }
    let listed: Vec<String> = names(&registry).iter().map(|s| s.to_string()).collect();
    for page_size in 1..=registry.list().len() + 2 {
        let pages = all_pages(&registry, page_size);
        assert!(
            pages
                .iter()
                .all(|page| !page.is_empty() && page.len() <= page_size)
        );
        assert_eq!(pages.concat(), listed, "page size {page_size}");
        assert_eq!(
            pages.len(),
            listed.len().div_ceil(page_size),
            "page size {page_size}"
        );
    }
}

#[test]
fn an_empty_registry_has_one_empty_page() {
    let registry = PromptRegistry::new();
    let page = registry.page(None, size(10)).unwrap();
    assert!(page.prompts.is_empty());
    assert_eq!(page.next_cursor, None);
    assert_eq!(serde_json::to_string(&page).unwrap(), r#"{"prompts":[]}"#);
}

#[test]
fn a_cursor_is_opaque_ascii_and_serialized_as_next_cursor() {
    let registry = PromptRegistry::with_builtin();
    let page = registry.page(None, size(2)).unwrap();
    let cursor = page.next_cursor.clone().expect("more pages");
    assert!(cursor.is_ascii());
    let json = serde_json::to_value(&page).unwrap();
    assert_eq!(json["nextCursor"], cursor.as_str());
}

#[test]
fn a_cursor_survives_additions_and_unrelated_removals() {
    let mut registry = PromptRegistry::with_builtin();
    let first = registry.page(None, size(2)).unwrap();
    let cursor = first.next_cursor.unwrap();
    registry.register(custom("late")).unwrap();
    registry.remove("audit_residual_unknowns");
    let rest = registry.page(Some(&cursor), size(10)).unwrap();
    let rest: Vec<&str> = rest.prompts.iter().map(|p| p.name).collect();
    assert_eq!(
        rest,
        [
            "verify_reconstruction",
            "trace_crash",
            "prepare_bounded_process_capture",
            "late"
        ]
    );
}

#[test]
fn invalid_cursors_are_errors() {
    let mut registry = PromptRegistry::with_builtin();
    let cursor = registry.page(None, size(2)).unwrap().next_cursor.unwrap();
    let upper = cursor.to_uppercase();
    for bad in ["", "garbage", "after.zz", "after.6e6f7065", &upper] {
        assert_eq!(
            registry.page(Some(bad), size(2)),
            Err(InvalidCursor { cursor: bad.into() }),
            "{bad:?}"
        );
    }
    // A cursor continuing after a prompt that was removed can no longer be placed.
    registry.remove("compare_application_versions");
    assert_eq!(
        registry.page(Some(&cursor), size(2)),
        Err(InvalidCursor {
            cursor: cursor.clone().into()
        })
    );
}

/// A prompt source (a prompt file) that overrides a built-in prompt and adds its own: when a
/// prompt leaves the source, the built-in of that name comes back and the source's own prompt
/// goes; syncing the same source again changes nothing.
#[test]
fn syncing_a_source_restores_built_ins_and_removes_the_rest() {
    let mut registry = PromptRegistry::with_builtin();
    let builtin = builtin_prompts();
    let first = builtin[0].name.clone();
    let mut override_ = custom(&first);
    override_.description = "A file's version.".into();
    let held = vec![override_.clone(), custom("mine")];
    assert!(registry.sync_source(&[], &held).unwrap());
    assert_eq!(registry.get(&first), Some(&override_));
    assert!(registry.get("mine").is_some());
    assert!(
        !registry
            .sync_source(&[first.clone(), "mine".into()], &held)
            .unwrap()
    );

    assert!(
        registry
            .sync_source(&[first.clone(), "mine".into()], &[])
            .unwrap()
    );
    assert_eq!(registry.get(&first), Some(&builtin[0]));
    assert_eq!(registry.get("mine"), None);
    assert_eq!(registry.list(), PromptRegistry::with_builtin().list());
}
