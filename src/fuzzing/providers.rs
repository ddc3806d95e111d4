//! The providers' invariants: checks shared by the `native_provider`, `adapter_reply`,
//! `catalog_parser` and `code_analysis` fuzz targets and the tests that replay their saved
//! inputs. Every check panics when an invariant breaks.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::core::discovery::{discover, is_valid_address};
use crate::core::{MAX_VALUE_CHARS, Outcome, PROCEDURE_PAGE_SIZE};
use crate::providers::catalog::{CatalogError, CatalogProvider};
use crate::providers::native::{MAX_ANALYSIS_TIME, MAX_INSTRUCTIONS, NativeProvider};
use crate::session::{
    Address, CallKind, CodeScope, FingerprintBounds, MAX_READ_BYTES, NameMatch, ProcedureQuery,
    Provider, ProviderError, ReadLength, ReferenceKind, StringQuery,
};

/// Procedures per document whose details are checked, to keep each input fast.
const CHECKED_PROCEDURES: usize = 64;

/// Opens `bytes` as a binary; if it opens, runs every operation on every document and checks
/// addresses are valid and canonical, pages bounded and ordered, discovery well-formed,
/// lookups consistent with the listing, and reads and string matches within their bounds.
pub fn check_native(bytes: &[u8]) {
    let Ok(provider) = NativeProvider::from_bytes("fuzz", bytes.to_vec()) else {
        return;
    };
    for document in check_documents(&provider) {
        let listed = check_listing(&provider, &document);
        check_lookups(&provider, &document, &listed);
        check_segments_and_bytes(&provider, &document);
        check_strings(&provider, &document);
        check_imports(&provider, &document);
    }
}

/// Import pages: bounded, and concatenating small pages gives the whole list.
fn check_imports(provider: &dyn Provider, document: &str) {
    let whole = provider
        .list_imports(document, None, PROCEDURE_PAGE_SIZE)
        .expect("listing imports of a loaded document");
    assert!(whole.imports.len() <= PROCEDURE_PAGE_SIZE);
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    while paged.len() < whole.imports.len() {
        let page = provider
            .list_imports(document, cursor.as_deref(), 7)
            .expect("a cursor the provider issued");
        assert!(!page.imports.is_empty() && page.imports.len() <= 7);
        paged.extend(page.imports);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let compared = paged.len().min(whole.imports.len());
    assert_eq!(paged[..compared], whole.imports[..compared]);
    for import in &whole.imports {
        assert!(!import.symbol.raw_name.is_empty());
    }
}

/// Pages read per disassembly in [`check_code_analysis`].
const CHECKED_PAGES: usize = 8;

/// Opens `bytes` as a binary; if it opens, runs the code analysis of every document (within
/// its bounds) and checks, for the first procedures: disassembly pages are contiguous, in
/// address order and inside the procedure; every callee lists the procedure among its callers
/// and every call site among the references to it, as a call; reference pages agree with
/// their totals; the fingerprints of the first procedures keep their invariants.
pub fn check_code_analysis(bytes: &[u8]) {
    let Ok(provider) = NativeProvider::from_bytes("fuzz", bytes.to_vec()) else {
        return;
    };
    for document in check_documents(&provider) {
        let started = std::time::Instant::now();
        let page = provider
            .list_procedures(&document, None, CHECKED_PROCEDURES)
            .expect("listing");
        for entry in &page.entries {
            let address = Address::parse(&entry.address).expect("valid address");
            let analysed = check_disassembly(&provider, &document, address);
            if !analysed {
                return;
            }
            check_call_graph(&provider, &document, address);
        }
        check_fingerprints(&provider, &document);
        let limit = MAX_ANALYSIS_TIME + std::time::Duration::from_secs(5);
        assert!(
            started.elapsed() < limit,
            "analysis stays within its time bound"
        );
    }
}

/// Most procedures fingerprinted per document in [`check_fingerprints`].
const CHECKED_FINGERPRINTS: usize = 256;

/// The fingerprints of the first procedures (`compare_procedures`' input, read from the
/// document's code and data): within their bound, each list sorted as [`Fingerprint`]
/// documents it, every callee among them; and the document compared with itself leaves no
/// procedure out and pairs none twice.
///
/// [`Fingerprint`]: crate::core::diff::Fingerprint
fn check_fingerprints(provider: &NativeProvider, document: &str) {
    let bounds = FingerprintBounds {
        max_procedures: CHECKED_FINGERPRINTS,
        max_bytes: 16 << 20,
        deadline: std::time::Instant::now() + MAX_ANALYSIS_TIME,
    };
    let fingerprints = match provider.fingerprints(document, &bounds) {
        Ok(found) => found.procedures,
        Err(ProviderError::UnsupportedArchitecture { .. }) => return,
        Err(other) => panic!("fingerprints: {other}"),
    };
    assert!(fingerprints.len() <= CHECKED_FINGERPRINTS);
    let count = fingerprints.len() as u32;
    for fingerprint in &fingerprints {
        assert!(fingerprint.callees.iter().all(|&callee| callee < count));
        assert!(fingerprint.strings.is_sorted() && fingerprint.constants.is_sorted());
        assert!(fingerprint.slots.is_sorted() && fingerprint.labels.is_sorted());
        assert!(fingerprint.labels.windows(2).all(|pair| pair[0] != pair[1]));
    }
    let compared = crate::core::diff::compare(&fingerprints, &fingerprints, &mut || false);
    let mut seen = vec![0u8; 2 * fingerprints.len()];
    for pair in &compared.pairs {
        seen[pair.baseline as usize] += 1;
        seen[fingerprints.len() + pair.candidate as usize] += 1;
    }
    for &left in &compared.only_in_baseline {
        seen[left as usize] += 1;
    }
    for &right in &compared.only_in_candidate {
        seen[fingerprints.len() + right as usize] += 1;
    }
    assert!(seen.iter().all(|&times| times == 1), "each procedure once");
}

/// Pages through the disassembly of one procedure; `false` when the document's architecture
/// is not decoded.
fn check_disassembly(provider: &NativeProvider, document: &str, address: Address) -> bool {
    let mut cursor: Option<String> = None;
    let mut expected = address;
    for _ in 0..CHECKED_PAGES {
        let scope = CodeScope::Procedure(address);
        let page = match provider.disassemble(document, scope, cursor.as_deref(), 16) {
            Ok(page) => page,
            Err(ProviderError::UnsupportedArchitecture { .. }) => return false,
            Err(ProviderError::NoProcedure { .. } | ProviderError::Unmapped { .. }) => return true,
            Err(other) => panic!("disassemble {address}: {other}"),
        };
        assert!(page.analysis.instructions <= MAX_INSTRUCTIONS);
        assert!(page.instructions.len() <= 16);
        for instruction in &page.instructions {
            assert_eq!(instruction.address, expected, "contiguous instructions");
            assert!(instruction.address >= page.start && instruction.address < page.end);
            assert!(!instruction.bytes.is_empty() && instruction.bytes.len() % 2 == 0);
            assert_eq!(
                instruction.target.is_some(),
                instruction.target_kind.is_some()
            );
            let length = instruction.bytes.len() as u64 / 2;
            expected = Address::new(instruction.address.value() + length);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    true
}

/// Callees and callers agree, and call sites are call references (jumps for tail calls).
fn check_call_graph(provider: &NativeProvider, document: &str, address: Address) {
    let Ok(callees) = provider.callees(document, address, None, 16) else {
        return;
    };
    assert!(callees.edges.len() <= callees.total);
    for edge in &callees.edges {
        assert!(edge.call_sites.windows(2).all(|w| w[0] < w[1]));
        let callers = provider
            .callers(document, edge.procedure.address, None, 1_000)
            .expect("callers of a callee");
        if callers.next_cursor.is_none() {
            let back = callers
                .edges
                .iter()
                .find(|caller| caller.procedure.address == address && caller.kind == edge.kind)
                .expect("the callee lists the procedure among its callers");
            assert_eq!(back.call_sites, edge.call_sites);
        }
        let references = provider
            .xrefs_to(document, edge.procedure.address, None, 1_000)
            .expect("references to a callee");
        assert!(references.references.len() <= references.total);
        let kind = match edge.kind {
            CallKind::Call => ReferenceKind::Call,
            CallKind::TailCall => ReferenceKind::Jump,
        };
        if references.next_cursor.is_none() {
            for site in &edge.call_sites {
                assert!(
                    references
                        .references
                        .iter()
                        .any(|r| r.from == *site && r.kind == kind)
                );
            }
        }
    }
}

/// Loads `bytes` as a catalog. A rejection must name a field (or the JSON position) and never
/// blame the built-in schema; an accepted catalog must list consistently and survive a round
/// trip through its own JSON export unchanged.
pub fn check_catalog(bytes: &[u8]) {
    let provider = match CatalogProvider::from_json(bytes) {
        Ok(provider) => provider,
        Err(CatalogError::Field { field, message }) => {
            assert!(field.starts_with('/'), "field {field:?} is a JSON pointer");
            assert!(!message.is_empty());
            return;
        }
        Err(CatalogError::Json { line, .. }) => {
            assert!(line >= 1);
            return;
        }
        Err(other) => panic!("unexpected catalog error: {other}"),
    };
    let mut documents = Vec::new();
    let mut listings = Vec::new();
    for document in check_documents(&provider) {
        let listed = check_listing(&provider, &document);
        check_lookups(&provider, &document, &listed);
        documents.push(export_document(&provider, &document, &listed));
        listings.push(listed);
    }
    let exported = json!({"schema": "rea.catalog", "version": 1, "documents": documents});
    let text = serde_json::to_vec(&exported).expect("a JSON value serializes");
    let reloaded = CatalogProvider::from_json(&text).expect("an exported catalog is valid");
    for (document, listed) in check_documents(&reloaded).iter().zip(&listings) {
        assert_eq!(&check_listing(&reloaded, document), listed, "round trip");
    }
}

/// Document names: non-empty, unique, within the value bound.
fn check_documents(provider: &dyn Provider) -> Vec<String> {
    let documents = provider
        .list_documents()
        .expect("listing documents of a loaded file");
    let mut seen = HashSet::new();
    for document in &documents {
        assert!(!document.name.is_empty());
        assert!(document.name.chars().count() <= MAX_VALUE_CHARS);
        assert!(
            seen.insert(document.name.clone()),
            "document names are unique"
        );
    }
    documents.into_iter().map(|d| d.name).collect()
}

/// Reads every page with two page sizes and checks both agree, then runs discovery, which must
/// never call the output malformed.
fn check_listing(provider: &dyn Provider, document: &str) -> Vec<(Address, Option<String>)> {
    let listed = read_pages(provider, document, PROCEDURE_PAGE_SIZE);
    assert_eq!(
        read_pages(provider, document, 7),
        listed,
        "pages of 7 agree"
    );
    let outcome = discover(|request| {
        provider.list_procedures(document, request.cursor.as_deref(), request.limit)
    })
    .expect("listing succeeded once");
    assert!(
        matches!(outcome, Outcome::Found(_)),
        "discovery: {outcome:?}"
    );
    listed
}

fn read_pages(
    provider: &dyn Provider,
    document: &str,
    limit: usize,
) -> Vec<(Address, Option<String>)> {
    let mut listed: Vec<(Address, Option<String>)> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut cursors = HashSet::new();
    loop {
        let page = provider
            .list_procedures(document, cursor.as_deref(), limit)
            .expect("listing a listed document");
        assert!(page.entries.len() <= limit);
        for entry in page.entries {
            assert!(is_valid_address(&entry.address), "{:?}", entry.address);
            let address = Address::parse(&entry.address).expect("valid address");
            assert_eq!(address.to_string(), entry.address, "canonical address");
            assert!(
                listed.last().is_none_or(|(last, _)| *last < address),
                "address order"
            );
            if let Some(name) = &entry.name {
                assert!(!name.is_empty() && name.chars().count() <= MAX_VALUE_CHARS);
            }
            listed.push((address, entry.name));
        }
        match page.next_cursor {
            Some(next) => {
                assert!(cursors.insert(next.clone()), "cursor repeated");
                cursor = Some(next);
            }
            None => return listed,
        }
    }
}

/// `procedure_info` and exact search agree with the listing.
fn check_lookups(provider: &dyn Provider, document: &str, listed: &[(Address, Option<String>)]) {
    for (address, name) in listed.iter().take(CHECKED_PROCEDURES) {
        let info = provider
            .procedure_info(document, *address)
            .expect("listed address");
        assert_eq!(info.address, *address);
        let primary = info.name.as_ref();
        let expected = primary.map(|n| (n.name.as_str(), n.raw_name.as_str()));
        match (name, expected) {
            (Some(name), Some((display, raw))) => assert!(name == display || name == raw),
            (None, names) => assert!(
                names.is_none_or(|(d, r)| d.chars().count() > MAX_VALUE_CHARS
                    && r.chars().count() > MAX_VALUE_CHARS)
            ),
            (Some(_), None) => panic!("listed name without a primary name"),
        }
        if let Some(name) = name {
            let query = ProcedureQuery::new(name.clone(), NameMatch::Exact);
            let found = provider
                .search_procedures(document, &query)
                .expect("search");
            assert!(
                found.truncated || found.procedures.iter().any(|p| p.address == *address),
                "exact search finds {name:?}"
            );
        }
    }
}

/// Segments are ordered with consistent file ranges; reads stay within the bound.
fn check_segments_and_bytes(provider: &dyn Provider, document: &str) {
    let segments = provider.list_segments(document).expect("segments");
    assert!(segments.windows(2).all(|w| w[0].address <= w[1].address));
    let length = ReadLength::new(MAX_READ_BYTES as u64).expect("in range");
    for segment in segments.iter().take(CHECKED_PROCEDURES) {
        assert!(segment.file_size <= segment.size);
        assert_eq!(segment.file_offset.is_some(), segment.file_size > 0);
        if let Ok(bytes) = provider.read_bytes(document, segment.address, length) {
            assert!(!bytes.is_empty() && bytes.len() <= MAX_READ_BYTES);
        }
    }
}

/// String matches are bounded, long enough, and inside their segment.
fn check_strings(provider: &dyn Provider, document: &str) {
    let query = StringQuery::new("").with_limit(50);
    let found = provider.search_strings(document, &query).expect("strings");
    assert!(found.matches.len() <= 50);
    let segments = provider.list_segments(document).expect("segments");
    for string in &found.matches {
        let chars = string.text.chars().count();
        assert!(chars >= query.min_chars() && chars <= MAX_VALUE_CHARS);
        // Section names need not be unique; one of the segments with this name holds it.
        let inside = segments.iter().any(|segment| {
            segment.name == string.segment
                && string.address.value().wrapping_sub(segment.address.value()) < segment.file_size
        });
        assert!(inside, "string inside its segment");
    }
}

/// The catalog JSON of one document, rebuilt from the provider's answers.
fn export_document(
    provider: &dyn Provider,
    document: &str,
    listed: &[(Address, Option<String>)],
) -> Value {
    let procedures: Vec<Value> = listed
        .iter()
        .map(|(address, _)| {
            let info = provider
                .procedure_info(document, *address)
                .expect("listed address");
            let mut procedure = json!({"address": address.to_string()});
            if let Some(name) = info.name {
                procedure["name"] = json!(name.name);
                procedure["raw_name"] = json!(name.raw_name);
            }
            if let Some(size) = info.size {
                procedure["size"] = json!(size);
            }
            procedure
        })
        .collect();
    let segments: Vec<Value> = provider
        .list_segments(document)
        .expect("segments")
        .into_iter()
        .map(|s| json!({"name": s.name, "address": s.address.to_string(), "size": s.size, "permissions": s.permissions.to_string()}))
        .collect();
    json!({"name": document, "segments": segments, "procedures": procedures})
}

/// Parses `bytes` as an adapter's answer (the first byte picks the method, the rest is the
/// line) and checks what was accepted: addresses canonical, texts and lists within the
/// protocol's bounds, and the answer written back as a line parses to the same reply.
pub fn check_adapter_reply(bytes: &[u8]) {
    use crate::providers::external::protocol::{Method, parse_reply};
    let Some((&pick, line)) = bytes.split_first() else {
        return;
    };
    let method = Method::ALL[usize::from(pick) % Method::ALL.len()];
    let Ok(reply) = parse_reply(line, 7, method) else {
        return;
    };
    check_reply_bounds(&reply);
    let again = parse_reply(reply_line(7, &reply).as_bytes(), 7, method)
        .expect("a reply written back parses");
    assert_eq!(again, reply, "the reply survives a round trip");
}

fn check_reply_bounds(reply: &crate::providers::external::protocol::Reply) {
    use crate::providers::external::protocol::{MAX_PAGE_ENTRIES, Reply};
    use crate::session::{MAX_DECOMPILE_CHARS, MAX_DECOMPILE_WARNINGS};
    match reply {
        Reply::Procedures(page) => {
            assert!(page.entries.len() <= MAX_PAGE_ENTRIES);
            for entry in &page.entries {
                let parsed = Address::parse(&entry.address).expect("a valid address");
                assert_eq!(parsed.to_string(), entry.address, "canonical");
                assert!(is_valid_address(&entry.address));
            }
            assert_ne!(page.next_cursor.as_deref(), Some(""));
        }
        Reply::Decompiled(code) => {
            assert!(code.code.chars().count() <= MAX_DECOMPILE_CHARS);
            assert!(code.warnings.len() <= MAX_DECOMPILE_WARNINGS);
            assert_eq!(code.complete, code.reason.is_none());
        }
        Reply::Documents(documents) => {
            let names: HashSet<&str> = documents.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names.len(), documents.len(), "document names are unique");
            assert!(!names.contains(""));
        }
        _ => {}
    }
}

/// `reply` as the adapter would have written it, answering request `id`.
fn reply_line(id: u64, reply: &crate::providers::external::protocol::Reply) -> String {
    use crate::providers::external::protocol::Reply;
    let result = match reply {
        Reply::Described(d) => json!({
            "name": d.name, "version": d.version, "protocol": 1,
            "operations": d.operations.iter().map(|op| op.name()).collect::<Vec<_>>(),
        }),
        Reply::Documents(documents) => json!({"documents": documents}),
        Reply::Procedures(page) => json!({
            "procedures": page.entries.iter()
                .map(|e| json!({"address": e.address, "name": e.name}))
                .collect::<Vec<_>>(),
            "next_cursor": page.next_cursor,
        }),
        Reply::Procedure(p) => json!({
            "address": p.address.to_string(), "name": p.name, "size": p.size, "segment": p.segment,
        }),
        Reply::Decompiled(c) => json!({
            "address": c.address.to_string(), "name": c.name, "code": c.code,
            "warnings": c.warnings, "complete": c.complete, "reason": c.reason,
        }),
        Reply::Closed => json!({}),
        Reply::Error { code, message } => {
            return json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                .to_string();
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}
