//! The reference angr adapter (`adapters/angr`) and the C programs it is tried on
//! (`tests/adapters/programs/`), shared by the suite's provider tests and the SDK client tests
//! (one install of the adapter's environment per test process, and the two run one after
//! the other).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The adapter's folder.
pub fn adapter_dir() -> PathBuf {
    crate::repository_root().join("adapters/angr")
}

/// The adapter's folder, after `adapters/angr/install.sh` has put its virtual environment into
/// the ignored `adapters/angr/.venv` if that environment cannot import angr (once per test
/// process: every caller waits for the one install).
pub fn installed_adapter_dir() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = adapter_dir();
    let imports = Command::new(dir.join(".venv/bin/python"))
        .args(["-c", "import angr"])
        .current_dir(&dir)
        .output()
        .is_ok_and(|output| output.status.success());
    if !imports {
        let status = Command::new("sh")
            .arg(dir.join("install.sh"))
            .status()
            .expect("sh runs the adapter's install script");
        assert!(status.success(), "adapters/angr/install.sh failed");
    }
    dir
}

/// `tests/adapters/programs/<name>.c` compiled with `cc -O0` into `dir/<name>`.
pub fn compile_program(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let source = crate::repository_root()
        .join("tests/adapters/programs")
        .join(format!("{name}.c"));
    let status = Command::new("cc")
        .arg("-O0")
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .status()
        .expect("cc compiles the test program");
    assert!(status.success(), "cc -O0 {}", source.display());
    out
}
