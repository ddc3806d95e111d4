//! Private folders a server makes for itself in the temporary directory, named after its
//! process so that a later server can remove those a killed one left behind.
//!
//! A folder is `<prefix><pid>-<start>-<nonce>`: the server's process id, when that process
//! started (so a process id used again later is told apart), and a number hard to guess from
//! outside. It is made with mode 0700, and the name is never reused: making it fails when it
//! exists. The server removes its folders when it is done with them; a server killed before
//! that leaves them, and [`remove_stale`] (at a later server's start) removes those of this
//! user whose server no longer runs.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many names are tried when one is taken.
const NAME_TRIES: usize = 8;

/// Makes a new private folder, `<prefix><pid>-<start>-<nonce>`, in the temporary directory
/// (`TMPDIR`, else `/tmp`), and checks that it is private ([`check_private`]).
pub(crate) fn create(prefix: &str) -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    let pid = std::process::id();
    let start = start_time(pid).unwrap_or(0);
    let mut last = None;
    for _ in 0..NAME_TRIES {
        let path = base.join(format!("{prefix}{pid}-{start}-{:016x}", nonce()));
        match fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {
                check_private(&path)?;
                return Ok(path);
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other(format!("no free name for a {prefix} folder"))))
}

/// Fails unless `path` is a directory of this user that nobody else may enter.
pub(crate) fn check_private(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    let private = meta.is_dir()
        && meta.uid() == rustix::process::geteuid().as_raw()
        && meta.mode() & 0o077 == 0;
    if private {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{} is not a private folder of this user",
            path.display()
        )))
    }
}

/// When process `pid` started (field 22 of `/proc/<pid>/stat`, in clock ticks since boot), or
/// `None` when no such process runs.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything: count after it.
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether `name` is a folder of [`create`] with `prefix` whose server no longer runs (its
/// process id is gone, or is another process's now).
pub(crate) fn is_stale(name: &str, prefix: &str) -> bool {
    let Some(rest) = name.strip_prefix(prefix) else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_time(pid) != Some(start)
}

/// Removes the folders in the temporary directory that `stale` names and this user owns;
/// `what` names them in the log. Returns how many were removed.
pub(crate) fn remove_stale(stale: impl Fn(&str) -> bool, what: &str) -> usize {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let me = rustix::process::geteuid().as_raw();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !OsStr::to_str(&name).is_some_and(&stale) {
            continue;
        }
        let path = entry.path();
        let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if ours && fs::remove_dir_all(&path).is_ok() {
            tracing::info!(folder = %path.display(), "removed {what} of a server that no longer runs");
            removed += 1;
        }
    }
    removed
}

/// A number no other folder name of this process has had, hard to guess from outside.
fn nonce() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "rea-test-";

    #[test]
    fn this_process_folder_is_not_stale_and_a_gone_one_is() {
        let pid = std::process::id();
        let start = start_time(pid).unwrap();
        assert!(!is_stale(&format!("{PREFIX}{pid}-{start}-00ff"), PREFIX));
        assert!(is_stale(
            &format!("{PREFIX}{pid}-{}-00ff", start + 1),
            PREFIX
        ));
        // Process ids stop below 2^22 on Linux.
        assert!(is_stale(&format!("{PREFIX}{}-3-17", u32::MAX), PREFIX));
        assert!(!is_stale(&format!("{PREFIX}x-y"), PREFIX));
        assert!(!is_stale(&format!("{PREFIX}0123456789abcdef"), PREFIX));
        assert!(!is_stale(&format!("other-{}-3-17", u32::MAX), PREFIX));
    }

    #[test]
    fn a_made_folder_is_private_named_after_this_process_and_never_reused() {
        let first = create(PREFIX).unwrap();
        let second = create(PREFIX).unwrap();
        let mode = fs::metadata(&first).unwrap().mode();
        let name = first.file_name().unwrap().to_str().unwrap().to_owned();
        for path in [&first, &second] {
            fs::remove_dir(path).unwrap();
        }
        assert_ne!(first, second);
        assert_eq!(mode & 0o777, 0o700);
        let start = start_time(std::process::id()).unwrap();
        assert!(
            name.starts_with(&format!("{PREFIX}{}-{start}-", std::process::id())),
            "{name}"
        );
        assert!(!is_stale(&name, PREFIX));
    }
}
