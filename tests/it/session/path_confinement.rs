//! Confinement: with allowed roots (`--root`, or `SessionStore::set_confinement`, which confines every session of the store), paths inside are
//! opened, paths outside and links escaping the roots are refused, on the opened descriptor.

use std::os::unix::fs::symlink;
use std::process::{Command, Stdio};

use rea::files::Confinement;
use serde_json::json;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::tools::{closed, failure, success};

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("path_confinement__{name}"), text);
    });
}

struct Tree {
    inside: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let inside = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let binary = build(&Spec::sample(), Format::Elf).bytes;
        std::fs::write(inside.path().join("app"), &binary).unwrap();
        std::fs::write(outside.path().join("secret"), &binary).unwrap();
        std::fs::create_dir(outside.path().join("tree")).unwrap();
        std::fs::write(outside.path().join("tree/file"), b"outside").unwrap();
        symlink(outside.path().join("secret"), inside.path().join("escape")).unwrap();
        symlink(
            outside.path().join("tree"),
            inside.path().join("escape-dir"),
        )
        .unwrap();
        Tree { inside, outside }
    }

    fn path(&self, relative: &str) -> String {
        self.inside.path().join(relative).display().to_string()
    }

    /// [`snapshot`], with the two directories filtered out as `[inside]` and `[outside]`.
    fn snapshot(&self, name: &str, text: &str) {
        use crate::support::snapshots::filter_path;
        let mut settings = crate::support::snapshots::settings();
        filter_path(&mut settings, self.inside.path(), "[inside]");
        filter_path(&mut settings, self.outside.path(), "[outside]");
        let canonical = std::fs::canonicalize(self.inside.path()).unwrap();
        filter_path(&mut settings, &canonical, "[inside]");
        settings.bind(|| snapshot(name, text));
    }
}

#[test]
fn tools_open_inside_the_roots_and_refuse_the_rest() {
    let tree = Tree::new();
    let (session, tools) = closed();
    tools
        .store()
        .set_confinement(Confinement::to_roots([tree.inside.path()]).unwrap());
    assert!(session.confinement().roots().is_some());

    success(&tools, "open_binary", json!({"path": tree.path("app")}));
    success(
        &tools,
        "inventory_artifacts",
        json!({"path": tree.path("")}),
    );
    let outside_file = tree.outside.path().join("secret").display().to_string();
    let outside_dir = tree.outside.path().join("tree").display().to_string();
    let messages = [
        failure(&tools, "open_binary", json!({"path": outside_file})),
        failure(&tools, "open_binary", json!({"path": tree.path("escape")})),
        failure(&tools, "inventory_artifacts", json!({"path": outside_dir})),
        failure(
            &tools,
            "inventory_artifacts",
            json!({"path": tree.path("escape-dir")}),
        ),
    ];
    for message in &messages {
        assert!(message.contains("outside the allowed roots"), "{message}");
    }
    tree.snapshot("refused", &messages.join("\n"));

    // Unrestricted again: today's behaviour.
    tools.store().set_confinement(Confinement::unrestricted());
    success(&tools, "open_binary", json!({"path": tree.path("escape")}));
}

#[test]
fn the_root_flag_confines_the_command_line() {
    let tree = Tree::new();
    let run = |open: &str| {
        Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
            .args(["complete", "--root"])
            .arg(tree.inside.path())
            .args(["--open", open])
            .args(["--prompt", "trace_crash", "--argument", "procedure"])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let inside = run(&tree.path("app"));
    assert!(
        inside.status.success(),
        "{}",
        String::from_utf8_lossy(&inside.stderr)
    );
    let escaping = run(&tree.path("escape"));
    assert!(!escaping.status.success());
    let stderr = String::from_utf8(escaping.stderr).unwrap();
    assert!(stderr.contains("outside the allowed roots"), "{stderr}");
    tree.snapshot("root_flag", stderr.trim());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A path is allowed exactly when one of the roots is a whole-component prefix of it.
    #[test]
    fn allowed_exactly_below_a_root(
        roots in proptest::collection::vec("[ab]{1,2}(/[ab]{1,2}){0,2}", 0..3),
        path in "[ab]{1,2}(/[ab]{1,2}){0,3}",
    ) {
        let base = tempfile::tempdir().unwrap();
        let root_dirs: Vec<std::path::PathBuf> = roots
            .iter()
            .map(|root| {
                let dir = base.path().join(root);
                std::fs::create_dir_all(&dir).unwrap();
                dir
            })
            .collect();
        let confinement = Confinement::to_roots(&root_dirs).unwrap();
        let canonical_base = std::fs::canonicalize(base.path()).unwrap();
        let candidate = canonical_base.join(&path);
        let expected = roots.iter().any(|root| {
            path == *root || path.starts_with(&format!("{root}/"))
        });
        proptest::prop_assert_eq!(confinement.allows(&candidate), expected);
        proptest::prop_assert!(Confinement::unrestricted().allows(&candidate));
    }
}

#[test]
fn messages_that_need_a_broken_system_to_happen() {
    use rea::files::FileError;
    use rea::inventory::InventoryError;
    use rea::tools::ToolError;
    let missing_root = Confinement::to_roots(["/nonexistent/rea-root"]).unwrap_err();
    let messages = [
        missing_root.to_string(),
        FileError::Unlocatable {
            path: "/some/file".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        }
        .to_string(),
        FileError::OutsideRoots {
            path: "/some/file".into(),
            roots: Vec::new(),
        }
        .to_string(),
        InventoryError::TimedOut {
            path: "/big/tree".into(),
            seconds: rea::inventory::MAX_INVENTORY_DURATION.as_secs(),
        }
        .to_string(),
        ToolError::Cancelled {
            tool: "inventory_artifacts",
        }
        .to_string(),
    ];
    snapshot("rare_messages", &messages.join("\n"));
}

#[test]
fn a_refusal_lists_at_most_eight_roots_each_cut_like_caller_text() {
    use rea::files::FileError;
    // A client declares its roots: long ones, and many.
    let root = |index: usize| std::path::PathBuf::from(format!("/{}{index}", "r".repeat(300)));
    let error = FileError::OutsideRoots {
        path: "/some/file".into(),
        roots: (0..10).map(root).collect(),
    };
    let message = error.to_string();
    assert!(!message.contains(&"r".repeat(65)), "{message}");
    assert_eq!(message.matches("rrr...").count(), 8, "{message}");
    assert!(
        message.contains("..., and 2 more); only files below them may be opened"),
        "{message}"
    );
}
