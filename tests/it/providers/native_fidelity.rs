//! Fidelity of the native provider to binutils on generated fixtures (and system binaries when
//! present): GNU IFUNC symbols and symbol versions, C++ names as `c++filt` prints them, Mach-O
//! permissions from `initprot`, and PE exports after a malformed forwarder.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rea::providers::native::NativeProvider;
use rea::session::{Address, NameMatch, ProcedureQuery, Provider};

use crate::support::fixtures::spec::{Binding, Function};
use crate::support::fixtures::{self, Format, Spec, build};

/// Output of `program args` fed `input`, or `None` (with a message) when it cannot run.
fn run(program: &str, args: &[&str], input: &str) -> Option<String> {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            println!("skipped: {program} is not available: {error}");
            return None;
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    if !output.status.success() {
        println!(
            "skipped: {program} {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn document(provider: &NativeProvider) -> String {
    provider.list_documents().unwrap()[0].name.clone()
}

fn exact(provider: &NativeProvider, name: &str) -> Vec<u64> {
    provider
        .search_procedures(
            &document(provider),
            &ProcedureQuery::new(name, NameMatch::Exact),
        )
        .unwrap()
        .procedures
        .iter()
        .map(|p| p.address.value())
        .collect()
}

/// Every (raw, display) name the provider knows, primary names and aliases.
fn all_names(provider: &NativeProvider) -> BTreeMap<String, String> {
    let name = document(provider);
    let mut names = BTreeMap::new();
    for (address, _) in fixtures::helpers::list_all(provider, &name) {
        let info = provider
            .procedure_info(&name, Address::parse(&address).unwrap())
            .unwrap();
        for n in info.name.iter().chain(&info.aliases) {
            names.insert(n.raw_name.clone(), n.name.clone());
        }
    }
    names
}

const IFUNC_LIBRARY: &str = r#"
int impl_old(void) { return 1; }
int impl_new(void) { return 2; }
__asm__(".symver impl_old,versioned@VER_1");
__asm__(".symver impl_new,versioned@@VER_2");
static int chosen(void) { return 3; }
static void *resolve_chooser(void) { return (void *)chosen; }
int chooser(void) __attribute__((ifunc("resolve_chooser")));
"#;

const VERSION_SCRIPT: &str = "VER_1 { global: versioned; chooser; local: *; };\n\
    VER_2 { global: versioned; } VER_1;\n";

/// A shared library with an IFUNC and a symbol in two versions, stripped of `.symtab` so that
/// only the dynamic symbol table names them (as in libc).
fn ifunc_library(directory: &Path) -> Option<PathBuf> {
    std::fs::write(directory.join("lib.c"), IFUNC_LIBRARY).unwrap();
    std::fs::write(directory.join("lib.map"), VERSION_SCRIPT).unwrap();
    let output = directory.join("libifunc.so");
    let script = format!(
        "-Wl,--version-script={}",
        directory.join("lib.map").display()
    );
    run(
        "cc",
        &[
            "-shared",
            "-fPIC",
            "-O1",
            &script,
            "-o",
            output.to_str()?,
            directory.join("lib.c").to_str()?,
        ],
        "",
    )?;
    run("strip", &["--strip-all", output.to_str()?], "")?;
    Some(output)
}

/// `nm -D --defined-only` addresses of `name` (as nm prints it, with version).
fn nm_dynamic(path: &Path, name: &str) -> Option<u64> {
    let text = run("nm", &["-D", "--defined-only", path.to_str()?], "")?;
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.len() == 3 && fields[2] == name)
            .then(|| u64::from_str_radix(fields[0], 16).ok())
            .flatten()
    })
}

#[test]
fn ifunc_symbols_are_procedures_and_names_pick_the_default_version() {
    let scratch = tempfile::tempdir().unwrap();
    let Some(path) = ifunc_library(scratch.path()) else {
        return;
    };
    let provider = NativeProvider::open(&path).unwrap();
    // `nm -D` types the IFUNC `i` and prints `versioned@VER_1` and `versioned@@VER_2`.
    let chooser = nm_dynamic(&path, "chooser@@VER_1").unwrap();
    assert_eq!(exact(&provider, "chooser"), [chooser]);
    let default = nm_dynamic(&path, "versioned@@VER_2").unwrap();
    let compat = nm_dynamic(&path, "versioned@VER_1").unwrap();
    assert_ne!(default, compat);
    assert_eq!(exact(&provider, "versioned"), [default]);
    assert_eq!(exact(&provider, "versioned@VER_1"), [compat]);
}

#[test]
fn libc_ifuncs_are_named_and_memcpy_is_the_default_version() {
    let path = Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
    if !path.exists() {
        println!("skipped: {} is not present", path.display());
        return;
    }
    let provider = NativeProvider::open(path).unwrap();
    for name in ["strlen", "memchr", "memcpy"] {
        assert_eq!(exact(&provider, name).len(), 1, "{name}");
    }
    let Some(default) = nm_dynamic(path, "memcpy@@GLIBC_2.14") else {
        return;
    };
    assert_eq!(exact(&provider, "memcpy"), [default]);
    if let Some(compat) = nm_dynamic(path, "memcpy@GLIBC_2.2.5") {
        assert_eq!(exact(&provider, "memcpy@GLIBC_2.2.5"), [compat]);
    }
}

/// C++ names of each form the demangler adjusts to `c++filt`'s: thunks, the standard
/// abbreviations and their constructors, integer literals, `decltype(nullptr)`, a class
/// really named `std::string`, and template constructors.
fn cpp_spec() -> Spec {
    let names = [
        "_ZN3foo3barEi",
        "_ZThn8_N3foo3barEv",
        "_ZTv0_n24_N3foo3barEv",
        "_ZTchn8_h16_N3foo3bazEv",
        "_ZNSs4sizeEv",
        "_ZNSsC1Ev",
        "_ZNSoD0Ev",
        "_Z1fSt5ratioILl1ELl1000EE",
        "_Z1fDn",
        "_ZNSt6string3fooEv",
        "_ZNKSt4hashISsEclESs",
        // Template constructors: no return type is encoded (`T_` is the first parameter).
        "_ZNSsC1IPcEET_S1_RKSaIcE",
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2IPKcvEET_S8_RKS3_",
    ];
    Spec {
        functions: names
            .iter()
            .map(|raw| Function::mangled(raw, raw, Binding::Global))
            .collect(),
        stripped: false,
    }
}

/// Raw names whose display differs from `c++filt`'s, with both renderings.
fn demangling_differences(provider: &NativeProvider) -> Vec<(String, String, String)> {
    let names: Vec<(String, String)> = all_names(provider)
        .into_iter()
        .filter(|(raw, _)| raw.starts_with("_Z"))
        .collect();
    println!("comparing {} C++ names with c++filt", names.len());
    let input: String = names.iter().map(|(raw, _)| format!("{raw}\n")).collect();
    let Some(output) = run("c++filt", &[], &input) else {
        return Vec::new();
    };
    let expected: Vec<&str> = output.lines().collect();
    assert_eq!(expected.len(), names.len());
    names
        .iter()
        .zip(expected)
        .filter(|((_, ours), theirs)| ours != theirs)
        .map(|((raw, ours), theirs)| (raw.clone(), ours.clone(), theirs.to_owned()))
        .collect()
}

/// FIXME: `cpp_demangle` 0.5.1 (the newest release) still differs from `c++filt` in meaning on
/// these libstdc++ names: it puts the `&` of `__do_upcast`'s last parameter on its prefix
/// (`__class_type_info&::__upcast_result` for `__class_type_info::__upcast_result&`), from its
/// resolution of a substitution (`S1_`) inside a reference, decided inside the demangler's
/// parser, which the crate does not let a caller adjust. (The 24 `basic_string` iterator
/// constructors it used to get wrong are corrected in `demangle::template_structor`.) Until
/// the demangler is patched or replaced, the test pins the exact list.
const KNOWN_DIFFERENCES: [&str; 2] = [
    "_ZNK10__cxxabiv120__si_class_type_info11__do_upcastEPKNS_17__class_type_infoEPKvRNS1_15__upcast_resultE",
    "_ZNK10__cxxabiv121__vmi_class_type_info11__do_upcastEPKNS_17__class_type_infoEPKvRNS1_15__upcast_resultE",
];

#[test]
fn cpp_names_match_cxxfilt_on_the_system_libstdcxx() {
    let path = Path::new("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
    if !path.exists() {
        println!(
            "skipped: {} is not present; checking the fixture only",
            path.display()
        );
    } else {
        let provider = NativeProvider::open(path).unwrap();
        let differences = demangling_differences(&provider);
        println!(
            "{} C++ names of {} differ from c++filt",
            differences.len(),
            path.display()
        );
        for (raw, ours, theirs) in &differences {
            println!("{raw}\n  ours:     {ours}\n  c++filt:  {theirs}");
        }
        let raw: Vec<&str> = differences.iter().map(|(raw, _, _)| raw.as_str()).collect();
        assert_eq!(raw, KNOWN_DIFFERENCES);
    }
    let provider =
        NativeProvider::from_bytes("fixture", build(&cpp_spec(), Format::Elf).bytes).unwrap();
    assert_eq!(demangling_differences(&provider), []);
    // A c++filt-style name finds the procedure.
    for name in [
        "foo::bar(int)",
        "virtual thunk to foo::bar()",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::size()",
        "f(std::ratio<1l, 1000l>)",
        "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<char*>(char*, char*, std::allocator<char> const&)",
        "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<char const*, void>(char const*, char const*, std::allocator<char> const&)",
    ] {
        assert_eq!(exact(&provider, name).len(), 1, "{name}");
    }
}

/// The file offset of the `LC_SEGMENT_64` command of `segment` in a thin 64-bit Mach-O.
fn macho_segment_command(bytes: &[u8], segment: &[u8]) -> usize {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let count = word(16) as usize;
    let mut at = 32;
    for _ in 0..count {
        let (command, size) = (word(at), word(at + 4) as usize);
        let name = &bytes[at + 8..at + 24];
        if command == 0x19 && name.starts_with(segment) && name[segment.len()] == 0 {
            return at;
        }
        at += size;
    }
    panic!("no segment command");
}

fn permissions_of(provider: &NativeProvider, section: &str) -> String {
    provider
        .list_segments(&document(provider))
        .unwrap()
        .into_iter()
        .find(|s| s.name == section)
        .unwrap()
        .permissions
        .to_string()
}

#[test]
fn macho_section_permissions_come_from_initprot() {
    let built = build(&Spec::sample(), Format::MachO);
    let command = macho_segment_command(&built.bytes, b"__TEXT");
    let provider = NativeProvider::from_bytes("tool", built.bytes.clone()).unwrap();
    assert_eq!(permissions_of(&provider, "__TEXT,__text"), "r-x");
    let procedures = fixtures::helpers::list_all(&provider, "tool").len();
    // A ceiling (`maxprot`) of rwx leaves what is mapped (`initprot`, r-x) unchanged.
    let mut widened = built.bytes.clone();
    widened[command + 56..command + 60].copy_from_slice(&7u32.to_le_bytes());
    let provider = NativeProvider::from_bytes("tool", widened).unwrap();
    assert_eq!(permissions_of(&provider, "__TEXT,__text"), "r-x");
    // Mapped read-only, the section holds no procedures even with an r-x ceiling.
    let mut read_only = built.bytes.clone();
    read_only[command + 56..command + 60].copy_from_slice(&5u32.to_le_bytes());
    read_only[command + 60..command + 64].copy_from_slice(&1u32.to_le_bytes());
    let provider = NativeProvider::from_bytes("tool", read_only).unwrap();
    assert_eq!(permissions_of(&provider, "__TEXT,__text"), "r--");
    assert!(fixtures::helpers::list_all(&provider, "tool").len() < procedures);
}

#[test]
fn a_malformed_pe_forwarder_drops_only_itself() {
    use object::read::pe::PeFile64;
    use object::{LittleEndian as LE, pe};

    // Stripped: the exports are the only names.
    let built = build(&Spec::sample().stripped(), Format::Pe);
    let mut bytes = built.bytes.clone();
    let (functions, first_name) = {
        let file = PeFile64::parse(&*bytes).unwrap();
        let directory = file
            .data_directory(pe::IMAGE_DIRECTORY_ENTRY_EXPORT)
            .unwrap();
        let sections = file.section_table();
        let offset_of = |rva: u32| sections.pe_file_range_at(rva).unwrap().0 as usize;
        let table = file.export_table().unwrap().unwrap();
        let directory_offset = offset_of(directory.virtual_address.get(LE));
        let functions = offset_of(table.directory().address_of_functions.get(LE));
        let first_name = table.name_pointers()[0].get(LE);
        assert!(directory_offset <= functions);
        (functions, first_name)
    };
    let provider = NativeProvider::from_bytes("lib.dll", bytes.clone()).unwrap();
    let before = fixtures::helpers::list_all(&provider, "lib.dll");
    // The first function entry now points at a name inside the export directory: a forwarder
    // string without the `DLL.name` separator.
    bytes[functions..functions + 4].copy_from_slice(&first_name.to_le_bytes());
    let object_file = PeFile64::parse(&*bytes).unwrap();
    // `object` reports the forwarder as an error in the middle of its export iterator.
    assert!(
        object::Object::exports(&object_file)
            .unwrap()
            .any(|export| export.is_err())
    );
    let provider = NativeProvider::from_bytes("lib.dll", bytes).unwrap();
    let after = fixtures::helpers::list_all(&provider, "lib.dll");
    let names = |listed: &[(String, Option<String>)]| -> Vec<String> {
        listed.iter().filter_map(|(_, n)| n.clone()).collect()
    };
    // The forwarded entry was `main` (the first function); the exports after it stay.
    let mut expected = names(&before);
    expected.retain(|name| name != "main");
    assert_eq!(names(&after), expected);
    assert!(expected.iter().any(|n| n == "api_open") && expected.iter().any(|n| n == "api_close"));
}

/// `bytes` (a 64-bit little-endian ELF) without its section headers: `e_shoff`, `e_shnum`
/// and `e_shstrndx` cleared, as some packers and loaders leave files.
fn without_section_headers(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes[0x28..0x30].fill(0);
    bytes[0x3c..0x40].fill(0);
    bytes
}

/// Addresses of a source, and (address, raw name) of every name, of a provider's procedures.
fn procedures_by_source(
    provider: &NativeProvider,
    source: rea::session::ProcedureSource,
) -> std::collections::BTreeSet<u64> {
    let name = document(provider);
    fixtures::helpers::list_all(provider, &name)
        .into_iter()
        .filter_map(|(address, _)| {
            let info = provider
                .procedure_info(&name, Address::parse(&address).unwrap())
                .unwrap();
            info.sources
                .contains(&source)
                .then_some(info.address.value())
        })
        .collect()
}

#[test]
fn elf_without_section_headers_uses_pt_dynamic_and_pt_gnu_eh_frame() {
    use rea::session::ProcedureSource;

    let scratch = tempfile::tempdir().unwrap();
    let mut paths: Vec<PathBuf> = ifunc_library(scratch.path()).into_iter().collect();
    for system in ["/bin/ls", "/usr/lib/x86_64-linux-gnu/libc.so.6"] {
        if Path::new(system).exists() {
            paths.push(PathBuf::from(system));
        } else {
            println!("skipped: {system} is not present");
        }
    }
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
            println!(
                "skipped: {} is not a 64-bit little-endian ELF",
                path.display()
            );
            continue;
        }
        let whole = NativeProvider::from_bytes("whole", bytes.clone()).unwrap();
        let bare = NativeProvider::from_bytes("bare", without_section_headers(bytes)).unwrap();
        assert!(
            bare.list_segments("bare")
                .unwrap()
                .iter()
                .all(|s| !s.name.starts_with('.')),
            "no sections are left"
        );
        // The same unwind-table starts.
        let unwind = procedures_by_source(&whole, ProcedureSource::UnwindTable);
        assert!(!unwind.is_empty());
        assert_eq!(
            procedures_by_source(&bare, ProcedureSource::UnwindTable),
            unwind,
            "{}",
            path.display()
        );
        // The same dynamic function symbols, by name.
        let names = all_names(&whole);
        let bare_names = all_names(&bare);
        let dynamic = procedures_by_source(&whole, ProcedureSource::DynamicSymbols);
        assert_eq!(
            procedures_by_source(&bare, ProcedureSource::DynamicSymbols),
            dynamic,
            "{}",
            path.display()
        );
        let missing: Vec<&String> = names
            .keys()
            .filter(|raw| !raw.ends_with("@plt") && !bare_names.contains_key(*raw))
            .collect();
        // Versions are read through DT_VERSYM and DT_VERDEF: the bare name is the default.
        for name in ["versioned", "memcpy"] {
            assert!(exact(&bare, name).len() <= 1, "{name}");
        }
        println!(
            "{}: {} unwind starts, {} dynamic functions without section headers",
            path.display(),
            unwind.len(),
            dynamic.len()
        );
        // Only names of the static symbol table (gone with the section headers) are missing.
        for raw in missing {
            assert!(
                exact(&whole, raw).iter().all(|address| {
                    whole
                        .procedure_info("whole", Address::new(*address))
                        .unwrap()
                        .sources
                        .iter()
                        .all(|s| *s != ProcedureSource::DynamicSymbols)
                }),
                "{raw}"
            );
        }
        // The undefined dynamic symbols are still the imports.
        let imports = |p: &NativeProvider| -> std::collections::BTreeSet<String> {
            p.list_imports(&document(p), None, 500)
                .unwrap()
                .imports
                .into_iter()
                .map(|i| i.symbol.raw_name)
                .collect()
        };
        assert_eq!(imports(&bare), imports(&whole), "{}", path.display());
    }
}

/// Builtin types as mangled and as printed.
const BUILTINS: [(&str, &str); 5] = [
    ("i", "int"),
    ("c", "char"),
    ("d", "double"),
    ("l", "long"),
    ("b", "bool"),
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

    /// A template constructor `C::C<T>(T, ...)` is shown with every parameter, the first (the
    /// template parameter) included: the ABI encodes no return type for it.
    #[test]
    fn template_constructors_keep_every_parameter(
        class in "[A-Z][a-z]{1,8}",
        argument in 0..BUILTINS.len(),
        rest in proptest::collection::vec(0..BUILTINS.len(), 0..4),
    ) {
        let (mangled_argument, argument) = BUILTINS[argument];
        let mut raw = format!("_ZN{}{class}C1I{mangled_argument}EET_", class.len());
        let mut parameters = vec![argument];
        for index in rest {
            raw.push_str(BUILTINS[index].0);
            parameters.push(BUILTINS[index].1);
        }
        let expected = format!("{class}::{class}<{argument}>({})", parameters.join(", "));
        let spec = Spec {
            functions: vec![Function::mangled(&raw, &expected, Binding::Global)],
            stripped: false,
        };
        let provider =
            NativeProvider::from_bytes("fixture", build(&spec, Format::Elf).bytes).unwrap();
        let names: Vec<String> = all_names(&provider)
            .into_iter()
            .filter(|(found, _)| *found == raw)
            .map(|(_, display)| display)
            .collect();
        proptest::prop_assert_eq!(names, vec![expected]);
    }
}
