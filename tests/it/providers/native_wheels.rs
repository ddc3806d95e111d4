//! The native provider on real Mach-O and PE extension modules from a pinned Python wheel
//! (`markupsafe` 2.1.5 for macOS x86-64 and Windows x64), downloaded at test time into the
//! ignored `target/` folder, compared with `llvm-objdump --macho` and `objdump -p`. Without
//! the network, `pip` or the tools, the test says so and passes: generated fixtures cover the
//! same code paths in `native_imports` and `native_fidelity`.

use std::collections::{BTreeMap, BTreeSet};

use rea::providers::native::NativeProvider;
use rea::session::{Import, Provider};

use crate::support::wheels::{extension, run};

fn imports(provider: &NativeProvider) -> Vec<Import> {
    let document = provider.list_documents().unwrap()[0].name.clone();
    provider.list_imports(&document, None, 500).unwrap().imports
}

#[test]
fn macho_imports_match_llvm_objdump_bind_tables_and_stubs() {
    let Some(path) = extension("macosx_10_9_x86_64", ".so") else {
        return;
    };
    let path_text = path.to_str().unwrap();
    let Some(binds) = run(
        "llvm-objdump",
        &["--macho", "--bind", "--lazy-bind", path_text],
    ) else {
        return;
    };
    let Some(indirect) = run(
        "llvm-objdump",
        &["--macho", "--indirect-symbols", path_text],
    ) else {
        return;
    };
    // symbol -> (slot addresses, dylib) from the bind and lazy-bind tables.
    let mut bound: BTreeMap<String, (BTreeSet<u64>, String)> = BTreeMap::new();
    for line in binds.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 5 || !fields[0].starts_with("__") {
            continue;
        }
        let Some(address) = fields[2]
            .strip_prefix("0x")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        else {
            continue;
        };
        let symbol = fields[fields.len() - 1].to_owned();
        let dylib = fields[fields.len() - 2].to_owned();
        let entry = bound
            .entry(symbol)
            .or_insert_with(|| (BTreeSet::new(), dylib));
        entry.0.insert(address);
    }
    // symbol -> stub address from the `__stubs` indirect symbols.
    let mut stubs: BTreeMap<String, u64> = BTreeMap::new();
    let mut in_stubs = false;
    for line in indirect.lines() {
        if line.starts_with("Indirect symbols for") {
            in_stubs = line.contains("__stubs");
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if in_stubs
            && fields.len() == 3
            && let Some(address) = fields[0]
                .strip_prefix("0x")
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        {
            stubs.insert(fields[2].to_owned(), address);
        }
    }
    let provider = NativeProvider::open(&path).unwrap();
    let imports = imports(&provider);
    println!(
        "{}: {} imports, {} bound symbols",
        path.display(),
        imports.len(),
        bound.len()
    );
    let names: BTreeSet<String> = imports.iter().map(|i| i.symbol.raw_name.clone()).collect();
    assert_eq!(names, bound.keys().cloned().collect());
    for import in &imports {
        let (slots, dylib) = &bound[&import.symbol.raw_name];
        let slot = import
            .slot
            .expect("every bound symbol has a pointer")
            .value();
        assert!(slots.contains(&slot), "{import:?} not in {slots:x?}");
        match dylib.as_str() {
            // Flat namespace lookup: ordinal 0xfe, no library.
            "flat-namespace" => assert_eq!(import.library, None, "{import:?}"),
            short => assert!(
                import.library.as_deref().is_some_and(|l| l.contains(short)),
                "{import:?}"
            ),
        }
        assert_eq!(
            import.stub.map(|s| s.value()),
            stubs.get(&import.symbol.raw_name).copied(),
            "{import:?}"
        );
    }
}

#[test]
fn pe_imports_of_a_real_extension_match_objdump() {
    let Some(path) = extension("win_amd64", ".pyd") else {
        return;
    };
    let Some(text) = run("objdump", &["-p", path.to_str().unwrap()]) else {
        return;
    };
    let mut listed: Vec<(String, String)> = Vec::new();
    let mut dll = String::new();
    let mut in_imports = false;
    for line in text.lines() {
        if line.starts_with("The Import Tables") {
            in_imports = true;
        } else if line.starts_with("The ") && !line.starts_with("The Import Tables") {
            in_imports = false;
        }
        if !in_imports {
            continue;
        }
        if let Some(name) = line.trim().strip_prefix("DLL Name: ") {
            dll = name.to_owned();
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !dll.is_empty() && fields.len() == 3 && fields[0] != "vma:" {
            listed.push((dll.clone(), fields[2].to_owned()));
        }
    }
    let provider = NativeProvider::open(&path).unwrap();
    let ours: Vec<(String, String)> = imports(&provider)
        .into_iter()
        .map(|i| (i.library.unwrap(), i.symbol.raw_name))
        .collect();
    println!("{}: {} imports", path.display(), ours.len());
    assert!(!ours.is_empty());
    assert_eq!(ours, listed);
}
