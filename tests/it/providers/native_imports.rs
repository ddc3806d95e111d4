//! Imports and named PLT stubs of the native provider, compared with binutils: `objdump -d`
//! `<x@plt>` labels, `readelf --dyn-syms -W` undefined symbols and `objdump -p` import tables.
//! ELF fixtures are compiled at test time by the C compiler every Rust toolchain links with;
//! the PE fixture is written by hand. System binaries are compared when present.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rea::providers::native::NativeProvider;
use rea::session::{Address, Import, Operation, ProcedureSource, Provider, ProviderError};

use crate::support::fixtures;
use crate::support::wheels::run;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    char *copy = malloc(strlen(argv[0]) + 1);
    memcpy(copy, argv[0], strlen(argv[0]) + 1);
    printf("%s %d\n", copy, argc);
    puts(copy);
    free(copy);
    return 0;
}
"#;

/// Compiles `source` with `cc` and `flags` into `directory/name`.
fn compile(directory: &Path, name: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    let source_path = directory.join(format!("{name}.c"));
    std::fs::write(&source_path, source).unwrap();
    let output = directory.join(name);
    let mut args: Vec<&str> = flags.to_vec();
    args.extend([
        "-o",
        output.to_str().unwrap(),
        source_path.to_str().unwrap(),
    ]);
    run("cc", &args)?;
    Some(output)
}

/// The generated ELF programs: default flags, lazy binding without IBT (`.plt` jumps), and
/// IBT with `.plt.sec` (when the compiler accepts the flags).
fn generated(directory: &Path) -> Vec<PathBuf> {
    let variants: [(&str, &[&str]); 3] = [
        ("default", &["-O0"]),
        ("lazy", &["-O0", "-fcf-protection=none", "-Wl,-z,lazy"]),
        ("ibt", &["-O0", "-fcf-protection=full", "-Wl,-z,now"]),
    ];
    variants
        .iter()
        .filter_map(|(name, flags)| compile(directory, name, PROGRAM, flags))
        .collect()
}

fn open(path: &Path) -> NativeProvider {
    NativeProvider::open(path).unwrap()
}

fn document(provider: &NativeProvider) -> String {
    provider.list_documents().unwrap()[0].name.clone()
}

fn all_imports(provider: &NativeProvider) -> Vec<Import> {
    let name = document(provider);
    let mut found = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = provider.list_imports(&name, cursor.as_deref(), 7).unwrap();
        assert!(page.imports.len() <= 7);
        found.extend(page.imports);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return found,
        }
    }
}

/// `(address, name)` of every `<name@plt>:` label of `objdump -d`.
fn objdump_plt(path: &Path) -> Option<BTreeSet<(u64, String)>> {
    let text = run("objdump", &["-d", "-w", path.to_str()?])?;
    Some(
        text.lines()
            .filter_map(|line| {
                let (address, label) = line.split_once(' ')?;
                let name = label.strip_prefix('<')?.strip_suffix(">:")?;
                name.ends_with("@plt")
                    .then(|| Some((u64::from_str_radix(address, 16).ok()?, name.to_owned())))?
            })
            .collect(),
    )
}

/// `(address, raw name)` of the procedures the provider found as import stubs.
fn provider_plt(provider: &NativeProvider) -> BTreeSet<(u64, String)> {
    let name = document(provider);
    fixtures::helpers::list_all(provider, &name)
        .into_iter()
        .filter_map(|(address, _)| {
            let info = provider
                .procedure_info(&name, Address::parse(&address).unwrap())
                .unwrap();
            if !info.sources.contains(&ProcedureSource::ImportStubs) {
                return None;
            }
            let stub = info
                .name
                .iter()
                .chain(&info.aliases)
                .find(|n| n.raw_name.ends_with("@plt"))?
                .raw_name
                .clone();
            Some((info.address.value(), stub))
        })
        .collect()
}

/// `name@version` of each undefined symbol of `readelf --dyn-syms -W`.
fn readelf_undefined(path: &Path) -> Option<BTreeSet<String>> {
    let text = run("readelf", &["--dyn-syms", "-W", path.to_str()?])?;
    Some(
        text.lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.len() < 8 || fields[6] != "UND" {
                    return None;
                }
                // `puts@GLIBC_2.2.5 (3)`: drop the version index.
                Some(fields[7].to_owned())
            })
            .collect(),
    )
}

fn versioned(import: &Import) -> String {
    match &import.version {
        Some(version) => format!("{}@{version}", import.symbol.raw_name),
        None => import.symbol.raw_name.clone(),
    }
}

fn system_elves() -> Vec<PathBuf> {
    ["/bin/ls", "/usr/lib/x86_64-linux-gnu/libc.so.6"]
        .iter()
        .map(PathBuf::from)
        .filter(|path| {
            let present = path.exists();
            if !present {
                println!("skipped: {} is not present", path.display());
            }
            present
        })
        .collect()
}

#[test]
fn plt_stubs_are_procedures_named_as_objdump_labels_them() {
    let scratch = tempfile::tempdir().unwrap();
    let mut paths = generated(scratch.path());
    let compiled = paths.len();
    // A 32-bit x86 PIC library (`jmp *slot(%ebx)` entries), when the compiler can target it.
    let library = "int puts(const char *);\nint helper(const char *);\n\
        int f(const char *s) { puts(s); return helper(s); }\n";
    paths.extend(compile(
        scratch.path(),
        "pic32.so",
        library,
        &["-m32", "-shared", "-fPIC", "-nostdlib"],
    ));
    paths.extend(system_elves());
    for path in paths {
        let Some(expected) = objdump_plt(&path) else {
            continue;
        };
        let provider = open(&path);
        let found = provider_plt(&provider);
        println!(
            "{}: {} PLT stubs, objdump {}",
            path.display(),
            found.len(),
            expected.len()
        );
        assert_eq!(found, expected, "{}", path.display());
    }
    if compiled > 0 {
        // The generated program calls these through its PLT.
        let provider = open(&scratch.path().join("default"));
        let name = document(&provider);
        let found = provider
            .search_procedures(
                &name,
                &rea::session::ProcedureQuery::new("puts@plt", rea::session::NameMatch::Exact),
            )
            .unwrap();
        assert_eq!(found.procedures.len(), 1);
    }
}

#[test]
fn elf_imports_match_readelf_with_libraries_stubs_and_slots() {
    let scratch = tempfile::tempdir().unwrap();
    let mut paths = generated(scratch.path());
    paths.extend(system_elves());
    for path in &paths {
        let Some(expected) = readelf_undefined(path) else {
            continue;
        };
        let provider = open(path);
        let imports = all_imports(&provider);
        let found: BTreeSet<String> = imports.iter().map(versioned).collect();
        println!("{}: {} imports", path.display(), found.len());
        assert_eq!(found, expected, "{}", path.display());
        // Every stub is a listed PLT procedure at the same address.
        let stubs = provider_plt(&provider);
        for import in &imports {
            if let Some(stub) = import.stub {
                let named = format!("{}@plt", import.symbol.raw_name);
                assert!(stubs.contains(&(stub.value(), named)), "{import:?}");
                assert!(import.slot.is_some(), "{import:?}");
            }
        }
    }
    let Some(path) = paths.iter().find(|p| p.ends_with("default")) else {
        return;
    };
    let provider = open(path);
    let imports = all_imports(&provider);
    let puts = imports
        .iter()
        .find(|import| import.symbol.raw_name == "puts")
        .unwrap();
    assert_eq!(puts.library.as_deref(), Some("libc.so.6"));
    assert_eq!(puts.version.as_deref(), Some("GLIBC_2.2.5"));
    assert!(puts.stub.is_some() && puts.slot.is_some());
    // The slot is the GOT entry of its JUMP_SLOT relocation (`objdump -R`).
    if let Some(relocations) = run("objdump", &["-R", path.to_str().unwrap()]) {
        let slot = relocations
            .lines()
            .find(|line| line.contains("JUMP_SLOT") && line.contains(" puts@"))
            .and_then(|line| line.split_whitespace().next())
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .unwrap();
        assert_eq!(puts.slot.unwrap().value(), slot);
    }
}

#[test]
fn import_pages_are_bounded_and_cursors_checked() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(path) = generated(scratch.path()).into_iter().next() else {
        return;
    };
    let provider = open(&path);
    let name = document(&provider);
    let first = provider.list_imports(&name, None, 2).unwrap();
    assert_eq!(first.imports.len(), 2);
    let next = first.next_cursor.unwrap();
    let second = provider.list_imports(&name, Some(&next), 500).unwrap();
    assert!(second.next_cursor.is_none());
    assert_eq!(all_imports(&provider).len(), 2 + second.imports.len());
    for (cursor, limit) in [("import:0", 1), ("at:2", 1), ("import:9999", 1)] {
        let error = provider
            .list_imports(&name, Some(cursor), limit)
            .unwrap_err();
        assert!(
            matches!(error, ProviderError::InvalidCursor { .. }),
            "{error}"
        );
    }
    let error = provider.list_imports(&name, None, 0).unwrap_err();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("native_imports__list_imports_zero_limit", error.to_string());
        insta::assert_snapshot!(
            "native_imports__list_imports_bad_cursor",
            provider
                .list_imports(&name, Some("import:9999"), 1)
                .unwrap_err()
                .to_string()
        );
    });
    assert!(provider.supports(Operation::ListImports));
}

#[test]
fn pe_imports_match_objdump_with_dll_ordinal_thunk_and_iat_slot() {
    let (bytes, thunk, slot) = fixtures::pe_imports::build();
    let provider = NativeProvider::from_bytes("app.exe", bytes.clone()).unwrap();
    let imports = all_imports(&provider);
    let summary: Vec<(String, Option<String>, Option<u32>)> = imports
        .iter()
        .map(|i| (i.symbol.raw_name.clone(), i.library.clone(), i.ordinal))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "ExitProcess".to_owned(),
                Some("KERNEL32.dll".to_owned()),
                Some(0x15)
            ),
            ("#17".to_owned(), Some("KERNEL32.dll".to_owned()), Some(17)),
            ("puts".to_owned(), Some("msvcrt.dll".to_owned()), Some(3)),
        ]
    );
    assert_eq!(imports[0].stub, Some(Address::new(thunk)));
    assert_eq!(imports[0].slot, Some(Address::new(slot)));
    assert_eq!(imports[1].slot, Some(Address::new(slot + 8)));
    assert!(imports[1].stub.is_none() && imports[2].stub.is_none());
    // objdump -p lists the same DLLs and names (vma, hint and name per entry).
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("app.exe");
    std::fs::write(&path, &bytes).unwrap();
    if let Some(text) = run("objdump", &["-p", path.to_str().unwrap()]) {
        // Entries as `vma hint/ordinal name` under each `DLL Name:` line; an import by
        // ordinal shows its ordinal in hexadecimal and `<none>`.
        let mut listed: Vec<(String, u32, String)> = Vec::new();
        let mut dll = String::new();
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("DLL Name: ") {
                dll = name.to_owned();
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if dll.is_empty() || fields.len() != 3 || fields[0] == "vma:" {
                continue;
            }
            let number = if fields[2] == "<none>" {
                u32::from_str_radix(fields[1], 16)
            } else {
                fields[1].parse()
            };
            let Ok(number) = number else { continue };
            let name = if fields[2] == "<none>" {
                format!("#{number}")
            } else {
                fields[2].to_owned()
            };
            listed.push((dll.clone(), number, name));
        }
        let ours: Vec<(String, u32, String)> = imports
            .iter()
            .map(|i| {
                (
                    i.library.clone().unwrap(),
                    i.ordinal.unwrap(),
                    i.symbol.raw_name.clone(),
                )
            })
            .collect();
        assert_eq!(ours, listed, "{text}");
    }
}

proptest::proptest! {
    /// Pages of any size concatenate to the whole list, each within its limit.
    #[test]
    fn import_pages_concatenate_to_the_whole_list(limit in 1usize..=5) {
        let (bytes, _, _) = fixtures::pe_imports::build();
        let provider = NativeProvider::from_bytes("app.exe", bytes).unwrap();
        let whole = provider.list_imports("app.exe", None, 500).unwrap();
        proptest::prop_assert!(whole.next_cursor.is_none());
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = provider.list_imports("app.exe", cursor.as_deref(), limit).unwrap();
            proptest::prop_assert!(page.imports.len() <= limit && !page.imports.is_empty());
            paged.extend(page.imports);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        proptest::prop_assert_eq!(paged, whole.imports);
    }
}
