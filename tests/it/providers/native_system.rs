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

/// The function names `nm -D --defined-only` gives `path`, each with the addresses it names,
/// written as the native provider names them: `name@@VERSION` (the default version) as the
/// bare name, `name@VERSION` as it is. `None` when `nm` cannot be run here.
fn nm_function_names(path: &Path) -> Option<HashMap<String, HashSet<u64>>> {
    let output = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(path)
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    let mut names: HashMap<String, HashSet<u64>> = HashMap::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let mut fields = line.split_whitespace();
        let (Some(address), Some(kind), Some(symbol)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // Text (`T`), weak (`W`) and indirect functions (`i`).
        if !["T", "W", "i"].contains(&kind) {
            continue;
        }
        let name = match symbol.split_once("@@") {
            Some((bare, _)) => bare,
            None => symbol,
        };
        let address = u64::from_str_radix(address, 16).unwrap();
        names.entry(name.to_owned()).or_default().insert(address);
    }
    Some(names)
}

/// Row 14 of issue 15: every function name `nm -D` lists at exactly one address is a
/// completion candidate, the primary name of its address or an alias (`memcmp` and `bcmp`
/// share one address, and both are offered).
#[test]
fn libc_completion_offers_every_name_nm_lists_at_one_address() {
    let Some(libc) = crate::support::tools::system_libc() else {
        println!("no system C library here");
        return;
    };
    let Some(nm) = nm_function_names(&libc) else {
        println!("nm cannot be run here");
        return;
    };
    let unique: Vec<&String> = {
        let mut unique: Vec<&String> = nm
            .iter()
            .filter(|(_, addresses)| addresses.len() == 1)
            .map(|(name, _)| name)
            .collect();
        unique.sort();
        unique
    };
    let provider = NativeProvider::open(&libc).unwrap();
    let session = Session::new();
    session
        .open_providers(libc.display().to_string(), vec![Arc::new(provider)])
        .unwrap();
    let complete = |prefix: &str| {
        complete_argument(
            &session,
            Family::Procedure,
            &Prefix::new(prefix).unwrap(),
            &BTreeMap::new(),
            &SourceConfig::default(),
        )
    };
    let missing: Vec<&&String> = unique
        .iter()
        .filter(|name| !complete(name).values.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} names nm lists at one address are not offered, e.g. {:?}",
        missing.len(),
        unique.len(),
        &missing[..missing.len().min(10)]
    );
    println!(
        "{}: {} function names at one address, all offered",
        libc.display(),
        unique.len()
    );
    // The row's own case, where the aliases exist (glibc's).
    if let (Some(memcmp), Some(bcmp)) = (nm.get("memcmp"), nm.get("bcmp")) {
        assert_eq!(memcmp, bcmp, "memcmp and bcmp share one address");
        assert!(complete("memc").values.contains(&"memcmp".to_owned()));
        assert!(complete("BCM").values.contains(&"bcmp".to_owned()));
    }
}
