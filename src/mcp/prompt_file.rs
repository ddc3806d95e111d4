//! Watching a prompt file (`rea serve --prompt-file`): integrator prompts that are registered
//! at start and re-registered when the file changes, so clients see
//! `notifications/prompts/list_changed` exactly when the listed catalog changed.
//!
//! The file is opened and checked like every file the server reads ([`crate::base::files`]):
//! a regular file of at most 64 MiB, never a FIFO, device or the server's own stream. It is
//! the operator's file, so `--root` does not confine it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Server;
use crate::base::files::{CheckedFile, Confinement, FileError, FileLimit};
use crate::prompts::{PromptFileError, parse_prompt_file};

/// Where the prompt file is and how often to look at it.
#[derive(Clone, Debug)]
pub struct PromptFileWatch {
    /// The JSON prompt file (see [`crate::prompts::parse_prompt_file`]).
    pub path: PathBuf,
    /// How often the file is read again.
    pub interval: Duration,
}

/// Why the prompt file could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum PromptFileLoadError {
    /// The file was refused (not a regular file, one of the server's own streams, over
    /// [`crate::base::files::MAX_PROMPT_FILE_BYTES`]) or could not be read.
    #[error("prompt file refused: {0}")]
    File(#[from] FileError),
    /// The file is not UTF-8.
    #[error("cannot read prompt file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid prompt file.
    #[error("prompt file {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: PromptFileError,
    },
    /// A definition was refused by the registry.
    #[error("prompt file {path}: {source}")]
    Register {
        /// The file.
        path: PathBuf,
        /// What the registry refused.
        source: crate::prompts::DefinitionError,
    },
}

/// The prompts a prompt file registered, to diff against the next reading.
#[derive(Debug, Default)]
pub struct PromptFileState {
    text: Option<String>,
    owned: Vec<String>,
}

impl PromptFileState {
    /// Reads `path` and, when its text changed, applies it to `server`. Returns whether the
    /// listed catalog changed. On error the previously applied prompts stay registered.
    pub fn refresh(&mut self, server: &Server, path: &Path) -> Result<bool, PromptFileLoadError> {
        let bytes = CheckedFile::open(path, &Confinement::unrestricted(), FileLimit::PROMPT_FILE)
            .and_then(CheckedFile::read_all)?;
        let text = String::from_utf8(bytes).map_err(|error| PromptFileLoadError::Read {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, error),
        })?;
        if self.text.as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        let definitions =
            parse_prompt_file(&text).map_err(|source| PromptFileLoadError::Parse {
                path: path.to_owned(),
                source,
            })?;
        let changed = server
            .sync_prompts(&self.owned, &definitions)
            .map_err(|source| PromptFileLoadError::Register {
                path: path.to_owned(),
                source,
            })?;
        self.owned = definitions.into_iter().map(|d| d.name).collect();
        self.text = Some(text);
        Ok(changed)
    }
}

/// Re-reads the prompt file every `watch.interval`, forever; errors are logged to stderr and
/// leave the previous prompts in place.
pub async fn watch(server: Server, watch: PromptFileWatch, mut state: PromptFileState) {
    let mut ticker = tokio::time::interval(watch.interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match state.refresh(&server, &watch.path) {
            Ok(true) => tracing::info!(path = %watch.path.display(), "prompt file applied"),
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, "prompt file not applied"),
        }
    }
}
