//! The native provider on real system binaries, checked against what the `object` crate
//! itself reports. Binaries that are not present on this machine are skipped; when none is,
//! a generated binary written to disk stands in, so the checks always run.

use crate::support::fixtures;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::support::fixtures::{Format, Spec, build};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use rea::core::{Family, PROCEDURE_ADDRESS_LIMIT, Prefix};
use rea::providers::native::NativeProvider;
use rea::session::{Address, Provider, Session, SourceConfig, complete_argument};

const CANDIDATES: [&str; 8] = [
    "/bin/ls",
    "/usr/bin/ls",
    "/bin/sh",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
    "/usr/lib/libc.so.6",
    "/usr/lib/dyld",
];

/// System binaries present here (deduplicated), or a generated one written to `scratch`.
fn binaries(scratch: &Path) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    let mut found: Vec<PathBuf> = CANDIDATES
        .iter()
        .map(Path::new)
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|path| seen.insert(path.clone()))
        .collect();
    if found.is_empty() {
        let path = scratch.join("generated");
        std::fs::write(&path, build(&Spec::sample(), Format::Elf).bytes).unwrap();
        found.push(path);
    }
    found
}

/// Every procedure: address -> listed name.
fn listing(provider: &NativeProvider, document: &str) -> BTreeMap<u64, Option<String>> {
    fixtures::helpers::list_all(provider, document)
        .into_iter()
        .map(|(address, name)| (Address::parse(&address).unwrap().value(), name))
        .collect()
}

#[test]
fn system_binaries_list_what_object_reports() {
    let scratch = tempfile::tempdir().unwrap();
    for path in binaries(scratch.path()) {
        let bytes = std::fs::read(&path).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let provider = NativeProvider::open(&path).unwrap();
        let documents = provider.list_documents().unwrap();
        assert_eq!(documents.len(), 1, "{}", path.display());
        let document = &documents[0].name;
        assert_eq!(
            documents[0].architecture.as_deref(),
            Some(format!("{:?}", file.architecture()).to_lowercase().as_str())
        );
        let listed = listing(&provider, document);

        let executable: Vec<(u64, u64)> = file
            .sections()
            .filter(|s| s.kind() == object::SectionKind::Text)
            .map(|s| (s.address(), s.size()))
            .collect();
        let in_code = |address: u64| {
            executable
                .iter()
                .any(|&(start, size)| address >= start && address - start < size)
        };

        // Every function symbol object reports is listed, with its name among the names there.
        let mut names_by_address: HashMap<u64, Vec<String>> = HashMap::new();
        for symbol in file.symbols().chain(file.dynamic_symbols()) {
            if symbol.kind() != SymbolKind::Text
                || !symbol.is_definition()
                || !in_code(symbol.address())
            {
                continue;
            }
            let name = symbol.name().unwrap_or("").to_owned();
            names_by_address
                .entry(symbol.address())
                .or_default()
                .push(name);
        }
        for (address, names) in &names_by_address {
            assert!(
                listed.contains_key(address),
                "{}: {address:#x} missing",
                path.display()
            );
            let info = provider
                .procedure_info(document, Address::new(*address))
                .unwrap();
            let raw: HashSet<&str> = info
                .name
                .iter()
                .chain(&info.aliases)
                .map(|n| n.raw_name.as_str())
                .collect();
            // A symbol of a non-default version is named with it (`memcpy@GLIBC_2.2.5`).
            for name in names.iter().filter(|n| !n.is_empty()) {
                let versioned = |r: &&str| {
                    r.strip_prefix(name.as_str())
                        .is_some_and(|rest| rest.starts_with('@'))
                };
                assert!(
                    raw.contains(name.as_str()) || raw.iter().any(versioned),
                    "{}: {name} not at {address:#x}",
                    path.display()
                );
            }
        }
        // Every exported function is listed.
        for export in file.exports().unwrap().map(Result::unwrap) {
            if let object::ExportTarget::Address { address } = export.target()
                && in_code(address)
            {
                assert!(
                    listed.contains_key(&address),
                    "{}: export {address:#x}",
                    path.display()
                );
            }
        }
        // Every listed address is in an executable segment.
        let segments = provider.list_segments(document).unwrap();
        for address in listed.keys() {
            assert!(
                segments.iter().any(|s| s.permissions.execute
                    && *address >= s.address.value()
                    && *address - s.address.value() < s.size),
                "{}: {address:#x} outside code",
                path.display()
            );
        }
        println!(
            "{}: {} procedures, {} named",
            path.display(),
            listed.len(),
            listed.values().flatten().count()
        );

        // Completion projects the same listing.
        let session = Session::new();
        session
            .open_providers(path.display().to_string(), vec![Arc::new(provider)])
            .unwrap();
        let done = complete_argument(
            &session,
            Family::Procedure,
            &Prefix::new("0x").unwrap(),
            &BTreeMap::new(),
            &SourceConfig::default(),
        );
        assert_eq!(done.total, listed.len().min(PROCEDURE_ADDRESS_LIMIT));
        for value in &done.values {
            let address = Address::parse(value).unwrap().value();
            assert!(listed.contains_key(&address));
        }
    }
}
