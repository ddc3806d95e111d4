//! The native provider on generated ELF, Mach-O (thin and fat) and PE binaries: it lists
//! exactly what the generator wrote.

use std::sync::Arc;

use crate::support::fixtures;
use crate::support::fixtures::spec::{FUNCTION_SIZE, STRINGS, function_bytes};
use crate::support::fixtures::{Format, Spec, build, macho};
use rea::core::MAX_VALUE_CHARS;
use rea::providers::native::NativeProvider;
use rea::session::{
    Address, NameMatch, Operation, ProcedureQuery, ProcedureSource, Provider, ProviderError,
    ReadLength, Session, SessionError, StringQuery,
};

const FORMATS: [Format; 3] = [Format::Elf, Format::MachO, Format::Pe];

/// Every page of `document`, also checking that listed names fit the value bound.
fn list_all(provider: &dyn Provider, document: &str) -> Vec<(String, Option<String>)> {
    let listed = fixtures::helpers::list_all(provider, document);
    for (_, name) in &listed {
        assert!(
            name.as_ref()
                .is_none_or(|n| n.chars().count() <= MAX_VALUE_CHARS)
        );
    }
    listed
}

fn provider(spec: &Spec, format: Format) -> (NativeProvider, fixtures::Built) {
    let built = build(spec, format);
    let provider = NativeProvider::from_bytes("fixture", built.bytes.clone()).unwrap();
    (provider, built)
}

#[test]
fn lists_exactly_what_the_generator_wrote() {
    for format in FORMATS {
        for spec in [Spec::sample(), Spec::sample().stripped()] {
            let (provider, built) = provider(&spec, format);
            let documents = provider.list_documents().unwrap();
            assert_eq!(documents.len(), 1);
            assert_eq!(documents[0].name, "fixture");
            let listed = list_all(&provider, "fixture");
            let expected = spec.expected(format, built.text_address);
            assert_eq!(listed, expected, "{format:?}, stripped: {}", spec.stripped);
        }
    }
}

#[test]
fn document_descriptions_name_format_and_architecture() {
    let formats: Vec<(Option<String>, Option<String>)> = FORMATS
        .iter()
        .map(|&format| {
            let info = provider(&Spec::sample(), format)
                .0
                .list_documents()
                .unwrap()
                .remove(0);
            (info.format, info.architecture)
        })
        .collect();
    let expected = [("elf", "x86_64"), ("macho", "x86_64"), ("pe", "x86_64")]
        .map(|(f, a)| (Some(f.to_owned()), Some(a.to_owned())));
    assert_eq!(formats, expected);
}

#[test]
fn procedures_keep_raw_names_sources_and_sizes() {
    for format in FORMATS {
        let spec = Spec::sample();
        let (provider, built) = provider(&spec, format);
        let at = |index: u64| Address::new(built.text_address + index * FUNCTION_SIZE);
        let mangled = provider.procedure_info("fixture", at(3)).unwrap();
        let name = mangled.name.unwrap();
        assert_eq!(name.name, "foo::bar(int)", "{format:?}");
        assert_eq!(Some(name.raw_name), spec.functions[3].written(format));
        let code = if format == Format::MachO {
            "__TEXT,__text"
        } else {
            ".text"
        };
        assert_eq!(mangled.segment.as_deref(), Some(code));
        let unwind = match format {
            Format::MachO => ProcedureSource::FunctionStarts,
            Format::Elf | Format::Pe => ProcedureSource::UnwindTable,
        };
        assert!(
            mangled.sources.contains(&unwind),
            "{format:?}: {:?}",
            mangled.sources
        );
        let unnamed = provider.procedure_info("fixture", at(6)).unwrap();
        assert_eq!(unnamed.name, None);
        assert_eq!(unnamed.sources, [unwind]);
        let expected_size = (format != Format::MachO).then_some(FUNCTION_SIZE);
        assert_eq!(unnamed.size, expected_size, "{format:?}");
        let exported = provider.procedure_info("fixture", at(0)).unwrap();
        let export_source = match format {
            Format::Elf => ProcedureSource::DynamicSymbols,
            Format::MachO => ProcedureSource::SymbolTable,
            Format::Pe => ProcedureSource::Exports,
        };
        assert!(
            exported.sources.contains(&export_source),
            "{format:?}: {:?}",
            exported.sources
        );
        assert!(matches!(
            provider.procedure_info("fixture", Address::new(built.text_address + 1)),
            Err(ProviderError::NoProcedure { .. })
        ));
    }
}

#[test]
fn a_name_at_two_addresses_is_ambiguous() {
    for format in FORMATS {
        let (provider, built) = provider(&Spec::sample(), format);
        let helper = Spec::sample().functions[1].written(format).unwrap();
        let found = provider
            .search_procedures(
                "fixture",
                &ProcedureQuery::new(helper.clone(), NameMatch::Exact),
            )
            .unwrap();
        let addresses: Vec<Address> = found.procedures.iter().map(|p| p.address).collect();
        let first = built.text_address + FUNCTION_SIZE;
        assert_eq!(
            addresses,
            [Address::new(first), Address::new(first + FUNCTION_SIZE)]
        );

        let session = Session::new();
        session
            .open_providers("fixture", vec![Arc::new(provider)])
            .unwrap();
        let target = session.target(None, None).unwrap();
        assert!(matches!(
            target.resolve_procedure(&helper),
            Err(SessionError::AmbiguousProcedure { .. })
        ));
        let main = Spec::sample().functions[0].written(format).unwrap();
        assert_eq!(
            target.resolve_procedure(&main).unwrap(),
            Address::new(built.text_address)
        );
        assert_eq!(
            target.resolve_procedure("foo::bar(int)").unwrap(),
            Address::new(built.text_address + 3 * FUNCTION_SIZE)
        );
    }
}

#[test]
fn contains_search_uses_the_matching_key() {
    let (provider, _) = provider(&Spec::sample(), Format::Elf);
    let found = provider
        .search_procedures("fixture", &ProcedureQuery::new("API_", NameMatch::Contains))
        .unwrap();
    let names: Vec<String> = found
        .procedures
        .iter()
        .map(|p| p.name.clone().unwrap().name)
        .collect();
    assert_eq!(names, ["api_open", "api_close"]);
    let limited = provider
        .search_procedures(
            "fixture",
            &ProcedureQuery::new("", NameMatch::Contains).with_limit(2),
        )
        .unwrap();
    assert_eq!(limited.procedures.len(), 2);
    assert!(limited.truncated);
}

#[test]
fn fat_files_have_one_document_per_slice() {
    let small = Spec::numbered(3);
    let x86 = macho::build(&Spec::sample(), macho::X86_64);
    let arm = macho::build(&small, macho::ARM64);
    let arm_e = macho::build(&small, macho::ARM64E);
    let again = macho::build(&small, macho::ARM64);
    let fat = macho::fat(&[
        (macho::X86_64, &x86.bytes),
        (macho::ARM64, &arm.bytes),
        (macho::ARM64E, &arm_e.bytes),
        (macho::ARM64, &again.bytes),
    ]);
    let provider = NativeProvider::from_bytes("tool", fat).unwrap();
    let names: Vec<String> = provider
        .list_documents()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(
        names,
        [
            "tool[x86_64]",
            "tool[arm64]",
            "tool[arm64e]",
            "tool[arm64#2]"
        ]
    );
    assert_eq!(
        list_all(&provider, "tool[x86_64]"),
        Spec::sample().expected(Format::MachO, x86.text_address)
    );
    assert_eq!(
        list_all(&provider, "tool[arm64e]"),
        small.expected(Format::MachO, arm_e.text_address)
    );
    let bytes = provider
        .read_bytes(
            "tool[arm64]",
            Address::new(arm.text_address),
            ReadLength::new(16).unwrap(),
        )
        .unwrap();
    assert_eq!(bytes, function_bytes());
}

#[test]
fn segments_strings_and_bytes() {
    for format in FORMATS {
        let (provider, built) = provider(&Spec::sample(), format);
        let segments = provider.list_segments("fixture").unwrap();
        let code = segments
            .iter()
            .find(|s| s.address.value() == built.text_address)
            .unwrap_or_else(|| panic!("{format:?}: no code segment in {segments:?}"));
        assert!(code.permissions.execute, "{format:?}");
        assert!(segments.windows(2).all(|w| w[0].address <= w[1].address));

        let found = provider
            .search_strings("fixture", &StringQuery::new("FIXTURE"))
            .unwrap();
        let texts: Vec<&str> = found.matches.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, STRINGS, "{format:?}");
        assert_eq!(
            found.matches[0].address,
            Address::new(built.rodata_address + 1)
        );

        let length = ReadLength::new(4096).unwrap();
        let start = provider
            .read_bytes("fixture", Address::new(built.text_address), length)
            .unwrap();
        assert_eq!(&start[..16], function_bytes());
        assert!(start.len() <= 4096);
        let last = built.text_address + Spec::sample().text_size() - 4;
        let tail = provider
            .read_bytes("fixture", Address::new(last), ReadLength::new(4).unwrap())
            .unwrap();
        assert_eq!(tail, [0xcc; 4]);
        assert!(matches!(
            provider.read_bytes("fixture", Address::new(0x10), length),
            Err(ProviderError::Unmapped { .. })
        ));
    }
}

#[test]
fn large_binaries_list_every_function() {
    let spec = Spec::numbered(6_000);
    for format in FORMATS {
        let (provider, built) = provider(&spec, format);
        let listed = list_all(&provider, "fixture");
        assert_eq!(listed.len(), 6_000);
        assert_eq!(
            listed,
            spec.expected(format, built.text_address),
            "{format:?}"
        );
    }
}

#[test]
fn files_are_memory_mapped_and_opened_by_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.exe");
    let built = build(&Spec::sample(), Format::Pe);
    std::fs::write(&path, &built.bytes).unwrap();
    let provider = NativeProvider::open(&path).unwrap();
    assert_eq!(provider.list_documents().unwrap()[0].name, "app.exe");
    assert!(
        Operation::ALL
            .iter()
            .all(|&op| provider.supports(op) == (op != Operation::Decompile)),
        "native supports every operation but decompile"
    );

    let session = Session::new();
    let opened = rea::providers::open_path(&session, &path).unwrap();
    assert_eq!(opened.providers, ["native"]);
    assert_eq!(opened.current_document.as_deref(), Some("app.exe"));
    assert_eq!(opened.label, path.display().to_string());
}

#[test]
fn non_binaries_are_rejected_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, b"just some text").unwrap();
    let mut truncated = build(&Spec::sample(), Format::Elf).bytes;
    truncated.truncate(40);
    let messages = [
        NativeProvider::open(&empty).err().unwrap().to_string(),
        NativeProvider::open(&text).err().unwrap().to_string(),
        NativeProvider::open(&dir.path().join("missing"))
            .err()
            .unwrap()
            .to_string(),
        NativeProvider::from_bytes("cut", truncated)
            .err()
            .unwrap()
            .to_string(),
    ];
    let shown = messages.join("\n");
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(&mut settings, dir.path(), "[dir]");
    settings.bind(|| {
        insta::assert_snapshot!("native__open_errors", shown);
    });
}

#[test]
fn truncated_and_corrupted_fixtures_never_panic() {
    for format in FORMATS {
        let bytes = build(&Spec::sample(), format).bytes;
        let mut variants: Vec<Vec<u8>> = (0..bytes.len())
            .step_by(97)
            .map(|n| bytes[..n].to_vec())
            .collect();
        for position in (0..bytes.len()).step_by(53) {
            let mut flipped = bytes.clone();
            flipped[position] ^= 0xff;
            variants.push(flipped);
        }
        for variant in variants {
            let Ok(provider) = NativeProvider::from_bytes("x", variant) else {
                continue;
            };
            for document in provider.list_documents().unwrap() {
                let listed = list_all(&provider, &document.name);
                for (address, _) in listed.iter().take(3) {
                    let address = Address::parse(address).unwrap();
                    let _ = provider.procedure_info(&document.name, address);
                    let _ =
                        provider.read_bytes(&document.name, address, ReadLength::new(64).unwrap());
                }
                let _ = provider.list_segments(&document.name).unwrap();
                let _ = provider
                    .search_strings(&document.name, &StringQuery::new("a"))
                    .unwrap();
            }
        }
    }
}
