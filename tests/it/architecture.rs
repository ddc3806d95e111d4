//! Tidy checks of the crate's shape (in the spirit of rust-analyzer's `xtask tidy`): the layers
//! the crate docs state are the layers the code has.
//!
//! Every `.rs` file under `src/` is read as text (comments and string literals blanked out);
//! its `use` trees and its inline `crate::`, `super::` and `self::` paths are resolved to the
//! module, and through re-exports to the file, they name.
//!
//! - **Layers**: no module imports a module of a layer above its own ([`LAYERS`]).
//! - **Pure core**: nothing in `src/core/` names I/O, the clock, threads, processes, the
//!   environment, async or JSON ([`IMPURE`]).
//! - **No sibling cycles**: no files with the same parent module import each other, directly
//!   or around a longer circle.
//! - **No module circles**: no two modules with the same parent import each other (through
//!   any file inside them, e.g. `super::super::x` or `crate::a::b::c` naming a file deeper
//!   down), directly or around a longer circle.
//! - **A self-contained repository**: no source file cites a document outside it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod document;

/// The layers, lowest first; a module may import its own layer and the layers below it. The
/// binary (`src/main.rs`) is above everything.
const LAYERS: &[&[&str]] = &[
    &["text", "core"],
    &["base"],
    &["prompts"],
    &[
        "schemas",
        "capture",
        "inventory",
        "unknowns",
        "annotations",
        "claims",
    ],
    &["session"],
    &["providers"],
    &["tools"],
    &["resources"],
    &["mcp"],
    &["fuzzing"],
    &["main.rs"],
];

/// Paths the pure core must not name.
const IMPURE: &[&[&str]] = &[
    &["std", "io"],
    &["std", "fs"],
    &["std", "time"],
    &["std", "thread"],
    &["std", "net"],
    &["std", "process"],
    &["std", "env"],
    &["tokio"],
    &["serde_json"],
    &["jsonrpsee"],
];

#[test]
fn no_module_imports_a_layer_above_it() {
    assert_none(
        &format!("imports of a higher layer (layers, lowest first: {LAYERS:?})"),
        src().layer_violations(),
    );
}

#[test]
fn the_core_is_pure() {
    assert_none(
        "the pure core names I/O, time, async or JSON",
        src().impure_core(),
    );
}

#[test]
fn no_sibling_files_import_each_other() {
    assert_none(
        "sibling files that import each other",
        src().sibling_cycles(),
    );
}

#[test]
fn no_modules_import_each_other() {
    assert_none("modules that import each other", src().module_cycles());
}

/// The crate's own `src/`, read.
fn src() -> Crate {
    Crate::read(crate::root().join("src").as_path())
}

/// Fails with `what` and every offence, one a line, unless there is none.
fn assert_none(what: &str, offences: Vec<String>) {
    assert!(offences.is_empty(), "{what}:\n{}", offences.join("\n"));
}

/// The module check sees what the file check cannot: a circle between two modules that runs
/// through files below them (a re-export of a child's item, `super::super::x`,
/// `crate::a::b::c`), planted in a made-up crate. Imports between a module and its own
/// children are not circles.
#[test]
fn the_module_check_finds_a_circle_through_files_below_the_modules() {
    let crate_ = Crate::from_sources(&[
        ("lib.rs", "pub mod providers;\npub mod session;\n"),
        ("providers/mod.rs", "pub mod native;\nmod table;\n"),
        ("providers/table.rs", "pub struct Table;\n"),
        (
            "providers/native/mod.rs",
            "mod analysis;\nmod image;\nmod strings;\nuse self::image::Region;\n",
        ),
        (
            "providers/native/image.rs",
            "use super::analysis::Isa;\npub struct Region;\n",
        ),
        (
            "providers/native/analysis/mod.rs",
            "mod decode;\nmod query;\npub use self::decode::Isa;\n",
        ),
        ("providers/native/analysis/decode.rs", "pub enum Isa {}\n"),
        (
            "providers/native/analysis/query.rs",
            "use super::Isa;\nfn f(_: &super::super::image::Region) {}\n",
        ),
        (
            "providers/native/strings.rs",
            "fn g(_: crate::providers::table::Table) {}\n",
        ),
        ("session/mod.rs", "mod evidence;\nmod state;\n"),
        ("session/evidence/mod.rs", "mod ledger;\n"),
        (
            "session/evidence/ledger.rs",
            "pub struct Ledger;\nfn h() -> crate::session::state::stores::Kept { todo!() }\n",
        ),
        ("session/state/mod.rs", "mod stores;\n"),
        (
            "session/state/stores.rs",
            "pub struct Kept;\nuse crate::session::evidence::ledger::Ledger;\n",
        ),
    ]);
    assert_eq!(crate_.sibling_cycles(), Vec::<String>::new());
    assert_eq!(
        crate_.module_cycles(),
        [
            "module cycle in providers::native: analysis -> image (src/providers/native/analysis/query.rs:2 imports src/providers/native/image.rs); image -> analysis (src/providers/native/image.rs:1 imports src/providers/native/analysis/decode.rs)",
            "module cycle in session: evidence -> state (src/session/evidence/ledger.rs:2 imports src/session/state/stores.rs); state -> evidence (src/session/state/stores.rs:2 imports src/session/evidence/ledger.rs)",
        ]
    );
}

/// The repository holds its own contract: no source, test, benchmark or fuzz file (nor the
/// top-level documents) cites a specification kept elsewhere or a path outside the repository.
/// Sections of the contract are cited as `docs/CONTRACT.md` section N.
#[test]
fn sources_cite_only_documents_in_the_repository() {
    let root = crate::root();
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "fuzz", "docs"] {
        collect_text(root, &root.join(dir), &mut files);
    }
    for document in ["README.md", "ARCHITECTURE.md"] {
        collect_text(root, &root.join(document), &mut files);
    }
    let offences: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            outside_citations(text)
                .into_iter()
                .map(move |(line, cited)| format!("{path}:{line}: {cited}"))
        })
        .collect();
    assert_none(
        "citations of documents outside the repository (cite docs/CONTRACT.md section N)",
        offences,
    );
    // The contract the sources cite is there.
    assert!(root.join("docs/CONTRACT.md").is_file());
    assert!(root.join("ARCHITECTURE.md").is_file());
}

/// The citation check finds each form, and leaves the repository's own documents alone.
#[test]
fn the_citation_check_finds_outside_documents() {
    let spec = ["SP", "EC"].concat();
    let text = format!(
        "//! Bounds ({spec} section 2), {spec} sections 4 to 6, {spec} 8a.\n\
         // see {spec}.md and ../{shared}/x.md\n\
         //! docs/CONTRACT.md section 2; INSPECTED; a {spec}ial case\n",
        shared = "shared"
    );
    assert_eq!(
        outside_citations(&text),
        [
            (1, format!("{spec} section")),
            (1, format!("{spec} section")),
            (1, format!("{spec} 8")),
            (2, format!("{spec}.md")),
            (2, format!("../{}", "shared")),
        ]
    );
}

/// Where `text` cites a document outside the repository: the line (from 1) and the citation.
fn outside_citations(text: &str) -> Vec<(usize, String)> {
    let spec = ["SP", "EC"].concat();
    let shared = ["..", "/shared"].concat();
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices(&spec) {
            let before = line[..at].chars().next_back();
            let after = &line[at + spec.len()..];
            if before.is_some_and(|c| c.is_alphanumeric()) {
                continue;
            }
            let cited = if after.starts_with(".md") {
                Some(".md".to_owned())
            } else if after.starts_with(" section") {
                Some(" section".to_owned())
            } else {
                after
                    .strip_prefix(' ')
                    .and_then(|rest| rest.chars().next())
                    .filter(char::is_ascii_digit)
                    .map(|digit| format!(" {digit}"))
            };
            if let Some(cited) = cited {
                found.push((number + 1, format!("{spec}{cited}")));
            }
        }
        if line.contains(&shared) {
            found.push((number + 1, shared.clone()));
        }
    }
    found
}

/// Shared test code has one home (the `rea-testkit` crate, or `rea::fuzzing` for the fuzz
/// invariants): no Rust file of the crate, its tests, benches, examples, fuzz targets or test kit
/// includes another by `#[path]`.
/// The README's first command is `cargo run --release -- ...` at the root: with the suite's
/// own copy of the executable in the workspace, only the root package's `default-run` tells
/// cargo which one to run.
#[test]
fn cargo_run_at_the_root_names_the_rea_executable() {
    let read = |path: &str| std::fs::read_to_string(crate::root().join(path)).unwrap();
    let suite = read("tests/it/Cargo.toml");
    assert!(
        suite.contains("[[bin]]"),
        "the suite builds src/main.rs itself"
    );
    let root = read("Cargo.toml");
    let package = root.split("\n[").next().unwrap();
    assert!(
        package
            .lines()
            .any(|line| line.trim() == "default-run = \"rea\""),
        "the root [package] sets default-run = \"rea\""
    );
    assert!(read("README.md").contains("cargo run --release -- serve"));
}

#[test]
fn no_file_is_included_by_path() {
    let root = crate::root();
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "examples", "fuzz", "testkit"] {
        collect_text(root, &root.join(dir), &mut files);
    }
    files.retain(|(path, _)| path.ends_with(".rs"));
    assert!(files.len() > 100, "the walk finds the sources");
    let offences: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            path_includes(text)
                .into_iter()
                .map(move |line| format!("{path}:{line}"))
        })
        .collect();
    assert_none(
        "files included by #[path] (put shared code in testkit/ or rea::fuzzing)",
        offences,
    );
}

/// The include check finds the attribute in code, with or without spaces, and not in comments.
#[test]
fn the_include_check_finds_path_attributes_in_code_only() {
    let attribute = ["#[pa", "th = \"x.rs\"]"].concat();
    let spaced = ["# [ pa", "th=\"y.rs\"]"].concat();
    let text = format!("{attribute}\nmod x;\n// {attribute}\n{spaced}\nmod y;\n");
    assert_eq!(path_includes(&text), [1, 4]);
}

/// The lines (from 1) of `text` whose code (comments and strings removed) holds a `#[path`
/// attribute.
fn path_includes(text: &str) -> Vec<usize> {
    let code = code_only(text);
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            compact.contains("#[path")
        })
        .map(|(number, _)| number + 1)
        .collect()
}

/// The text files under `path` (a file or a directory), skipping build output and installed
/// packages.
fn collect_text(root: &Path, path: &Path, out: &mut Vec<(String, String)>) {
    const SKIPPED: &[&str] = &["target", "corpus", "artifacts", "node_modules", ".venv"];
    const TEXT: &[&str] = &["rs", "md", "toml", "sh", "mjs", "py"];
    if path.is_dir() {
        for entry in sorted_entries(path) {
            let name = entry.file_name().unwrap_or_default().to_string_lossy();
            if !SKIPPED.contains(&name.as_ref()) {
                collect_text(root, &entry, out);
            }
        }
    } else if path
        .extension()
        .is_some_and(|e| TEXT.iter().any(|t| e == *t))
    {
        let shown = path.strip_prefix(root).unwrap().display().to_string();
        out.push((shown, std::fs::read_to_string(path).unwrap()));
    }
}

/// Snapshot files follow one naming rule, `<group>__<case>.snap` (the group names the test
/// file, `<area>_<feature>`; the case may have `__` parts of its own), all lowercase snake
/// case, and none is an orphan: one test file names its group (`"<group>__`) and each of its
/// case parts (as a string, or the end or start of one), a part computed at run time being the
/// name of a built-in prompt. Run with `INSTA_SNAPSHOT_REFERENCES_FILE` for the exact list of
/// snapshots a run reads.
#[test]
fn snapshot_files_follow_the_naming_rule_and_are_used() {
    let root = crate::root();
    let mut suite = Vec::new();
    collect_text(root, &root.join("tests/it"), &mut suite);
    suite.retain(|(path, _)| !path.ends_with("architecture.rs"));
    let prompts: Vec<String> = rea::prompts::builtin_prompts()
        .into_iter()
        .map(|prompt| prompt.name)
        .collect();
    let mut misnamed = Vec::new();
    let mut orphans = Vec::new();
    for path in sorted_entries(&root.join("snapshots")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match snapshot_parts(&name) {
            None => misnamed.push(name),
            Some(parts) if !snapshot_named_in(&parts, &suite, &prompts) => orphans.push(name),
            Some(_) => {}
        }
    }
    assert_none(
        "snapshot files not named `<group>__<case>.snap` in lowercase snake case",
        misnamed,
    );
    assert_none(
        "snapshot files no test names (remove them, or name them in the test)",
        orphans,
    );
}

/// The rule and the orphan check, on made-up names and sources.
#[test]
fn the_snapshot_checks_tell_names_and_orphans_apart() {
    assert_eq!(
        snapshot_parts("tools_errors__no_binary_open.snap"),
        Some(vec!["tools_errors".to_owned(), "no_binary_open".to_owned()])
    );
    assert!(snapshot_parts("prompt_rendering__trace_crash__required_only.snap").is_some());
    for misnamed in [
        "code_tool_errors.snap",
        "Tools__x.snap",
        "tools__x.snap.new",
        "tools___x.snap",
        "tools__.snap",
        "tools__x-y.snap",
    ] {
        assert_eq!(snapshot_parts(misnamed), None, "{misnamed}");
    }
    let suite = [
        (
            "tests/it/tools/errors.rs".to_owned(),
            r#"snapshot(&format!("tools_errors__{name}")); check("no_binary_open");"#.to_owned(),
        ),
        (
            "tests/it/prompts/rendering.rs".to_owned(),
            r#"snapshot!(format!("prompt_rendering__{}", format!("{}__required_only", n)));"#
                .to_owned(),
        ),
        (
            "tests/it/other.rs".to_owned(),
            r#"let gone = "gone";"#.to_owned(),
        ),
    ];
    let prompts = ["trace_crash".to_owned()];
    let named = |name: &str| snapshot_named_in(&snapshot_parts(name).unwrap(), &suite, &prompts);
    assert!(named("tools_errors__no_binary_open.snap"));
    assert!(named("prompt_rendering__trace_crash__required_only.snap"));
    // A case named only in another file, an unknown prompt, a group no file names.
    assert!(!named("tools_errors__gone.snap"));
    assert!(!named(
        "prompt_rendering__no_such_prompt__required_only.snap"
    ));
    assert!(!named("mcp_other__no_binary_open.snap"));
}

/// The `__` parts of a snapshot file name that follows the rule; `None` otherwise.
fn snapshot_parts(file: &str) -> Option<Vec<String>> {
    let stem = file.strip_suffix(".snap")?;
    let parts: Vec<String> = stem.split("__").map(str::to_owned).collect();
    let snake = |part: &String| {
        !part.is_empty()
            && part.split('_').all(|word| {
                !word.is_empty()
                    && word
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
    };
    (parts.len() >= 2 && parts.iter().all(snake)).then_some(parts)
}

/// Whether one file of `suite` (path, text) names the group of `parts` and each of its case
/// parts, a part that is one of `prompts` counting as named.
fn snapshot_named_in(parts: &[String], suite: &[(String, String)], prompts: &[String]) -> bool {
    let (group, case) = parts.split_first().unwrap();
    suite.iter().any(|(_, text)| {
        text.contains(&format!("\"{group}__"))
            && case.iter().all(|part| {
                prompts.contains(part)
                    || [
                        format!("\"{part}\""),
                        format!("__{part}\""),
                        format!("\"{part}__"),
                    ]
                    .iter()
                    .any(|form| text.contains(form.as_str()))
            })
    })
}

/// One module-file convention for the whole crate: a module with children is `name/mod.rs`,
/// never `name.rs` beside a `name/` folder.
#[test]
fn every_module_with_children_is_a_mod_rs() {
    let src = crate::root().join("src");
    let mut files = Vec::new();
    collect(&src, &src, &mut files);
    let offences: Vec<&String> = files
        .iter()
        .map(|(path, _)| path)
        .filter(|path| {
            path.strip_suffix(".rs")
                .is_some_and(|stem| !stem.ends_with("/mod") && src.join(stem).is_dir())
        })
        .collect();
    assert!(
        offences.is_empty(),
        "modules with children written as `name.rs` (use `name/mod.rs`): {offences:?}"
    );
}

/// The checks themselves catch what they are for: a deliberately wrong import, an impure core
/// and a cycle, in a made-up crate.
#[test]
fn the_checks_catch_a_wrong_import_an_impure_core_and_a_cycle() {
    let crate_ = Crate::from_sources(&[
        ("lib.rs", "pub mod core; pub mod session; pub mod tools;"),
        (
            "core/mod.rs",
            "//! `crate::tools` in a comment is fine.\nmod a;\nmod b;\npub use a::A;\n",
        ),
        (
            "core/a.rs",
            "use super::b::B;\nuse std::{collections::BTreeMap, io::Read};\npub struct A;\n",
        ),
        ("core/b.rs", "pub struct B(crate::core::A);\n"),
        (
            "session/mod.rs",
            "const S: &str = \"crate::tools::X\";\nfn f() -> crate::tools::Tool { todo!() }\n",
        ),
        (
            "tools/mod.rs",
            "use crate::{core::A, session};\npub struct Tool;\n",
        ),
    ]);
    assert_eq!(
        crate_.layer_violations(),
        ["src/session/mod.rs:2: `crate::tools::Tool` (tools is above session)"]
    );
    assert_eq!(
        crate_.impure_core(),
        ["src/core/a.rs:2: `std::io::Read` (the core is pure)"]
    );
    assert_eq!(
        crate_.sibling_cycles(),
        [
            "cycle in core: src/core/a.rs:1 imports src/core/b.rs; src/core/b.rs:1 imports src/core/a.rs",
            "cycle in crate: src/session/mod.rs:2 imports src/tools/mod.rs; src/tools/mod.rs:1 imports src/session/mod.rs",
        ]
    );
}

/// One source file, read.
struct File {
    /// Path shown in messages (`src/...`).
    shown: String,
    /// The module the file is (`["session", "inventory", "walk"]`); `main.rs` is `["main.rs"]`.
    module: Vec<String>,
    /// Every path the file names: absolute module path when it starts with `crate`, `super`,
    /// `self` or a child module, else as written; with the line.
    paths: Vec<(Vec<String>, usize, bool)>,
    /// Names defined at the top of the file (items and modules).
    defined: BTreeSet<String>,
    /// Names brought in by top-level `use`, to the absolute path they stand for.
    imported: BTreeMap<String, Vec<String>>,
}

struct Crate {
    files: Vec<File>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut sources = Vec::new();
        collect(src, src, &mut sources);
        let borrowed: Vec<(&str, &str)> = sources
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        Crate::from_sources(&borrowed)
    }

    /// `sources`: (path relative to `src/`, text).
    fn from_sources(sources: &[(&str, &str)]) -> Crate {
        let modules: BTreeSet<Vec<String>> = sources.iter().map(|(p, _)| module_of(p)).collect();
        let files = sources
            .iter()
            .map(|(path, text)| parse(path, text, &modules))
            .collect();
        Crate { files }
    }

    fn file(&self, module: &[String]) -> Option<&File> {
        self.files.iter().find(|f| f.module == module)
    }

    fn layer_violations(&self) -> Vec<String> {
        let mut offences = Vec::new();
        for file in &self.files {
            let Some(from) = file.module.first().and_then(|m| rank(m)) else {
                continue;
            };
            for (path, line, absolute) in &file.paths {
                if !absolute || file.module == ["main.rs"] {
                    continue;
                }
                let Some(target) = path.first() else { continue };
                if let Some(to) = rank(target)
                    && to > from
                {
                    offences.push(format!(
                        "{}:{line}: `crate::{}` ({target} is above {})",
                        file.shown,
                        path.join("::"),
                        file.module[0]
                    ));
                }
            }
        }
        offences
    }

    fn impure_core(&self) -> Vec<String> {
        let mut offences = Vec::new();
        for file in self
            .files
            .iter()
            .filter(|f| f.module.first().is_some_and(|m| m == "core"))
        {
            for (path, line, absolute) in &file.paths {
                if *absolute {
                    continue;
                }
                if IMPURE
                    .iter()
                    .any(|bad| path.len() >= bad.len() && path[..bad.len()] == **bad)
                {
                    offences.push(format!(
                        "{}:{line}: `{}` (the core is pure)",
                        file.shown,
                        path.join("::")
                    ));
                }
            }
        }
        offences
    }

    /// The file that defines what `path` (absolute) names, following re-exports.
    fn defining_file(&self, path: &[String], depth: usize) -> Option<&File> {
        // The longest prefix that is a file module.
        let (split, file) = (0..=path.len())
            .rev()
            .find_map(|n| self.file(&path[..n]).map(|f| (n, f)))?;
        let Some(name) = path.get(split) else {
            return Some(file);
        };
        if file.defined.contains(name) || depth > 8 {
            return Some(file);
        }
        match file.imported.get(name) {
            Some(target) => {
                let mut next = target.clone();
                next.extend_from_slice(&path[split + 1..]);
                self.defining_file(&next, depth + 1).or(Some(file))
            }
            None => Some(file),
        }
    }

    fn sibling_cycles(&self) -> Vec<String> {
        // Edges between files with the same parent module, with the first line of each.
        let mut edges: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for (from, file) in self.files.iter().enumerate() {
            for (path, line, absolute) in &file.paths {
                if !absolute || file.module == ["main.rs"] {
                    continue;
                }
                let Some(target) = self.defining_file(path, 0) else {
                    continue;
                };
                let to = self
                    .files
                    .iter()
                    .position(|f| std::ptr::eq(f, target))
                    .unwrap();
                let siblings = from != to
                    && !file.module.is_empty()
                    && !target.module.is_empty()
                    && file.module[..file.module.len() - 1]
                        == target.module[..target.module.len() - 1];
                if siblings {
                    edges.entry((from, to)).or_insert(*line);
                }
            }
        }
        let mut cycles = Vec::new();
        for component in circles(edges.keys()) {
            let start = *component.first().unwrap();
            let parent = &self.files[start].module[..self.files[start].module.len() - 1];
            let described: Vec<String> = edges
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|((a, b), line)| {
                    format!(
                        "{}:{line} imports {}",
                        self.files[*a].shown, self.files[*b].shown
                    )
                })
                .collect();
            cycles.push(format!(
                "cycle in {}: {}",
                shown(parent),
                described.join("; ")
            ));
        }
        cycles
    }

    /// Circles between modules. An import whose file lies neither above nor below the
    /// importing file is an edge between the two children of their deepest common module that
    /// hold them: `native/image.rs` naming `super::analysis::Isa` (defined in
    /// `native/analysis/decode.rs`) is the edge `image -> analysis` of `native`. Each circle is
    /// shown with the first import behind each of its edges.
    fn module_cycles(&self) -> Vec<String> {
        let mut edges: BTreeMap<(Vec<String>, Vec<String>), String> = BTreeMap::new();
        for file in &self.files {
            if file.module == ["main.rs"] {
                continue;
            }
            for (path, line, absolute) in &file.paths {
                let target = match self.defining_file(path, 0) {
                    Some(target) if *absolute => target,
                    _ => continue,
                };
                let common = file
                    .module
                    .iter()
                    .zip(&target.module)
                    .take_while(|(a, b)| a == b)
                    .count();
                // The same module, or one inside the other: no edge between siblings.
                if common == file.module.len() || common == target.module.len() {
                    continue;
                }
                edges
                    .entry((
                        file.module[..=common].to_vec(),
                        target.module[..=common].to_vec(),
                    ))
                    .or_insert_with(|| format!("{}:{line} imports {}", file.shown, target.shown));
            }
        }
        circles(edges.keys())
            .into_iter()
            .map(|component| {
                let first = component.first().unwrap();
                let parent = &first[..first.len() - 1];
                let described: Vec<String> = edges
                    .iter()
                    .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                    .map(|((a, b), witness)| {
                        format!("{} -> {} ({witness})", a.last().unwrap(), b.last().unwrap())
                    })
                    .collect();
                format!(
                    "module cycle in {}: {}",
                    shown(parent),
                    described.join("; ")
                )
            })
            .collect()
    }
}

/// A module path as messages show it (`crate` for the root).
fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// The strongly connected components of two or more nodes of the graph `edges`, each once, in
/// the order of their smallest node.
fn circles<'a, N: Ord + Clone + 'a>(
    edges: impl Iterator<Item = &'a (N, N)> + Clone,
) -> Vec<BTreeSet<N>> {
    let nodes: BTreeSet<N> = edges
        .clone()
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let reach = |start: &N| -> BTreeSet<N> {
        let mut seen = BTreeSet::from([start.clone()]);
        let mut stack = vec![start.clone()];
        while let Some(at) = stack.pop() {
            for (a, b) in edges.clone() {
                if *a == at && seen.insert(b.clone()) {
                    stack.push(b.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<N, BTreeSet<N>> = nodes.iter().map(|n| (n.clone(), reach(n))).collect();
    let mut found: Vec<BTreeSet<N>> = Vec::new();
    for (start, reached) in &reaches {
        let component: BTreeSet<N> = reached
            .iter()
            .filter(|other| reaches[*other].contains(start))
            .cloned()
            .collect();
        if component.len() >= 2 && !found.contains(&component) {
            found.push(component);
        }
    }
    found
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The entries of `dir`, in path order.
fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

/// Every `.rs` file below `dir`, as (path relative to `root`, text), in path order.
pub(crate) fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for path in sorted_entries(dir) {
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap();
            let relative = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((relative, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The module a file under `src/` is.
fn module_of(path: &str) -> Vec<String> {
    if path == "main.rs" {
        return vec!["main.rs".to_owned()];
    }
    let mut parts: Vec<String> = path.split('/').map(str::to_owned).collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// Blanks out comments, string and character literals, keeping line breaks.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            // Raw string: r#*"..."#*.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &skipped in &chars[i..j.min(chars.len())] {
                out.push(blank(skipped));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime.
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Colons,
    Punct(char),
}

fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::Colons, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

const ITEM_KEYWORDS: &[&str] = &[
    "struct", "enum", "fn", "trait", "const", "static", "type", "union", "mod",
];

fn parse(path: &str, text: &str, modules: &BTreeSet<Vec<String>>) -> File {
    let module = module_of(path);
    let tokens = tokens(&code_only(text));
    let mut file = File {
        shown: format!("src/{path}"),
        module: module.clone(),
        paths: Vec::new(),
        defined: BTreeSet::new(),
        imported: BTreeMap::new(),
    };
    // Inline modules (`mod tests { ... }`) open at a brace depth.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let (token, line) = &tokens[i];
        let current: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(name, _)| name.clone()))
            .collect();
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                assert!(
                    depth > 0,
                    "src/{path}:{line}: unbalanced braces (the reader is lost)"
                );
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            // `use<'a>` is precise capturing, not an import.
            Token::Ident(word)
                if word == "use" && tokens.get(i + 1).map(|t| &t.0) != Some(&Token::Punct('<')) =>
            {
                let end = (i..tokens.len())
                    .find(|&j| tokens[j].0 == Token::Punct(';'))
                    .unwrap_or(tokens.len());
                let mut tree = String::new();
                for (t, _) in &tokens[i + 1..end] {
                    match t {
                        Token::Ident(s) => {
                            if tree.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                                tree.push(' ');
                            }
                            tree.push_str(s);
                        }
                        Token::Colons => tree.push_str("::"),
                        Token::Punct(c) => tree.push(*c),
                    }
                }
                for (segments, alias) in expand_use(&tree) {
                    let (resolved, absolute) = resolve(&segments, &current, modules);
                    if depth == 0 && inline.is_empty() && absolute {
                        let name = alias.or_else(|| resolved.last().cloned());
                        if let Some(name) = name.filter(|n| n != "*" && n != "self") {
                            file.imported.insert(name, resolved.clone());
                        }
                    }
                    file.paths.push((resolved, *line, absolute));
                }
                i = end;
            }
            Token::Ident(word)
                if ITEM_KEYWORDS.contains(&word.as_str()) || word == "macro_rules" =>
            {
                let mut j = i + 1;
                if word == "macro_rules" && tokens.get(j).map(|t| &t.0) == Some(&Token::Punct('!'))
                {
                    j += 1;
                }
                if let Some((Token::Ident(name), _)) = tokens.get(j)
                    && !ITEM_KEYWORDS.contains(&name.as_str())
                {
                    if depth == 0 && inline.is_empty() {
                        file.defined.insert(name.clone());
                    }
                    if word == "mod" && tokens.get(j + 1).map(|t| &t.0) == Some(&Token::Punct('{'))
                    {
                        inline.push((name.clone(), depth));
                    }
                }
            }
            Token::Ident(word) => {
                let preceded_by_colons = i > 0 && tokens[i - 1].0 == Token::Colons;
                let followed_by_colons = tokens.get(i + 1).map(|t| &t.0) == Some(&Token::Colons);
                if !preceded_by_colons && followed_by_colons {
                    let mut segments = vec![word.clone()];
                    let mut j = i + 1;
                    while tokens.get(j).map(|t| &t.0) == Some(&Token::Colons) {
                        match tokens.get(j + 1) {
                            Some((Token::Ident(s), _)) => {
                                segments.push(s.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    let (resolved, absolute) = resolve(&segments, &current, modules);
                    file.paths.push((resolved, *line, absolute));
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    file
}

/// Expands a use tree (`a::{b, c::{d as e, self}}`) into paths, each with its alias.
fn expand_use(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree = tree.trim().trim_start_matches("::");
    let mut out = Vec::new();
    if let Some(open) = tree.find('{') {
        let prefix: Vec<String> = tree[..open]
            .split("::")
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().to_owned())
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut level = 0;
        let mut start = 0;
        let mut parts = Vec::new();
        for (k, c) in inner.char_indices() {
            match c {
                '{' => level += 1,
                '}' => level -= 1,
                ',' if level == 0 => {
                    parts.push(&inner[start..k]);
                    start = k + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
            for (mut segments, alias) in expand_use(part) {
                if segments.first().is_some_and(|s| s == "self") {
                    segments.remove(0);
                }
                let mut full = prefix.clone();
                full.extend(segments);
                out.push((full, alias));
            }
        }
    } else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias.trim().to_owned())),
            None => (tree, None),
        };
        let segments = path.split("::").map(|s| s.trim().to_owned()).collect();
        out.push((segments, alias));
    }
    out
}

/// The absolute module path `segments` names from module `current`, and whether it is inside
/// the crate.
fn resolve(
    segments: &[String],
    current: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> (Vec<String>, bool) {
    let mut base: Vec<String> = current.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super" | "self") => {
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = current.to_vec();
            child.push(first.to_owned());
            if !modules.contains(&child) {
                return (segments.to_vec(), false);
            }
        }
        None => return (Vec::new(), false),
    }
    base.extend_from_slice(rest);
    (base, true)
}
