//! The four operations over a finished [`Analysis`]: `disassemble`, `xrefs_to`, `callers`,
//! `callees`, each paged with an opaque cursor.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::decode::{Isa, Next};
use super::sweep::sweep;
use super::{Analysis, Input, Ref};
use crate::session::{
    Address, CallEdge, CallGraph, CallKind, CodeScope, Disassembly, Instruction, MAX_CODE_PAGE,
    MAX_DISASSEMBLY_BYTES, NamedAddress, ProviderError, Reference, ReferenceKind, References,
};

/// Call sites by (other procedure, kind): calls before tail calls for the same procedure.
type Edges = BTreeMap<(u64, CallKind), Vec<Address>>;

/// Prefix of the index cursors of references and call edges.
const INDEX_CURSOR: &str = "at:";

/// Prefix of the address cursors of instructions.
const ADDRESS_CURSOR: &str = "ip:";

impl Analysis {
    pub(super) fn isa(&self, document: &str) -> Result<Isa, ProviderError> {
        self.isa
            .ok_or_else(|| ProviderError::UnsupportedArchitecture {
                document: document.into(),
                architecture: self.architecture.clone(),
            })
    }

    /// What is at `address`: a stub, an import slot, a procedure, or a place inside one.
    pub(super) fn name_of(&self, address: u64) -> Option<String> {
        if let Some(symbol) = self.stubs.get(&address) {
            return Some(format!("{symbol}{}", self.stub_suffix));
        }
        if let Some(symbol) = self.slots.get(&address) {
            return Some(symbol.clone());
        }
        let procedure = self
            .procedure_containing(address)
            .or_else(|| self.procedure_at(address))?;
        let name = procedure.name.as_ref()?;
        Some(match address - procedure.start {
            0 => name.clone(),
            offset => format!("{name}+{offset:#x}"),
        })
    }

    fn named(&self, address: u64) -> NamedAddress {
        NamedAddress {
            address: Address::new(address),
            name: self.name_of(address),
        }
    }

    pub(super) fn import_of(&self, address: u64) -> Option<String> {
        self.stubs
            .get(&address)
            .or_else(|| self.slots.get(&address))
            .cloned()
    }

    /// `disassemble`: one page of the instructions of `scope`.
    pub(crate) fn disassemble(
        &self,
        input: &Input<'_>,
        document: &str,
        scope: CodeScope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Disassembly, ProviderError> {
        let isa = self.isa(document)?;
        let (start, end, procedure) = match scope {
            CodeScope::Procedure(address) => {
                let procedure = self.procedure_at(address.value()).ok_or_else(|| {
                    ProviderError::NoProcedure {
                        document: document.into(),
                        address,
                    }
                })?;
                (
                    procedure.start,
                    procedure.end,
                    Some(self.named(procedure.start)),
                )
            }
            CodeScope::Range { start, length } => {
                if length == 0 || length > MAX_DISASSEMBLY_BYTES {
                    return Err(ProviderError::InvalidArgument {
                        argument: "length",
                        reason: format!("must be 1 to {MAX_DISASSEMBLY_BYTES} bytes, not {length}"),
                    });
                }
                (start.value(), start.value().saturating_add(length), None)
            }
        };
        let (bytes, _) = input
            .bytes_at(start)
            .ok_or_else(|| ProviderError::Unmapped {
                document: document.into(),
                address: Address::new(start),
            })?;
        let end = end.min(start.saturating_add(bytes.len() as u64));
        let bytes = &bytes[..usize::try_from(end - start).unwrap_or(bytes.len())];
        let from = match cursor {
            None => start,
            Some(text) => parse_address_cursor(text)
                .filter(|&at| start < at && at < end)
                .ok_or_else(|| invalid_cursor(text))?,
        };
        let limit = limit.clamp(1, MAX_CODE_PAGE);
        let mut instructions = Vec::new();
        let mut next = None;
        let mut aligned = from == start;
        sweep(isa, bytes, start, true, &mut |step, text| {
            if step.address < from {
                return Next::Continue;
            }
            aligned |= step.address == from;
            if !aligned {
                return Next::Stop;
            }
            if instructions.len() == limit {
                next = Some(step.address);
                return Next::Stop;
            }
            let offset = usize::try_from(step.address - start).unwrap_or(usize::MAX);
            let raw = bytes
                .get(offset..offset.saturating_add(step.length))
                .unwrap_or(&[]);
            let text = text.unwrap_or_default();
            let reference = self.reference_of(&step, input);
            let (target, target_kind) = match reference {
                Some((to, kind)) => (Some(Address::new(to)), Some(kind)),
                None => (None, None),
            };
            instructions.push(Instruction {
                address: Address::new(step.address),
                bytes: hex(raw),
                mnemonic: text.mnemonic,
                operands: text.operands,
                target,
                target_kind,
                target_name: reference.and_then(|(to, _)| self.name_of(to)),
            });
            Next::Continue
        });
        if !aligned {
            return Err(invalid_cursor(cursor.unwrap_or_default()));
        }
        Ok(Disassembly {
            architecture: self.architecture.clone(),
            procedure,
            start: Address::new(start),
            end: Address::new(end),
            instructions,
            next_cursor: next.map(|address| format!("{ADDRESS_CURSOR}{address:#x}")),
            analysis: self.status,
        })
    }

    /// `xrefs_to`: one page of the references to `address`.
    pub(crate) fn xrefs_to(
        &self,
        input: &Input<'_>,
        document: &str,
        address: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<References, ProviderError> {
        self.isa(document)?;
        let target = address.value();
        let first = self.references.partition_point(|r| r.to < target);
        let last = self.references.partition_point(|r| r.to <= target);
        let all = &self.references[first..last];
        let (page, next_cursor) = page(all, cursor, limit)?;
        let references = page
            .iter()
            .map(|reference: &Ref| Reference {
                from: Address::new(reference.from),
                kind: reference.kind,
                procedure: self
                    .procedure_containing(reference.from)
                    .map(|p| self.named(p.start)),
                segment: input
                    .region_at(reference.from)
                    .map(|region| region.segment.name.clone()),
            })
            .collect();
        Ok(References {
            target: self.named(target),
            references,
            total: all.len(),
            next_cursor,
            analysis: self.status,
        })
    }

    /// How `reference` transfers control from its procedure to its target, if it does: a
    /// call, or a tail call (an unconditional jump from inside a procedure to the start of
    /// another procedure, a stub or an import slot; a stub's own jump through its slot is not
    /// one).
    pub(super) fn call_kind(&self, reference: &Ref) -> Option<CallKind> {
        match reference.kind {
            ReferenceKind::Call => Some(CallKind::Call),
            ReferenceKind::Jump if reference.unconditional => {
                let origin = self.procedure_containing(reference.from)?;
                let target = reference.to;
                let known = self.procedure_at(target).is_some()
                    || self.stubs.contains_key(&target)
                    || self.slots.contains_key(&target);
                let from_stub = self.stubs.contains_key(&reference.from)
                    || self.stubs.contains_key(&origin.start);
                (known && target != origin.start && !from_stub).then_some(CallKind::TailCall)
            }
            _ => None,
        }
    }

    /// `callers`: the procedures with a direct call (or tail call) to `procedure`.
    pub(crate) fn callers(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        self.isa(document)?;
        let target = procedure.value();
        let first = self.references.partition_point(|r| r.to < target);
        let last = self.references.partition_point(|r| r.to <= target);
        let mut edges: Edges = BTreeMap::new();
        for reference in &self.references[first..last] {
            if let Some(kind) = self.call_kind(reference) {
                let caller = self
                    .procedure_containing(reference.from)
                    .map_or(reference.from, |p| p.start);
                edges
                    .entry((caller, kind))
                    .or_default()
                    .push(Address::new(reference.from));
            }
        }
        self.graph(target, edges, cursor, limit)
    }

    /// `callees`: what `procedure` calls (or tail-calls) directly.
    pub(crate) fn callees(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        self.isa(document)?;
        let found =
            self.procedure_at(procedure.value())
                .ok_or_else(|| ProviderError::NoProcedure {
                    document: document.into(),
                    address: procedure,
                })?;
        let origin = |index: &u32| self.references[*index as usize].from;
        let first = self.by_origin.partition_point(|i| origin(i) < found.start);
        let last = self.by_origin.partition_point(|i| origin(i) < found.end);
        let mut edges: Edges = BTreeMap::new();
        for index in &self.by_origin[first..last] {
            let reference = self.references[*index as usize];
            if let Some(kind) = self.call_kind(&reference) {
                edges
                    .entry((reference.to, kind))
                    .or_default()
                    .push(Address::new(reference.from));
            }
        }
        self.graph(found.start, edges, cursor, limit)
    }

    fn graph(
        &self,
        procedure: u64,
        edges: Edges,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        let edges: Vec<CallEdge> = edges
            .into_iter()
            .map(|((address, kind), mut call_sites)| {
                call_sites.sort_unstable();
                CallEdge {
                    procedure: self.named(address),
                    import: self.import_of(address),
                    kind,
                    call_sites,
                }
            })
            .collect();
        let (page, next_cursor) = page(&edges, cursor, limit)?;
        Ok(CallGraph {
            procedure: self.named(procedure),
            edges: page.to_vec(),
            total: edges.len(),
            next_cursor,
            analysis: self.status,
        })
    }
}

/// One page of `items` from an index cursor.
fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    limit: usize,
) -> Result<(&'a [T], Option<String>), ProviderError> {
    let start = match cursor {
        None => 0,
        Some(text) => text
            .strip_prefix(INDEX_CURSOR)
            .filter(|digits| !digits.starts_with('0') && !digits.starts_with('+'))
            .and_then(|digits| digits.parse::<usize>().ok())
            .filter(|&start| start < items.len())
            .ok_or_else(|| invalid_cursor(text))?,
    };
    let end = items.len().min(start + limit.clamp(1, MAX_CODE_PAGE));
    let next = (end < items.len()).then(|| format!("{INDEX_CURSOR}{end}"));
    Ok((&items[start..end], next))
}

fn parse_address_cursor(text: &str) -> Option<u64> {
    let digits = text.strip_prefix(ADDRESS_CURSOR)?.strip_prefix("0x")?;
    let canonical =
        !digits.is_empty() && digits.len() <= 16 && !(digits.len() > 1 && digits.starts_with('0'));
    let lowercase = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (canonical && lowercase)
        .then(|| u64::from_str_radix(digits, 16).ok())
        .flatten()
}

fn invalid_cursor(text: &str) -> ProviderError {
    ProviderError::InvalidCursor {
        cursor: text.into(),
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}
