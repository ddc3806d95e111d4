//! Which words of data the native provider takes for pointers. A position-independent file's
//! loader writes every pointer its data holds, so there a word without a dynamic relocation is
//! an integer, even one that equals the address of a string (whether the relocations are
//! listed one by one or packed as `RELR`); in a file loaded at a fixed address any word may
//! be a pointer. Programs compiled at test time by `cc`, twice: the
//! second build's table holds the address the first build gave the string (its layout is the
//! same, since the constant keeps its width), checked with `nm`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rea::providers::native::NativeProvider;
use rea::session::{Address, FingerprintBounds, Provider, ReferenceKind};

use crate::support::wheels::run;

/// A string, a pointer to it (relocated in a position-independent build) and a table of
/// integers whose first entry is `PLACEHOLDER` until the string's address replaces it.
const PROGRAM: &str = r#"
static const char greeting[] __attribute__((used)) = "hello from the data pointer test";
const char *const greeting_pointer = greeting;
static const unsigned long numbers[] __attribute__((used)) = {PLACEHOLDER, 7, 11, 13};
unsigned long pick(unsigned long x) { return numbers[x % 4] + x; }
int main(int argc, char **argv) { (void)argv; return (int)pick((unsigned long)argc) + greeting_pointer[0]; }
"#;

/// A constant of the width the string's address is written in.
const PLACEHOLDER: &str = "0x1111111111111111UL";

struct Built {
    path: PathBuf,
    greeting: u64,
    pointer: u64,
    numbers: u64,
}

/// The address of `symbol` in `binary`, read by `nm`.
fn symbol(binary: &Path, symbol: &str) -> u64 {
    let listing = run("nm", &[binary.to_str().unwrap()]).expect("nm");
    let line = listing
        .lines()
        .find(|line| line.ends_with(&format!(" {symbol}")))
        .unwrap_or_else(|| panic!("{symbol} in {listing}"));
    u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
}

/// Builds `PROGRAM` with `flags` in `directory`: first with the placeholder, then with the
/// string's address in the table.
fn built(directory: &Path, name: &str, flags: &[&str]) -> Built {
    let compile = |value: &str| {
        let source = directory.join(format!("{name}.c"));
        std::fs::write(&source, PROGRAM.replace("PLACEHOLDER", value)).unwrap();
        let output = directory.join(name);
        let mut args = flags.to_vec();
        args.extend([
            "-O1",
            "-o",
            output.to_str().unwrap(),
            source.to_str().unwrap(),
        ]);
        run("cc", &args).expect("cc");
        output
    };
    let first = compile(PLACEHOLDER);
    let greeting = symbol(&first, "greeting");
    let path = compile(&format!("{greeting:#018x}UL"));
    assert_eq!(symbol(&path, "greeting"), greeting, "the layout moved");
    Built {
        greeting,
        pointer: symbol(&path, "greeting_pointer"),
        numbers: symbol(&path, "numbers"),
        path,
    }
}

/// The data words `xrefs_to` names as pointing at the string.
fn data_references(built: &Built) -> Vec<u64> {
    let provider = NativeProvider::open(&built.path).unwrap();
    let document = provider.list_documents().unwrap()[0].name.clone();
    let references = provider
        .xrefs_to(&document, Address::new(built.greeting), None, 100)
        .unwrap();
    references
        .references
        .iter()
        .filter(|reference| reference.kind == ReferenceKind::Data)
        .map(|reference| reference.from.value())
        .collect()
}

/// Whether `binary` has a section of packed relative relocations (`SHT_RELR`).
fn has_packed_relocations(binary: &Path) -> bool {
    let headers = run("readelf", &["-S", "-W", binary.to_str().unwrap()]).expect("readelf");
    headers.lines().any(|line| line.contains(" RELR "))
}

/// Builds a position-independent program with `flags` and checks that the relocated word
/// points at the string and the integer table does not.
fn only_relocated_words_point_at_the_string(flags: &[&str], packed: bool) {
    let directory = tempfile::tempdir().unwrap();
    let pie = built(directory.path(), "pie", flags);
    assert_eq!(has_packed_relocations(&pie.path), packed, "{flags:?}");
    let found = data_references(&pie);
    assert!(found.contains(&pie.pointer), "{found:x?}");
    assert!(!found.contains(&pie.numbers), "{found:x?}");
}

#[test]
fn in_a_position_independent_file_only_relocated_words_point_at_a_string() {
    only_relocated_words_point_at_the_string(&["-fPIE", "-pie"], false);
}

#[test]
fn with_packed_relative_relocations_only_relocated_words_point_at_a_string() {
    let packed = ["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs"];
    only_relocated_words_point_at_the_string(&packed, true);
}

#[test]
fn in_a_file_loaded_at_a_fixed_address_any_word_may_point_at_a_string() {
    let directory = tempfile::tempdir().unwrap();
    let fixed = built(directory.path(), "fixed", &["-fno-pie", "-no-pie"]);
    let found = data_references(&fixed);
    assert!(found.contains(&fixed.pointer), "{found:x?}");
    // Nothing tells this integer from a pointer: it is taken for one.
    assert!(found.contains(&fixed.numbers), "{found:x?}");
}

#[test]
fn a_table_of_integers_that_equal_a_string_address_adds_no_string_to_its_reader() {
    let directory = tempfile::tempdir().unwrap();
    let pie = built(directory.path(), "pie", &["-fPIE", "-pie"]);
    let provider = NativeProvider::open(&pie.path).unwrap();
    let document = provider.list_documents().unwrap()[0].name.clone();
    let bounds = FingerprintBounds {
        max_procedures: 10_000,
        max_bytes: 64 << 20,
        deadline: Instant::now() + Duration::from_secs(60),
    };
    let fingerprints = provider.fingerprints(&document, &bounds).unwrap();
    let pick = fingerprints
        .procedures
        .iter()
        .find(|procedure| procedure.name.as_deref() == Some("pick"))
        .expect("pick");
    // Before relocations were asked, the table read as a table of string pointers.
    assert_eq!(pick.strings, Vec::<u64>::new());
}
