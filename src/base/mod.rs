//! The bottom of the crate: helpers with I/O and no policy, which every layer above may use.
//!
//! - [`files`]: checked opening of every file the crate reads (no symbolic links followed
//!   past a confinement root, regular files only, sizes bounded while reading), and
//!   [`Confinement`](files::Confinement).
//! - [`notices`]: what a client should see about its request (a provider call that timed
//!   out, a bound that cut a result), collected per request on the thread that runs it.
//! - `pool`: fixed pools of named threads for blocking work (the shell's tool and completion
//!   pools, and the provider pool of completion), started once and never grown.
//! - `process_dirs`: private folders a server makes in the temporary directory, named after its
//!   process, and the removal of those a killed server left (the adapters' workspace, a
//!   capture's work folder).
//! - [`Cancel`]: the cancellation signal of one request, and how work that changes state
//!   claims its commit.

mod cancel;
pub mod files;
pub mod notices;
pub(crate) mod pool;
pub(crate) mod process_dirs;

pub use cancel::{Cancel, Cancelled};
