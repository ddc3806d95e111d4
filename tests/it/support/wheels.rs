//! Real extension modules from a pinned Python wheel (`markupsafe` 2.1.5) for other
//! platforms (macOS x86-64, Windows x64 and x86), downloaded at test time into the ignored
//! `target/wheels` folder (see `TESTDATA.md`), and the tools they are compared with.

use std::path::PathBuf;
use std::process::Command;

/// The pinned wheel.
const WHEEL: &str = "markupsafe==2.1.5";

/// Output of `program args`, or `None` (with a message) when it cannot run.
pub fn run(program: &str, args: &[&str]) -> Option<String> {
    match Command::new(program).args(args).output() {
        Ok(output) if output.status.success() => {
            Some(String::from_utf8_lossy(&output.stdout).into_owned())
        }
        Ok(output) => {
            println!(
                "skipped: {program} failed: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            None
        }
        Err(error) => {
            println!("skipped: {program} is not available: {error}");
            None
        }
    }
}

/// The extension module with `extension` of the wheel for `platform`, downloaded and unpacked
/// under `target/wheels/<platform>` once.
pub fn extension(platform: &str, extension: &str) -> Option<PathBuf> {
    let root = crate::root().join("target").join("wheels").join(platform);
    let unpacked = root.join("x");
    if !unpacked.exists() {
        let destination = root.to_str()?;
        run(
            "pip",
            &[
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.11",
                "--platform",
                platform,
                WHEEL,
                "-d",
                destination,
            ],
        )?;
        let wheel = std::fs::read_dir(&root)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|e| e == "whl"))?;
        run(
            "python3",
            &["-m", "zipfile", "-e", wheel.to_str()?, unpacked.to_str()?],
        )?;
    }
    let found = std::fs::read_dir(unpacked.join("markupsafe"))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().ends_with(extension));
    if found.is_none() {
        println!("skipped: no {extension} in the {platform} wheel");
    }
    found
}
