//! Which process holds a session of a shared store (two `rea serve` on one file: Claude
//! Desktop and Claude Code on one machine).
//!
//! A session is held by one process at a time. The holder is named by its pid and the time
//! the kernel started it (`/proc/<pid>/stat`, field 22), so a pid the kernel reused for
//! another program never passes for the holder. A lease whose holder is gone (it exited,
//! crashed or was killed) is free: there is nothing to renew and no time-out to wait for,
//! since every process on one SQLite file is on one machine.

use std::sync::OnceLock;

/// A process that may hold leases: its pid and its start time in clock ticks since boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// When the kernel started it, in clock ticks since boot (0 where `/proc` says nothing).
    pub start: u64,
}

impl Holder {
    /// This process.
    pub fn me() -> Holder {
        static ME: OnceLock<Holder> = OnceLock::new();
        *ME.get_or_init(|| {
            let pid = std::process::id();
            Holder {
                pid,
                start: start_time(pid).unwrap_or(0),
            }
        })
    }

    /// The holder a `leases` row names (SQLite keeps integers signed; a value out of range
    /// names no process that runs).
    pub fn from_row(pid: i64, start: i64) -> Holder {
        Holder {
            pid: u32::try_from(pid).unwrap_or(0),
            start: u64::try_from(start).unwrap_or(0),
        }
    }

    /// Whether this holder still runs: its pid exists and was started when it was.
    pub fn alive(&self) -> bool {
        start_time(self.pid).is_some_and(|start| start == self.start)
    }
}

/// The start time of process `pid` (field 22 of `/proc/<pid>/stat`), if it runs.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

/// Field 22 of a `/proc/<pid>/stat` line, unless the process has ended (a zombie, state `Z`
/// or `X`, that its parent has not reaped yet). The command name (field 2) is in parentheses
/// and may hold spaces and parentheses itself, so the fields are counted after its last `)`.
fn parse_start_time(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_ascii_whitespace();
    // After the name come field 3 (the state) onwards: field 22 is the 20th of them.
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_counted_after_the_last_parenthesis() {
        let fields: Vec<String> = (4..=30).map(|n| n.to_string()).collect();
        let stat = format!("42 (a (b) c) S {}", fields.join(" "));
        assert_eq!(parse_start_time(&stat), Some(22));
        let zombie = format!("42 (a (b) c) Z {}", fields.join(" "));
        assert_eq!(parse_start_time(&zombie), None);
        assert_eq!(parse_start_time("42 (short) S 1 2"), None);
        assert_eq!(parse_start_time("no parenthesis"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_is_not() {
        let me = Holder::me();
        assert!(me.alive());
        let reused = Holder {
            start: me.start.wrapping_add(1),
            ..me
        };
        assert!(!reused.alive());
    }
}
