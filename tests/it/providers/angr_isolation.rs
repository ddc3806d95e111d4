//! The real angr adapter behind the real `rea serve --provider angr`, as another local user
//! would attack it: traced with `strace -f`, it opens nothing in a folder another user can
//! write (a cache planted in the shared temporary directory is never read), and under a tiny
//! memory limit its failure names the limit.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::angr::SERVE_WITH_ANGR;
use super::angr::angr_spec;
use crate::support::server_process::ServerProcess;
use rea_testkit::angr::compile_program;

/// The angr adapter's folder, installed.
fn angr_dir() -> PathBuf {
    let spec = angr_spec();
    spec.args
        .iter()
        .map(Path::new)
        .find(|arg| arg.ends_with("rea_angr_adapter.py"))
        .and_then(Path::parent)
        .expect("the adapter script")
        .to_owned()
}

/// A folder anyone may write, as `/tmp` (mode 1777).
fn shared_tmp(parent: &Path) -> PathBuf {
    let tmp = parent.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777)).unwrap();
    tmp
}

/// The name pyvex gives its parser cache in `$TMPDIR`, asked of the adapter's own Python
/// (with a throwaway private `TMPDIR`).
fn pyvex_cache_name(scratch: &Path) -> String {
    let private = scratch.join("private-tmp");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let output = Command::new(angr_dir().join(".venv/bin/python"))
        .args([
            "-c",
            "import getpass, hashlib, pyvex.vex_ffi as v; \
             print(f'pyvex_ffi_parser_cache.{getpass.getuser()}.{hashlib.md5(v.ffi_str.encode()).hexdigest()}')",
        ])
        .env("TMPDIR", &private)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// Every path a line of `strace -f -y -s 4096` names, made absolute with the directory
/// the descriptor or working directory it is relative to names.
fn paths_of(line: &str) -> Vec<PathBuf> {
    let Some(open) = line.find('(') else {
        return Vec::new();
    };
    let call = line[..open].split_whitespace().last().unwrap_or("");
    let args = &line[open + 1..];
    let mut strings = Vec::new();
    let mut rest = args;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        // The directory named just before this string (`AT_FDCWD</dir>, "x"`, `3</dir>, "x"`).
        let before = &rest[..start];
        let base = before.rfind('<').and_then(|at| {
            before[at + 1..]
                .find('>')
                .map(|end| &before[at + 1..at + 1 + end])
        });
        strings.push((base.map(PathBuf::from), after[..end].to_owned()));
        rest = &after[end + 1..];
    }
    let wanted = match call {
        "rename" | "renameat" | "renameat2" | "link" | "linkat" => 2,
        "symlink" | "symlinkat" => 0,
        _ => 1,
    };
    let mut paths: Vec<PathBuf> = strings
        .into_iter()
        .take(wanted)
        .filter_map(|(base, text)| {
            let path = Path::new(&text);
            if path.is_absolute() {
                Some(path.to_owned())
            } else {
                base.map(|b| if text.is_empty() { b } else { b.join(path) })
            }
        })
        .collect();
    if call.starts_with("symlink") {
        // The link made, the last string.
        if let Some(last) = line.rsplit('"').nth(1) {
            paths.push(PathBuf::from(last));
        }
    }
    paths
}

/// Whether a user other than this one may write in `dir`.
fn others_may_write(dir: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(dir) else {
        return false;
    };
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.mode();
    mode & 0o002 != 0
        || (mode & 0o020 != 0 && meta.gid() != rustix::process::getegid().as_raw())
        || (mode & 0o200 != 0 && meta.uid() != me && meta.uid() != 0)
}

/// Calls `name` until it succeeds (angr answers "not ready" while its CFG is built).
fn until_ready(server: &mut ServerProcess, name: &str, arguments: Value) -> Value {
    let until = Instant::now() + Duration::from_secs(180);
    loop {
        let result = server.tool(name, arguments.clone());
        if result["isError"] == json!(false) {
            return result;
        }
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(
            text.contains("still being built") && Instant::now() < until,
            "{name}: {result}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn angr_traced_opens_nothing_in_a_folder_another_user_can_write() {
    let scratch = tempfile::tempdir().unwrap();
    let binary = compile_program(scratch.path(), "report");
    let shared = shared_tmp(scratch.path());
    // The attack: a pickle in the shared temporary directory, under the name pyvex reads,
    // that runs code when it is loaded.
    let marker = scratch.path().join("planted-code-ran");
    let planted = shared.join(pyvex_cache_name(scratch.path()));
    let status = Command::new(angr_dir().join(".venv/bin/python"))
        .args([
            "-c",
            "import os, pickle, sys\n\
             class P:\n    def __reduce__(self): return (os.system, ('touch ' + sys.argv[2],))\n\
             open(sys.argv[1], 'wb').write(pickle.dumps(P()))",
        ])
        .arg(&planted)
        .arg(&marker)
        .status()
        .unwrap();
    assert!(status.success());

    let trace = scratch.path().join("trace");
    let mut command = Command::new("strace");
    command
        .args(["-f", "-y", "-qq", "-s", "4096", "-e", "trace=%file", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(SERVE_WITH_ANGR)
        .arg(angr_dir())
        // Everything the server's environment names is the shared folder.
        .env("TMPDIR", &shared)
        .env("HOME", &shared)
        .env("XDG_CACHE_HOME", &shared)
        .env("XDG_CONFIG_HOME", &shared)
        .env("XDG_DATA_HOME", &shared)
        .stderr(Stdio::null());
    let mut server = ServerProcess::with_command(command);
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], json!(false), "{opened}");
    let listed = until_ready(&mut server, "list_procedures", json!({"provider": "angr"}));
    assert!(
        listed.to_string().contains("make_report"),
        "angr works: {listed}"
    );
    let decompiled = until_ready(
        &mut server,
        "decompile",
        json!({"provider": "angr", "procedure": "make_report"}),
    );
    assert!(
        decompiled.to_string().contains("make_report"),
        "{decompiled}"
    );
    assert!(server.finish().success());

    assert!(!marker.exists(), "the planted pickle was loaded");
    let trace = std::fs::read_to_string(&trace).unwrap();
    let workspace = trace
        .lines()
        .filter(|line| line.contains("mkdir"))
        .flat_map(paths_of)
        .find(|path| {
            path.parent() == Some(shared.as_path())
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("rea-adapters-"))
        })
        .expect("the server made its private folder");
    let installed = [
        crate::root().to_path_buf(),
        PathBuf::from(env!("CARGO_BIN_EXE_rea-under-test")),
        angr_dir(),
    ];
    let mut offending = BTreeSet::new();
    let mut checked = 0;
    for line in trace.lines() {
        for path in paths_of(line) {
            checked += 1;
            // The folder, what is in it, and the folders leading to it (looked at when a
            // path in it is resolved).
            if path.starts_with(&workspace) || workspace.starts_with(&path) {
                continue;
            }
            // The folders leading to where rea, its adapter and the adapter's Python are
            // installed (a checkout may well lie in /tmp) are the installer's choice.
            if installed.iter().any(|place| place.starts_with(&path)) {
                continue;
            }
            if path.parent().is_some_and(others_may_write) {
                offending.insert(format!("{} ({line})", path.display()));
            }
        }
    }
    println!(
        "strace: {} lines, {checked} paths, private folder {}",
        trace.lines().count(),
        workspace.display()
    );
    assert!(
        offending.is_empty(),
        "paths in folders another user can write:\n{}",
        offending.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn angr_under_a_tiny_memory_limit_names_the_limit() {
    let scratch = tempfile::tempdir().unwrap();
    let binary = compile_program(scratch.path(), "report");
    for mib in [1, 16, 48, 128] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rea-under-test"));
        command
            .args(SERVE_WITH_ANGR)
            .arg(angr_dir())
            .args(["--adapter-memory-mib", &mib.to_string()])
            .stderr(Stdio::null());
        let mut server = ServerProcess::with_command(command);
        let opened = server.tool("open_binary", json!({"path": binary}));
        assert_eq!(opened["isError"], json!(false), "{opened}");
        let result = server.tool("list_procedures", json!({"provider": "angr"}));
        assert_eq!(result["isError"], json!(true), "{mib} MiB: {result}");
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        println!("{mib} MiB: {text}");
        assert!(
            text.contains(&format!(
                "ran out of its memory limit of {mib} MiB (--adapter-memory-mib)"
            )),
            "{mib} MiB: {text}"
        );
        assert!(!text.contains("libz3.so not found") || text.contains("memory limit"));
    }
}
