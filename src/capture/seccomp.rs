//! The system-call filter bubblewrap installs just before the program starts (`--seccomp`):
//! the calls a bounded capture never needs, which reach the kernel's less guarded parts
//! (keyrings, BPF, performance events, io_uring, mounts and namespaces, modules, other
//! processes' memory, the clock, reboot), are refused with `EPERM`; every other call is
//! allowed. The list follows the calls container runtimes refuse by default. The filter is
//! compiled by `seccompiler` (rust-vmm's, which Firecracker uses) for the architecture rea runs
//! on, and checks it: a call through another ABI (32-bit `int 0x80`) kills the process.
//!
//! A refused call never reaches the tracer (the filter's answer comes before its stop), so it
//! is not among a capture's events.

use std::collections::BTreeMap;

use seccompiler::{BackendError, BpfProgram, SeccompAction, SeccompFilter, TargetArch};

/// The refused calls, by name and number on this architecture.
pub const REFUSED: &[(&str, i64)] = &[
    ("acct", libc::SYS_acct),
    ("add_key", libc::SYS_add_key),
    ("bpf", libc::SYS_bpf),
    ("clock_adjtime", libc::SYS_clock_adjtime),
    ("clock_settime", libc::SYS_clock_settime),
    ("delete_module", libc::SYS_delete_module),
    ("fanotify_init", libc::SYS_fanotify_init),
    ("finit_module", libc::SYS_finit_module),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fsopen", libc::SYS_fsopen),
    ("fspick", libc::SYS_fspick),
    ("init_module", libc::SYS_init_module),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("kcmp", libc::SYS_kcmp),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("kexec_load", libc::SYS_kexec_load),
    ("keyctl", libc::SYS_keyctl),
    ("mount", libc::SYS_mount),
    ("move_mount", libc::SYS_move_mount),
    ("name_to_handle_at", libc::SYS_name_to_handle_at),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("open_tree", libc::SYS_open_tree),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("pivot_root", libc::SYS_pivot_root),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("ptrace", libc::SYS_ptrace),
    ("quotactl", libc::SYS_quotactl),
    ("reboot", libc::SYS_reboot),
    ("request_key", libc::SYS_request_key),
    ("setns", libc::SYS_setns),
    ("settimeofday", libc::SYS_settimeofday),
    ("swapoff", libc::SYS_swapoff),
    ("swapon", libc::SYS_swapon),
    ("syslog", libc::SYS_syslog),
    ("umount2", libc::SYS_umount2),
    ("unshare", libc::SYS_unshare),
    ("userfaultfd", libc::SYS_userfaultfd),
];

/// Why the filter could not be built (an architecture seccompiler does not know, or a
/// program it refuses to compile).
#[derive(Debug, thiserror::Error)]
#[error("the system-call filter could not be built: {0}")]
pub struct FilterError(#[from] BackendError);

/// The filter as bubblewrap reads it from a file descriptor: `struct sock_filter` entries in
/// the machine's byte order.
pub fn filter_bytes() -> Result<Vec<u8>, FilterError> {
    let rules = REFUSED
        .iter()
        .map(|&(_, number)| (number, Vec::new()))
        .collect::<BTreeMap<_, _>>();
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for instruction in program {
        bytes.extend_from_slice(&instruction.code.to_ne_bytes());
        bytes.push(instruction.jt);
        bytes.push(instruction.jf);
        bytes.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_to_whole_instructions_and_names_each_call_once() {
        let bytes = filter_bytes().unwrap();
        assert!(!bytes.is_empty());
        assert_eq!(bytes.len() % 8, 0);
        let mut names: Vec<&str> = REFUSED.iter().map(|&(name, _)| name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REFUSED.len());
        let mut numbers: Vec<i64> = REFUSED.iter().map(|&(_, number)| number).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), REFUSED.len());
    }
}
