//! The server's private folder for its adapters, and the environment they run in.
//!
//! An adapter never sees a folder another user can write: the server makes one folder of its
//! own, `rea-adapters-<pid>-<start>-<nonce>` in its temporary directory, mode 0700, on the
//! first adapter start, with `home`, `tmp`, `cache`, `config`, `data`, `state` and `run` in
//! it. Every adapter runs in `home`, with its environment cleared but for `PATH` and the
//! locale (`LANG`, `LC_ALL`, `LC_CTYPE`), and `HOME`,
//! `TMPDIR` (and `TEMP`, `TMP`) and the XDG base directories pointing into the folder, so
//! a library's cache (pyvex unpickles `$TMPDIR/pyvex_ffi_parser_cache.*`) can only be the
//! server's own. The private copies of the binaries live in the folder too (`copy-<n>`), one
//! per running adapter, written when it starts and removed when it stops.
//!
//! The folder is removed when the server's adapters are dropped. A server killed before that
//! leaves it: [`remove_stale`], at start, removes the folders of this user's servers that no
//! longer run (their process id is gone, or is another process's now).

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::base::process_dirs;

/// The name every workspace folder starts with.
const PREFIX: &str = "rea-adapters-";

/// The name of the folders of the private copies before workspaces (one folder per copy,
/// straight in the temporary directory), still removed by [`remove_stale`].
const OLD_PREFIX: &str = "rea-adapter-";

/// The folders made in the workspace, and the variables pointing to them.
const FOLDERS: [(&str, &[&str]); 7] = [
    ("home", &["HOME"]),
    ("tmp", &["TMPDIR", "TEMP", "TMP"]),
    ("cache", &["XDG_CACHE_HOME"]),
    ("config", &["XDG_CONFIG_HOME"]),
    ("data", &["XDG_DATA_HOME"]),
    ("state", &["XDG_STATE_HOME"]),
    ("run", &["XDG_RUNTIME_DIR"]),
];

/// The variables of the server's environment an adapter is given: where programs are, and
/// the locale.
const KEPT: [&str; 4] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE"];

/// The server's private folder (see the [module documentation](self)); removed when dropped.
#[derive(Debug)]
pub(super) struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Makes the folder in the temporary directory (`TMPDIR`, else `/tmp`).
    fn create() -> io::Result<Workspace> {
        let workspace = Workspace {
            root: process_dirs::create(PREFIX)?,
        };
        for (folder, _) in FOLDERS {
            fs::DirBuilder::new()
                .mode(0o700)
                .create(workspace.root.join(folder))?;
        }
        Ok(workspace)
    }

    /// Fails unless the folder is a directory of this user that nobody else may enter.
    fn check_private(&self) -> io::Result<()> {
        process_dirs::check_private(&self.root)
    }

    /// Clears `command`'s environment but for [`KEPT`], points `HOME`, `TMPDIR` and the XDG
    /// directories into the folder, and runs it in `home`.
    pub(super) fn confine(&self, command: &mut Command) {
        command.env_clear();
        for kept in KEPT {
            if let Some(value) = std::env::var_os(kept) {
                command.env(kept, value);
            }
        }
        for (folder, variables) in FOLDERS {
            for variable in variables {
                command.env(variable, self.root.join(folder));
            }
        }
        // No user site-packages (~/.local is the private home anyway) and no `__pycache__`
        // written beside scripts that are not the installer's.
        command.env("PYTHONNOUSERSITE", "1");
        command.env("PYTHONDONTWRITEBYTECODE", "1");
        command.current_dir(self.root.join("home"));
    }

    /// Writes `bytes` to a file only this user can read, in a folder of its own in the
    /// workspace.
    pub(super) fn copy(self: &Arc<Workspace>, bytes: &[u8]) -> io::Result<PrivateCopy> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = self
            .root
            .join(format!("copy-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let file = dir.join("binary");
        let copy = PrivateCopy {
            dir,
            file,
            _workspace: Arc::clone(self),
        };
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .open(&copy.file)
            .and_then(|mut out| io::Write::write_all(&mut out, bytes))?;
        Ok(copy)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// The workspace of one server, made on first use and kept while anything uses it.
#[derive(Debug, Default)]
pub(super) struct Shared {
    made: Mutex<Option<Arc<Workspace>>>,
}

impl Shared {
    /// The workspace, made now if it is not there yet (or was removed from under the server).
    pub(super) fn get(&self) -> io::Result<Arc<Workspace>> {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(workspace) = made.as_ref()
            && workspace.check_private().is_ok()
        {
            return Ok(Arc::clone(workspace));
        }
        let workspace = Arc::new(Workspace::create()?);
        *made = Some(Arc::clone(&workspace));
        Ok(workspace)
    }
}

/// A private copy of a binary in the workspace, removed when dropped.
#[derive(Debug)]
pub(super) struct PrivateCopy {
    dir: PathBuf,
    file: PathBuf,
    _workspace: Arc<Workspace>,
}

impl PrivateCopy {
    /// The file.
    pub(super) fn file(&self) -> &Path {
        &self.file
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Whether the folder named `name` belongs to a server that no longer runs.
fn is_stale(name: &str) -> bool {
    if let Some(rest) = name.strip_prefix(OLD_PREFIX) {
        // No start time was recorded: only a process id that is gone is certain.
        let Some(Ok(pid)) = rest.split('-').next().map(str::parse::<u32>) else {
            return false;
        };
        return process_dirs::start_time(pid).is_none();
    }
    process_dirs::is_stale(name, PREFIX)
}

/// Removes the adapters' folders (and the private copies of earlier versions) that this
/// user's servers left in the temporary directory when they were killed: those named after a
/// server that no longer runs and owned by this user. Returns how many were removed.
pub fn remove_stale() -> usize {
    process_dirs::remove_stale(is_stale, "the adapters' folder")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_folder_is_not_stale_and_a_gone_one_is() {
        let pid = std::process::id();
        let start = process_dirs::start_time(pid).unwrap();
        assert!(!is_stale(&format!("{PREFIX}{pid}-{start}-00ff")));
        assert!(is_stale(&format!("{PREFIX}{pid}-{}-00ff", start + 1)));
        assert!(!is_stale(&format!("{OLD_PREFIX}{pid}-3-17")));
        // Process ids stop below 2^22 on Linux.
        assert!(is_stale(&format!("{OLD_PREFIX}{}-3-17", u32::MAX)));
        assert!(!is_stale("rea-adapters-x-y"));
        assert!(!is_stale("something-else"));
    }
}
