//! Procedure starts of code no table describes (a 32-bit PE has no `.pdata`): from the known
//! starts (the entry point, the exports), each procedure is decoded by following its branches,
//! and every direct call target in executable code is a new start, decoded in turn.
//!
//! A block ends at a return, an indirect jump, a trap, an undecodable instruction, the end of
//! its region, or an unconditional jump, whose target is decoded as part of the same procedure
//! unless it is a known start (a tail call). Calls through memory (`call [slot]`) and
//! addresses the caller excludes (import thunks) are not starts.
//!
//! # Bounds
//!
//! One discovery decodes at most [`MAX_DISCOVERY_INSTRUCTIONS`] instructions, finds at most
//! [`MAX_DISCOVERED_STARTS`] starts and stops after [`MAX_DISCOVERY_TIME`]; the starts found
//! by then are kept.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use super::decode::{Flow, Isa, Next};
use super::sweep::sweep;
use crate::providers::native::region::Region;
use crate::session::ReferenceKind;

/// Most instructions one discovery decodes.
pub const MAX_DISCOVERY_INSTRUCTIONS: u64 = 5_000_000;

/// Most procedure starts one discovery finds.
pub const MAX_DISCOVERED_STARTS: usize = 200_000;

/// Longest one discovery runs.
pub const MAX_DISCOVERY_TIME: Duration = Duration::from_secs(5);

/// Instructions decoded between two looks at the clock.
const CLOCK_EVERY: u64 = 4_096;

/// The file-backed executable bytes from `address` to the end of its region.
fn code_at<'a>(image: &'a [u8], regions: &[Region], address: u64) -> Option<&'a [u8]> {
    regions
        .iter()
        .filter(|region| region.segment.permissions.execute)
        .find_map(|region| {
            let offset = address.checked_sub(region.segment.address.value())?;
            let rest = region.bytes(image).get(usize::try_from(offset).ok()?..)?;
            (!rest.is_empty()).then_some(rest)
        })
}

/// The direct call targets reachable from `known` starts (see the [module
/// documentation](self)), in address order, without the known starts and the `excluded`
/// addresses.
pub(crate) fn call_targets(
    isa: Isa,
    image: &[u8],
    regions: &[Region],
    known: &[u64],
    excluded: &dyn Fn(u64) -> bool,
) -> Vec<u64> {
    let deadline = Instant::now() + MAX_DISCOVERY_TIME;
    let is_code = |address: u64| code_at(image, regions, address).is_some();
    let mut starts: HashSet<u64> = known.iter().copied().filter(|&a| is_code(a)).collect();
    let mut queue: VecDeque<u64> = starts.iter().copied().collect();
    queue.make_contiguous().sort_unstable();
    let mut found = Vec::new();
    let mut decoded: HashSet<u64> = HashSet::new();
    let mut instructions: u64 = 0;
    let mut stopped = false;
    while let Some(start) = queue.pop_front() {
        let mut blocks = vec![start];
        while let Some(block) = blocks.pop() {
            if !decoded.insert(block) {
                continue;
            }
            let Some(bytes) = code_at(image, regions, block) else {
                continue;
            };
            sweep(isa, bytes, block, false, &mut |step, _| {
                if step.address != block && decoded.contains(&step.address) {
                    return Next::Stop;
                }
                instructions += 1;
                if instructions > MAX_DISCOVERY_INSTRUCTIONS
                    || (instructions.is_multiple_of(CLOCK_EVERY) && Instant::now() > deadline)
                {
                    stopped = true;
                    return Next::Stop;
                }
                match (step.flow, step.reference) {
                    (Flow::Next, Some((to, ReferenceKind::Call)))
                        if is_code(to) && !excluded(to) && starts.len() < MAX_DISCOVERED_STARTS =>
                    {
                        if starts.insert(to) {
                            found.push(to);
                            queue.push_back(to);
                        }
                        Next::Continue
                    }
                    (Flow::Next, _) => Next::Continue,
                    (Flow::Conditional, Some((to, ReferenceKind::Jump))) => {
                        if is_code(to) {
                            blocks.push(to);
                        }
                        Next::Continue
                    }
                    (Flow::Conditional, _) => Next::Continue,
                    (Flow::Unconditional, Some((to, ReferenceKind::Jump))) => {
                        if is_code(to) && !starts.contains(&to) {
                            blocks.push(to);
                        }
                        Next::Stop
                    }
                    (Flow::Unconditional | Flow::End, _) => Next::Stop,
                }
            });
            if stopped {
                found.sort_unstable();
                return found;
            }
        }
    }
    found.sort_unstable();
    found
}
