//! Invariants of bounded procedure discovery (docs/CONTRACT.md section 6), checked against a
//! declarative reading of the rules rather than a second state machine.

use std::convert::Infallible;

use hashbrown::{HashMap, HashSet};

use super::{Violation, ensure};
use crate::core::bounds::{MAX_VALUE_CHARS, PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE};
use crate::core::discovery::{
    Malformed, Outcome, PageRequest, ProcedureEntry, ProcedurePage, discover,
};

/// Bytes that describe one page in [`discovery_pages`].
const PAGE_DESCRIPTOR: usize = 7;

/// Decodes arbitrary bytes into a page sequence, seven bytes per page:
/// `[count lo, count hi, base, flags, cursor, modulus, aliases]`. A page lists `count % 640`
/// entries (so some exceed the page size) at consecutive addresses from `base * 211` (so pages
/// overlap). Flags: bit 0 a next cursor `c<cursor>` (so cursors can repeat); bit 1 one
/// invalid address; bits 2-3 names (none, unique per address, shared modulo `modulus + 1`,
/// empty); bit 4 an over-long name; bit 5 an over-long cursor; bits 6-7 which invalid form.
/// Aliases: bits 0-1 how many each entry has (0 to 3); bits 2-3 their form (unique per
/// address, shared modulo `modulus + 1` with the shared names, so a name can be primary at one
/// address and an alias at another; the entry's own unique name, repeated; empty); bit 4 an
/// over-long alias.
pub fn discovery_pages(data: &[u8]) -> Vec<ProcedurePage> {
    data.chunks_exact(PAGE_DESCRIPTOR).map(page_from).collect()
}

fn page_from(descriptor: &[u8]) -> ProcedurePage {
    let &[
        count_lo,
        count_hi,
        base,
        flags,
        cursor,
        modulus,
        alias_flags,
    ] = descriptor
    else {
        return ProcedurePage::default();
    };
    let count = usize::from(u16::from_le_bytes([count_lo, count_hi])) % 640;
    let base = u64::from(base) * 211;
    let modulus = u64::from(modulus) + 1;
    let mut entries: Vec<ProcedureEntry> = (0..count as u64)
        .map(|offset| {
            let address = base + offset;
            let name = match (flags >> 2) & 3 {
                0 => None,
                1 => Some(format!("f_{address:x}")),
                2 => Some(format!("g_{}", address % modulus)),
                _ => Some(String::new()),
            };
            let aliases = (0..u64::from(alias_flags & 3))
                .map(|at| match (alias_flags >> 2) & 3 {
                    0 => format!("a{at}_{address:x}"),
                    1 => format!("g_{}", (address + at + 1) % modulus),
                    2 => format!("f_{address:x}"),
                    _ => String::new(),
                })
                .collect();
            ProcedureEntry {
                address: format!("{address:#x}"),
                name,
                aliases,
            }
        })
        .collect();
    let middle = count / 2;
    if flags & 2 != 0
        && let Some(entry) = entries.get_mut(middle)
    {
        entry.address = match flags >> 6 {
            0 => format!("0x0{}", &entry.address[2..]),
            1 => entry.address.to_uppercase(),
            2 => entry.address[2..].to_owned(),
            _ => String::new(),
        };
    }
    if flags & 16 != 0
        && let Some(entry) = entries.get_mut(middle)
    {
        entry.name = Some("n".repeat(MAX_VALUE_CHARS + 1));
    }
    if alias_flags & 16 != 0
        && let Some(entry) = entries.get_mut(middle)
    {
        entry.aliases.push("a".repeat(MAX_VALUE_CHARS + 1));
    }
    let next_cursor = (flags & 1 != 0).then(|| {
        if flags & 32 != 0 {
            "c".repeat(MAX_VALUE_CHARS + 1)
        } else {
            format!("c{cursor}")
        }
    });
    ProcedurePage {
        entries,
        next_cursor,
    }
}

/// Decodes `data` as [`discovery_pages`] does and runs [`check_discovery`] on those pages,
/// decoding each page only when discovery asks for it: discovery usually stops after a few
/// pages, and decoding them all up front (up to 639 formatted entries per six input bytes)
/// cost far more than the check.
pub fn check_discovery_bytes(data: &[u8]) -> Result<(), Violation> {
    let descriptors: Vec<&[u8]> = data.chunks_exact(PAGE_DESCRIPTOR).collect();
    check_pages(descriptors.len(), |at| page_from(descriptors[at]))
}

/// Runs [`discover`] against a provider that answers `pages` in order and then starts over
/// (forever: an adversarial provider; an empty list answers one empty last page), and checks
/// termination within [`PROCEDURE_ADDRESS_LIMIT`] pages, the request protocol, and that the
/// outcome is exactly what docs/CONTRACT.md section 6 says for the pages fed.
pub fn check_discovery(pages: &[ProcedurePage]) -> Result<(), Violation> {
    check_pages(pages.len(), |at| pages[at].clone())
}

/// [`check_discovery`] on `count` pages, where `page(at)` gives page `at`.
fn check_pages(
    count: usize,
    mut page: impl FnMut(usize) -> ProcedurePage,
) -> Result<(), Violation> {
    let shown = || format!("{count} pages");
    // An adversarial provider repeats its pages, so each is made once and fed as a copy; what
    // was fed is kept as indices into the made pages (`None`: the empty last page).
    let mut made: Vec<Option<ProcedurePage>> = vec![None; count];
    let mut fed_at: Vec<Option<usize>> = Vec::new();
    let mut requests: Vec<PageRequest> = Vec::new();
    let mut overrun = false;
    let outcome = discover(|request| {
        requests.push(request.clone());
        if fed_at.len() == PROCEDURE_ADDRESS_LIMIT {
            // Past the proven bound: answer a last page so the check itself terminates.
            overrun = true;
            return Ok::<_, Infallible>(ProcedurePage::default());
        }
        if count == 0 {
            fed_at.push(None);
            return Ok(ProcedurePage::default());
        }
        let at = fed_at.len() % count;
        fed_at.push(Some(at));
        Ok(made[at].get_or_insert_with(|| page(at)).clone())
    });
    let Ok(outcome) = outcome;
    let empty = ProcedurePage::default();
    let fed: Vec<&ProcedurePage> = fed_at
        .iter()
        .map(|at| at.and_then(|at| made[at].as_ref()).unwrap_or(&empty))
        .collect();
    ensure(
        !overrun,
        "discovery ends within PROCEDURE_ADDRESS_LIMIT pages",
        shown,
    )?;
    let cursors_follow = requests.iter().enumerate().all(|(at, request)| {
        request.limit == PROCEDURE_PAGE_SIZE
            && request.cursor
                == at
                    .checked_sub(1)
                    .and_then(|before| fed[before].next_cursor.clone())
    });
    ensure(
        cursors_follow,
        "each request passes the previous cursor and the page size",
        shown,
    )?;
    let Some((last, earlier)) = fed.split_last() else {
        return ensure(false, "discovery asks for at least one page", shown);
    };
    let mut seen = Seen::default();
    for page in earlier {
        ensure(
            page_fault(page, &seen).is_none() && seen.addresses.len() < PROCEDURE_ADDRESS_LIMIT,
            "discovery continues only after sound, advancing pages below the bound",
            shown,
        )?;
        seen.add(page);
    }
    match outcome {
        Outcome::Malformed(malformed) => ensure(
            page_fault(last, &seen).as_ref() == Some(&malformed),
            "a malformed outcome names a fault of the last page",
            shown,
        ),
        Outcome::Found(found) => {
            ensure(
                page_fault(last, &seen).is_none(),
                "a found outcome follows a sound page",
                shown,
            )?;
            seen.add(last);
            let total = seen.addresses.len();
            let exhaustive = last.next_cursor.is_none() && total <= PROCEDURE_ADDRESS_LIMIT;
            ensure(
                found.exhaustive == exhaustive,
                "exhaustive iff the provider ended within the bound",
                shown,
            )?;
            ensure(
                exhaustive || total >= PROCEDURE_ADDRESS_LIMIT,
                "discovery stops early only at the bound",
                shown,
            )?;
            let kept = &seen.addresses[..total.min(PROCEDURE_ADDRESS_LIMIT)];
            ensure(
                found.addresses == kept,
                "addresses are the first unique addresses seen",
                shown,
            )?;
            let names = if exhaustive {
                seen.unique_names()
            } else {
                Vec::new()
            };
            ensure(
                found.names == names,
                "names are offered only after exhaustive discovery, and only unshared ones",
                shown,
            )
        }
    }
}

/// What the pages before the current one established, borrowed from the pages fed (a set of
/// copied strings per check made the oracle cost more than discovery itself).
#[derive(Default)]
struct Seen<'a> {
    addresses: Vec<&'a str>,
    address_set: HashSet<&'a str>,
    cursors: HashSet<&'a str>,
    /// Name to its distinct addresses, and first-seen order of names.
    names: HashMap<&'a str, HashSet<&'a str>>,
    name_order: Vec<&'a str>,
}

impl<'a> Seen<'a> {
    fn add(&mut self, page: &'a ProcedurePage) {
        if let Some(cursor) = &page.next_cursor {
            self.cursors.insert(cursor);
        }
        for entry in &page.entries {
            if self.address_set.insert(&entry.address) {
                self.addresses.push(&entry.address);
            }
            // The primary name and the aliases alike name the entry's address.
            let names = entry.name.iter().chain(&entry.aliases);
            for name in names.map(String::as_str).filter(|name| !name.is_empty()) {
                let addresses = self.names.entry(name).or_insert_with(|| {
                    self.name_order.push(name);
                    HashSet::new()
                });
                addresses.insert(&entry.address);
            }
        }
    }

    fn unique_names(&self) -> Vec<&'a str> {
        self.name_order
            .iter()
            .copied()
            .filter(|name| self.names[name].len() == 1)
            .collect()
    }
}

/// The first reason docs/CONTRACT.md section 6 gives to reject `page` after `seen`, if any, checked
/// in the order discovery checks them.
fn page_fault(page: &ProcedurePage, seen: &Seen<'_>) -> Option<Malformed> {
    if page.entries.len() > PROCEDURE_PAGE_SIZE {
        return Some(Malformed::TooManyEntries {
            got: page.entries.len(),
            limit: PROCEDURE_PAGE_SIZE,
        });
    }
    let too_long = |text: &str| text.chars().count() > MAX_VALUE_CHARS;
    if page.next_cursor.as_deref().is_some_and(too_long) {
        return Some(Malformed::ValueTooLong);
    }
    for entry in &page.entries {
        if !canonical_address(&entry.address) {
            return Some(Malformed::InvalidAddress);
        }
        if entry
            .name
            .iter()
            .chain(&entry.aliases)
            .any(|name| too_long(name))
        {
            return Some(Malformed::ValueTooLong);
        }
    }
    let cursor = page.next_cursor.as_ref()?;
    if seen.cursors.contains(cursor.as_str()) {
        return Some(Malformed::RepeatedCursor);
    }
    let advances = page
        .entries
        .iter()
        .any(|entry| !seen.address_set.contains(entry.address.as_str()));
    (!advances).then_some(Malformed::NoProgress)
}

/// A valid address, read independently of `is_valid_address`: the `{:#x}` rendering of the
/// `u64` it parses to.
fn canonical_address(address: &str) -> bool {
    address
        .strip_prefix("0x")
        .and_then(|digits| u64::from_str_radix(digits, 16).ok())
        .is_some_and(|value| format!("{value:#x}") == address)
}
