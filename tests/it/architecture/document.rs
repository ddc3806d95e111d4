//! ARCHITECTURE.md is true of the tree: what it names exists, and it maps every source file.
//!
//! The document is read as Markdown: every backticked span outside fenced code blocks is a
//! candidate, and a span is checked as a **path** or as an **item**, or left alone.
//!
//! - **Paths.** A span without spaces that starts with a top-level folder ([`ROOTS`]), ends
//!   with `/`, or ends in a known extension ([`EXTENSIONS`]) names a file or folder. A
//!   placeholder (`src/providers/<name>/mod.rs`) is checked up to the folder before it. A
//!   path starting with a top-level folder is resolved against the repository only. A
//!   relative name (`mod.rs`, `core/discovery.rs`, `analysis/`) is resolved, first match
//!   wins, against: the last folder named earlier in the same paragraph or bullet, the
//!   folders the section's heading names (`#### core/key/` means `src/core/key`, a file in a
//!   heading means its folder), the repository, and `src/`; failing those, against any folder
//!   of the repository (it then exists, but maps nothing, see below). MCP method names
//!   (`tools/list`) have no extension and no trailing `/`, so they are not paths.
//! - **Items.** A span that is a Rust path (`Cancel::commit`, `text::cut`), or a single name
//!   in CamelCase (`PrefixIndex`), with an underscore (`complete_ordered`, `SCAN_LIMIT`), or
//!   followed by `()` (`key()`), names an item. Each segment must be defined in `src/` or
//!   `testkit/`: after `fn`, `struct`, `enum`, `trait`, `const`, `static`, `type`, `union`,
//!   `mod` or `macro_rules!`, as a field (the first name of a line, after `pub`, followed by a
//!   single `:`), as an enum variant (a CamelCase first name of a line followed by `,`, `(`,
//!   `{` or `=`), or as a module file. For `Owner::name`, `name` must be defined in a file
//!   that defines or implements `Owner`, or that is (inside) module `Owner`. Lowercase words
//!   without `_` (`text`, `native`), lowerCamel JSON members (`isError`), paths into other
//!   crates ([`EXTERNAL_CRATES`]) and the few names of dependencies the document uses
//!   ([`EXTERNAL_NAMES`]) are left alone.
//! - **Mapping.** Every `.rs` file under `src/` is named: by a path that resolves to it
//!   (through the paragraph, section, repository or `src/`, not the any-folder fallback). A
//!   named folder maps its `mod.rs` (the folder is that module) and nothing else: the other
//!   files of a folder are mapped only by being listed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Token, assert_none, code_only, sorted_entries, tokens};

/// The top-level folders a repository path starts with.
const ROOTS: &[&str] = &[
    "src/",
    "tests/",
    "benches/",
    "fuzz/",
    "docs/",
    "adapters/",
    "testkit/",
    "snapshots/",
    "schemas/",
    "examples/",
    ".ci/",
];

/// The extensions that make a span a file name.
const EXTENSIONS: &[&str] = &[
    ".rs", ".md", ".toml", ".py", ".sh", ".json", ".snap", ".mjs", ".lock",
];

/// Crates whose paths the document names (`std::io` in the core's rule).
const EXTERNAL_CRATES: &[&str] = &[
    "std",
    "tokio",
    "serde",
    "serde_json",
    "jsonrpsee",
    "axum",
    "clap",
    "schemars",
    "object",
    "libc",
];

/// Names from dependencies the document uses, each with where it comes from.
const EXTERNAL_NAMES: &[&str] = &[
    "RLIMIT_AS",       // libc: the address-space limit of an adapter
    "TCP_NODELAY",     // the socket option of the HTTP accept loop
    "RpcModule",       // jsonrpsee: the method table
    "register_method", // jsonrpsee: RpcModule's registration of a method
    "register_async_method",
    "Extensions",     // jsonrpsee (http): the call's extensions
    "JsonSchema",     // schemars
    "Deserialize",    // serde
    "Serialize",      // serde
    "pre_exec",       // std: CommandExt::pre_exec, where an adapter's limits are set
    "CallToolResult", // the MCP schema's name of a tools/call result
    "application_id", // SQLite pragmas the store checks or sets
    "user_version",
    "quick_check",
    "max_page_count",
];

/// Folders the walk of the repository skips.
const SKIPPED: &[&str] = &[
    "target",
    ".git",
    "node_modules",
    ".venv",
    "corpus",
    "artifacts",
];

#[test]
fn the_architecture_document_names_what_exists_and_maps_every_source_file() {
    let root = crate::root();
    let tree = Tree::read(root);
    assert!(tree.sources().count() > 100, "the walk finds the sources");
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    assert_none(
        "ARCHITECTURE.md disagrees with the tree (fix the name, or name the file in its \
         module's entry; rules in tests/it/architecture/document.rs)",
        check("ARCHITECTURE.md", &text, &tree),
    );
}

/// The checker finds a missing path, a missing item, an item under the wrong owner and an
/// unmapped file, in a made-up tree; and resolves names through paragraph and section.
#[test]
fn the_document_check_finds_missing_paths_items_and_unmapped_files() {
    let tree = Tree::from_sources(
        &[
            "docs",
            "docs/CONTRACT.md",
            "tests",
            "tests/it",
            "tests/it/main.rs",
        ],
        &[
            ("src/lib.rs", "pub mod core;\npub mod mcp;\n"),
            ("src/core/mod.rs", "mod key;\npub fn complete() {}\n"),
            (
                "src/core/key/mod.rs",
                "mod matcher;\npub const SCAN_LIMIT: usize = 1;\n",
            ),
            (
                "src/core/key/matcher.rs",
                "pub struct Prefix { pub bytes: usize }\nimpl Prefix { pub fn new() {} }\n",
            ),
            (
                "src/mcp/mod.rs",
                "pub enum Frame {\n    Line(String),\n    TooLong,\n}\nfn other() {}\n",
            ),
            ("src/mcp/stdio.rs", "pub fn serve() {}\n"),
            ("src/mcp/lost.rs", "pub fn lost() {}\n"),
        ],
    );
    let text = "\
# Title

See `docs/CONTRACT.md` and `tests/it/`, `tools/list` (a method), `isError`, `std::io`.

### `src/lib.rs`

#### `core/key/`

`mod.rs` holds `SCAN_LIMIT`; `matcher.rs` is `Prefix` (`Prefix::new`, `bytes`, `gone()`).
`complete()` is in `src/core/`.

### `src/mcp/`

- `mod.rs`: `Frame::Line`, `Frame::TooLong`, `Frame::Gone`; `state.rs` is gone.
- `stdio.rs`: `serve`, `Prefix::serve`, `take_roots`, `RpcModule`, `docs/GONE.md`.

```
`fenced.rs` is not read
```
";
    assert_eq!(
        check("ARCHITECTURE.md", text, &tree),
        [
            "ARCHITECTURE.md:9: `gone()`: `gone` is defined nowhere in src/ or testkit/ (no fn, struct, enum, trait, const, static, type, mod, macro, field or variant of that name)",
            "ARCHITECTURE.md:14: `Frame::Gone`: `Gone` is defined nowhere in src/ or testkit/ (no fn, struct, enum, trait, const, static, type, mod, macro, field or variant of that name)",
            "ARCHITECTURE.md:14: `state.rs` names no file or folder (looked in: src/mcp, ., src, and any folder)",
            "ARCHITECTURE.md:15: `Prefix::serve`: `serve` is not defined where `Prefix` is defined or implemented (nor in a module `Prefix`)",
            "ARCHITECTURE.md:15: `take_roots`: `take_roots` is defined nowhere in src/ or testkit/ (no fn, struct, enum, trait, const, static, type, mod, macro, field or variant of that name)",
            "ARCHITECTURE.md:15: `docs/GONE.md` names no file or folder (looked in: .)",
            "src/mcp/lost.rs: a source file ARCHITECTURE.md does not map (name it in its module's entry)",
        ]
    );
}

/// What the repository holds: every file and folder (relative, `/`-separated), and the
/// definitions of the Rust files of `src/` and `testkit/`.
struct Tree {
    paths: BTreeSet<String>,
    /// Per defining file: what it defines, and the names it owns (the types it defines or
    /// implements, and its module path's segments).
    files: Vec<Definitions>,
}

struct Definitions {
    defined: BTreeSet<String>,
    owners: BTreeSet<String>,
}

impl Tree {
    fn read(root: &Path) -> Tree {
        let mut paths = BTreeSet::new();
        walk(root, root, &mut paths);
        let files = paths
            .iter()
            .filter(|p| (p.starts_with("src/") || p.starts_with("testkit/")) && p.ends_with(".rs"))
            .map(|p| Definitions::of(p, &std::fs::read_to_string(root.join(p)).unwrap()))
            .collect();
        Tree { paths, files }
    }

    /// A made-up tree: `other` paths besides the Rust `sources`, whose folders are added.
    fn from_sources(other: &[&str], sources: &[(&str, &str)]) -> Tree {
        let mut paths: BTreeSet<String> = other.iter().map(|p| (*p).to_owned()).collect();
        for (path, _) in sources {
            let mut at = String::new();
            for part in path.split('/') {
                if !at.is_empty() {
                    at.push('/');
                }
                at.push_str(part);
                paths.insert(at.clone());
            }
        }
        let files = sources
            .iter()
            .map(|(path, text)| Definitions::of(path, text))
            .collect();
        Tree { paths, files }
    }

    fn sources(&self) -> impl Iterator<Item = &String> {
        self.paths
            .iter()
            .filter(|p| p.starts_with("src/") && p.ends_with(".rs"))
    }

    fn exists(&self, path: &str) -> bool {
        path == "." || self.paths.contains(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        path == "."
            || self
                .paths
                .iter()
                .any(|p| p.starts_with(&format!("{path}/")))
    }

    fn folders(&self) -> impl Iterator<Item = &String> {
        self.paths.iter().filter(|p| self.is_dir(p))
    }

    fn defined(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.defined.contains(name))
    }

    fn defined_by(&self, owner: &str, name: &str) -> bool {
        self.files
            .iter()
            .any(|f| f.owners.contains(owner) && f.defined.contains(name))
    }
}

impl Definitions {
    fn of(path: &str, text: &str) -> Definitions {
        const KEYWORDS: &[&str] = &[
            "fn", "struct", "enum", "trait", "const", "static", "type", "union", "mod",
        ];
        let tokens = tokens(&code_only(text));
        let mut defined = BTreeSet::new();
        let mut owners: BTreeSet<String> = path
            .trim_end_matches(".rs")
            .split('/')
            .skip(1)
            .filter(|s| *s != "mod" && *s != "lib")
            .map(str::to_owned)
            .collect();
        if let Some(module) = owners.last().cloned() {
            defined.insert(module);
        }
        let ident = |at: usize| match tokens.get(at) {
            Some((Token::Ident(name), _)) => Some(name.clone()),
            _ => None,
        };
        let mut line_start = true;
        let mut previous_line = 0;
        for (at, (token, line)) in tokens.iter().enumerate() {
            line_start = *line != previous_line || (line_start && is_visibility(&tokens, at));
            previous_line = *line;
            let Token::Ident(word) = token else {
                line_start = false;
                continue;
            };
            if KEYWORDS.contains(&word.as_str()) || word == "macro_rules" {
                let next = if word == "macro_rules" {
                    at + 2
                } else {
                    at + 1
                };
                if let Some(name) = ident(next).filter(|n| !KEYWORDS.contains(&n.as_str())) {
                    if ["struct", "enum", "trait", "mod", "type", "union"].contains(&word.as_str())
                    {
                        owners.insert(name.clone());
                    }
                    defined.insert(name);
                }
            } else if word == "impl" || word == "for" {
                // `impl<T> Trait for Type<T> {`: every name up to the brace owns the block.
                for (next, _) in &tokens[at + 1..] {
                    match next {
                        Token::Punct('{') | Token::Punct(';') => break,
                        Token::Ident(name) => {
                            owners.insert(name.clone());
                        }
                        _ => {}
                    }
                }
            } else if line_start && word != "pub" {
                let next = tokens.get(at + 1).map(|t| &t.0);
                let camel = word.starts_with(|c: char| c.is_ascii_uppercase());
                let field = next == Some(&Token::Punct(':'));
                let variant =
                    camel && matches!(next, Some(Token::Punct(',' | '(' | '{' | '=' | '}')) | None);
                if field || variant {
                    defined.insert(word.clone());
                }
            }
            if word != "pub" && word != "crate" && word != "super" && word != "in" {
                line_start = false;
            }
        }
        Definitions { defined, owners }
    }
}

/// Whether the token at `at` is part of a visibility (`pub`, `pub(crate)`), after which a
/// line's first name may still follow.
fn is_visibility(tokens: &[(Token, usize)], at: usize) -> bool {
    matches!(
        &tokens[at].0,
        Token::Ident(w) if w == "crate" || w == "super" || w == "in"
    ) || matches!(tokens[at].0, Token::Punct('(' | ')'))
        && at > 0
        && matches!(&tokens[at - 1].0, Token::Ident(w) if w == "pub" || w == "crate" || w == "super")
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for path in sorted_entries(dir) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if SKIPPED.contains(&name.as_ref()) {
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        out.insert(relative);
        if path.is_dir() {
            walk(root, &path, out);
        }
    }
}

/// A backticked span of the document, with its line (from 1).
struct Span {
    line: usize,
    text: String,
    /// The span is in a heading (its folders are the section's).
    heading: bool,
    /// The span opens a paragraph or bullet (the paragraph's folder is reset before it).
    fresh: bool,
}

/// What the reader of the document meets: a heading line, or a backticked span.
enum Event {
    Heading,
    Span(Span),
}

/// The headings, and the backticked spans outside fenced code blocks.
fn events(text: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut open: Option<Span> = None;
    let mut fresh = true;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            fresh = true;
            continue;
        }
        if fenced {
            continue;
        }
        let heading = trimmed.starts_with('#');
        let numbered = trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if heading {
            out.push(Event::Heading);
        }
        if trimmed.is_empty() || heading || trimmed.starts_with("- ") || numbered {
            fresh = true;
        }
        if let Some(span) = &mut open {
            span.text.push(' ');
        }
        for c in line.chars() {
            match (&mut open, c) {
                (None, '`') => {
                    open = Some(Span {
                        line: index + 1,
                        text: String::new(),
                        heading,
                        fresh,
                    });
                }
                (Some(_), '`') => {
                    out.extend(open.take().map(Event::Span));
                    fresh = false;
                }
                (Some(span), c) => span.text.push(c),
                (None, _) => {}
            }
        }
        if heading {
            // A heading's spans end with it.
            open = None;
        }
    }
    out
}

/// How the document names a span.
enum Named {
    Path(String),
    Item(Vec<String>),
    Nothing,
}

fn classify(span: &str) -> Named {
    if span.is_empty() || span.chars().any(char::is_whitespace) {
        return Named::Nothing;
    }
    let rooted = ROOTS.iter().any(|r| span.starts_with(r));
    let file = EXTENSIONS.iter().any(|e| span.ends_with(e));
    if rooted || file || (span.ends_with('/') && span.len() > 1) {
        let path = match span.find('<') {
            Some(at) => match span[..at].rfind('/') {
                Some(slash) => &span[..=slash],
                None => return Named::Nothing,
            },
            None => span,
        };
        return Named::Path(path.to_owned());
    }
    let (name, called) = match span.strip_suffix("()") {
        Some(name) => (name, true),
        None => (span, false),
    };
    let segments: Vec<String> = name.split("::").map(str::to_owned).collect();
    let identifier = |s: &String| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !segments.iter().all(identifier) || EXTERNAL_CRATES.contains(&segments[0].as_str()) {
        return Named::Nothing;
    }
    let single = &segments[0];
    let camel = single.starts_with(|c: char| c.is_ascii_uppercase())
        && single.chars().any(|c| c.is_ascii_lowercase());
    let underscored = single.contains('_') && !single.starts_with('_') && is_uniform_case(single);
    let checked = segments.len() > 1 || called || camel || underscored;
    if !checked || segments.len() == 1 && EXTERNAL_NAMES.contains(&single.as_str()) {
        return Named::Nothing;
    }
    Named::Item(segments)
}

/// `snake_case` or `SCREAMING_CASE`, not `lowerCamel` JSON.
fn is_uniform_case(name: &str) -> bool {
    !name.chars().any(|c| c.is_ascii_uppercase()) || !name.chars().any(|c| c.is_ascii_lowercase())
}

/// Joins a folder and a relative path, `.` being the repository.
fn join(folder: &str, relative: &str) -> String {
    let relative = relative.trim_end_matches('/');
    if folder == "." {
        relative.to_owned()
    } else {
        format!("{folder}/{relative}")
    }
}

/// The offences of `text` (the document, shown as `shown`) against `tree`, one a line.
fn check(shown: &str, text: &str, tree: &Tree) -> Vec<String> {
    let mut offences = Vec::new();
    let mut mapped: BTreeSet<String> = BTreeSet::new();
    let mut section: Vec<String> = Vec::new();
    let mut paragraph: Option<String> = None;
    let mut missing_item = |line: usize, span: &str, what: String| {
        offences.push((line, format!("{shown}:{line}: `{span}`: {what}")));
    };
    let mut missing_paths: Vec<(usize, String)> = Vec::new();
    for event in events(text) {
        let span = match event {
            Event::Heading => {
                section.clear();
                paragraph = None;
                continue;
            }
            Event::Span(span) => span,
        };
        if span.fresh {
            paragraph = None;
        }
        match classify(&span.text) {
            Named::Nothing => {}
            Named::Path(path) => {
                let rooted = ROOTS.iter().any(|r| path.starts_with(r));
                let mut candidates: Vec<String> = Vec::new();
                if !rooted && !span.heading {
                    candidates.extend(paragraph.clone());
                    candidates.extend(section.iter().cloned());
                }
                candidates.push(".".to_owned());
                if !rooted {
                    candidates.push("src".to_owned());
                }
                candidates.dedup();
                let found = candidates
                    .iter()
                    .map(|folder| join(folder, &path))
                    .find(|p| tree.exists(p));
                match found {
                    Some(found) => {
                        let folder = if tree.is_dir(&found) {
                            mapped.insert(format!("{found}/mod.rs"));
                            found.clone()
                        } else {
                            mapped.insert(found.clone());
                            found.rsplit_once('/').map_or(".", |(f, _)| f).to_owned()
                        };
                        if span.heading {
                            section.push(folder);
                        } else if tree.is_dir(&found) {
                            paragraph = Some(found);
                        }
                    }
                    None => {
                        let anywhere = !rooted
                            && tree
                                .folders()
                                .any(|folder| tree.exists(&join(folder, &path)));
                        if !anywhere {
                            let looked = if rooted {
                                ".".to_owned()
                            } else {
                                format!("{}, and any folder", candidates.join(", "))
                            };
                            missing_paths.push((
                                span.line,
                                format!(
                                    "{shown}:{}: `{path}` names no file or folder (looked in: {looked})",
                                    span.line
                                ),
                            ));
                        }
                    }
                }
            }
            Named::Item(segments) => {
                if let Some(missing) = segments.iter().find(|s| !tree.defined(s)) {
                    missing_item(
                        span.line,
                        &span.text,
                        format!(
                            "`{missing}` is defined nowhere in src/ or testkit/ (no fn, struct, \
                             enum, trait, const, static, type, mod, macro, field or variant of \
                             that name)"
                        ),
                    );
                } else if let [.., owner, name] = segments.as_slice()
                    && !tree.defined_by(owner, name)
                {
                    missing_item(
                        span.line,
                        &span.text,
                        format!(
                            "`{name}` is not defined where `{owner}` is defined or implemented \
                             (nor in a module `{owner}`)"
                        ),
                    );
                }
            }
        }
    }
    offences.extend(missing_paths);
    offences.sort_by_key(|(line, _)| *line);
    let mut out: Vec<String> = offences.into_iter().map(|(_, o)| o).collect();
    let by_file: BTreeMap<&String, ()> = tree
        .sources()
        .filter(|source| !mapped.contains(*source))
        .map(|source| (source, ()))
        .collect();
    out.extend(by_file.into_keys().map(|source| {
        format!("{source}: a source file {shown} does not map (name it in its module's entry)")
    }));
    out
}
