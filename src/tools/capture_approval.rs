//! The person's approval of one `run_process_capture` run (docs/CONTRACT.md section 10).
//!
//! A run is described by its [`Proposal`]: the program (real path and SHA-256), its arguments,
//! standard input, environment, bounds and sandbox; that is what the person is shown. The MCP
//! shell runs the tool twice. First inside [`propose`]: a run that needs the person's approval
//! stops once its arguments, program and sandbox are checked, before anything starts, and
//! leaves its proposal. Then, once the person accepted, inside [`approved`] with the
//! [`PersonApproval`] that names the proposal's digest: the run goes on only when the proposal
//! it computes again is the same (the same program bytes, arguments, input, environment and
//! bounds), so an approval cannot be moved to another run.
//!
//! Both scopes belong to the thread that runs the call (as [`crate::base::notices`] do), so one
//! call's approval never reaches another; a call outside both (a library caller's
//! [`super::ToolBox::call`]) has no person to ask and runs nothing unless the operator's policy
//! approves.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::Digest;

/// What one run would do, as the person is asked to approve it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Proposal {
    /// The program's real path.
    pub program: String,
    /// The SHA-256 of the program's bytes.
    pub sha256: String,
    /// The open document it is, if any.
    pub document: Option<String>,
    /// The arguments after the program's name.
    pub arguments: Vec<String>,
    /// Bytes written to its standard input.
    pub stdin_bytes: usize,
    /// The SHA-256 of its standard input.
    pub stdin_sha256: String,
    /// Its whole environment.
    pub environment: BTreeMap<String, String>,
    /// Wall time in seconds.
    pub timeout_secs: u64,
    /// Bytes kept per output stream.
    pub max_output_bytes: u64,
    /// Address space per process, MiB.
    pub max_memory_mib: u64,
    /// Processes at once.
    pub max_processes: u64,
    /// What the sandbox allows, in words.
    pub sandbox: String,
}

impl Proposal {
    /// The SHA-256 (hex) of the proposal's canonical JSON: what an approval names.
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_vec(self).unwrap_or_default();
        crate::text::hex(&sha2::Sha256::digest(&canonical))
    }

    /// What the person reads before answering: every field that decides what runs, each
    /// text in full and quoted as Rust quotes it (arguments are the agent's, untrusted:
    /// quotes, control and bidi characters are escaped, never rendered, and nothing is cut).
    pub fn message(&self) -> String {
        let mut text = String::from(
            "An agent asks rea to run a program once in its capture sandbox. \
             Accept runs it once, as described; decline or cancel runs nothing.\n\n",
        );
        let _ = writeln!(text, "Program: {:?}", self.program);
        let _ = writeln!(text, "SHA-256: {}", self.sha256);
        if let Some(document) = &self.document {
            let _ = writeln!(text, "Document: {document:?}");
        }
        if self.arguments.is_empty() {
            text.push_str("Arguments: none\n");
        } else {
            let quoted: Vec<String> = self
                .arguments
                .iter()
                .map(|argument| format!("{argument:?}"))
                .collect();
            let _ = writeln!(text, "Arguments: {}", quoted.join(" "));
        }
        let _ = writeln!(
            text,
            "Standard input: {} bytes (SHA-256 {})",
            self.stdin_bytes, self.stdin_sha256
        );
        let environment: Vec<String> = self
            .environment
            .iter()
            .map(|(name, value)| format!("{name}={value:?}"))
            .collect();
        let _ = writeln!(text, "Environment: {}", environment.join(" "));
        let _ = writeln!(
            text,
            "Bounds: {} s wall time, {} bytes kept per output stream, {} MiB of memory per \
             process, {} processes",
            self.timeout_secs, self.max_output_bytes, self.max_memory_mib, self.max_processes
        );
        let _ = write!(text, "Sandbox: {}", self.sandbox);
        text
    }
}

/// The person's yes to one [`Proposal`], for [`approved`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonApproval {
    /// Who approved, as the capture records it (`approval.approved_by`).
    pub by: String,
    /// When (RFC 3339).
    pub at: String,
    /// The [`Proposal::digest`] approved.
    pub digest: String,
}

impl PersonApproval {
    /// The approval of `proposal` by `by`, now.
    pub fn of(proposal: &Proposal, by: String) -> PersonApproval {
        PersonApproval {
            by,
            at: rfc3339(SystemTime::now()),
            digest: proposal.digest(),
        }
    }
}

/// What the call's thread holds.
enum Scope {
    /// Asking: the run leaves its proposal here and stops.
    Asking(Option<Proposal>),
    /// Approved: the run may go on when its proposal has this digest.
    Approved(PersonApproval),
}

thread_local! {
    static SCOPE: RefCell<Option<Scope>> = const { RefCell::new(None) };
}

/// Restores the thread's earlier scope when the work ends, even by a panic.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        let earlier = self.0.take();
        SCOPE.with(|scope| *scope.borrow_mut() = earlier);
    }
}

fn within<T>(scope: Scope, work: impl FnOnce() -> T) -> (T, Option<Scope>) {
    let earlier = SCOPE.with(|cell| cell.borrow_mut().replace(scope));
    let restore = Restore(earlier);
    let answer = work();
    let left = SCOPE.with(|cell| cell.borrow_mut().take());
    drop(restore);
    (answer, left)
}

/// Runs `work` (a `run_process_capture` call) so that a run needing the person's approval
/// stops before it starts and yields its proposal (its answer then is the
/// [`crate::capture::RunCaptureError::NotApproved`] error, which the shell replaces).
pub fn propose<T>(work: impl FnOnce() -> T) -> (T, Option<Proposal>) {
    let (answer, left) = within(Scope::Asking(None), work);
    let proposal = match left {
        Some(Scope::Asking(proposal)) => proposal,
        _ => None,
    };
    (answer, proposal)
}

/// Runs `work` (a `run_process_capture` call) with the person's `approval`.
pub fn approved<T>(approval: PersonApproval, work: impl FnOnce() -> T) -> T {
    within(Scope::Approved(approval), work).0
}

/// What the run found on its thread, once its proposal is known.
pub(super) enum Found {
    /// The person approved this proposal.
    Approved(PersonApproval),
    /// The person approved another proposal.
    Changed,
    /// The shell is asking: the proposal was left for it.
    Asking,
    /// Nobody can be asked.
    Nobody,
}

/// Looks for the approval of `proposal` on this thread (and leaves `proposal` when asking).
pub(super) fn find(proposal: &Proposal) -> Found {
    SCOPE.with(|cell| match &mut *cell.borrow_mut() {
        Some(Scope::Approved(approval)) if approval.digest == proposal.digest() => {
            Found::Approved(approval.clone())
        }
        Some(Scope::Approved(_)) => Found::Changed,
        Some(Scope::Asking(left)) => {
            *left = Some(proposal.clone());
            Found::Asking
        }
        None => Found::Nobody,
    })
}

/// `time` as RFC 3339 in UTC, to the second.
pub(super) fn rfc3339(time: SystemTime) -> String {
    let seconds = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    format!("{}Z", crate::text::utc_date_time(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(arguments: &[&str]) -> Proposal {
        Proposal {
            program: "/opt/app".into(),
            sha256: "0".repeat(64),
            document: None,
            arguments: arguments.iter().map(|a| (*a).to_owned()).collect(),
            stdin_bytes: 0,
            stdin_sha256: "0".repeat(64),
            environment: BTreeMap::from([("PATH".into(), "/usr/bin".into())]),
            timeout_secs: 10,
            max_output_bytes: 1,
            max_memory_mib: 16,
            max_processes: 1,
            sandbox: "bubblewrap".into(),
        }
    }

    #[test]
    fn the_message_escapes_what_a_terminal_or_a_form_would_render_and_cuts_nothing() {
        let long = "a".repeat(4_096);
        let message =
            proposal(&["--x\u{202e}gpj.exe", "two words", "line\nbreak", &long]).message();
        assert!(
            message.contains(r#"Arguments: "--x\u{202e}gpj.exe" "two words" "line\nbreak""#),
            "{message}"
        );
        assert!(!message.contains('\u{202e}'));
        assert!(message.contains(&long));
    }

    #[test]
    fn the_digest_tells_apart_runs_that_differ_in_any_field() {
        let one = proposal(&["a b"]);
        let two = proposal(&["a", "b"]);
        assert_ne!(one.digest(), two.digest());
        assert_eq!(one.digest(), proposal(&["a b"]).digest());
    }

    #[test]
    fn an_approval_reaches_only_the_run_it_names_on_its_own_thread() {
        let one = proposal(&["a"]);
        let approval = PersonApproval::of(&one, "the person".into());
        approved(approval, || {
            assert!(matches!(find(&one), Found::Approved(_)));
            assert!(matches!(find(&proposal(&["b"])), Found::Changed));
            std::thread::spawn(move || assert!(matches!(find(&one), Found::Nobody)))
                .join()
                .unwrap();
        });
        assert!(
            matches!(find(&proposal(&["a"])), Found::Nobody),
            "the scope ended"
        );
        let ((), left) = propose(|| assert!(matches!(find(&proposal(&["c"])), Found::Asking)));
        assert_eq!(left, Some(proposal(&["c"])));
    }
}
