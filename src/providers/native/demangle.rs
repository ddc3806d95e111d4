//! Display names for mangled symbols: Rust (legacy and v0), Itanium C++, MSVC.

use msvc_demangler::DemangleFlags;

/// Longest Itanium or Rust symbol handed to a demangler. The demanglers bound their recursion,
/// but the work for longer (pathological) inputs is not worth it for a display name.
const MAX_MANGLED_BYTES: usize = 4_096;

/// Longest MSVC symbol handed to `msvc-demangler`, which does not bound its recursion: this
/// keeps its stack use small on adversarial input.
const MAX_MSVC_MANGLED_BYTES: usize = 512;

/// The demangled form of `raw`, or `None` when it is not a recognized mangled name. A
/// version or stub suffix (`_ZNSs4sizeEv@GLIBCXX_3.4`, `_Z1fv@plt`) is kept after the
/// demangled name, as `c++filt` does.
pub(crate) fn demangle(raw: &str) -> Option<String> {
    if let Some(at) = raw.find('@').filter(|&at| at > 0 && !raw.starts_with('?')) {
        let (name, suffix) = raw.split_at(at);
        return demangle(name).map(|name| format!("{name}{suffix}"));
    }
    let demangled = if raw.starts_with('?') {
        demangle_msvc(raw)
    } else {
        demangle_rust(raw).or_else(|| demangle_itanium(raw))
    }?;
    (!demangled.is_empty() && demangled != raw).then_some(demangled)
}

fn demangle_rust(raw: &str) -> Option<String> {
    if raw.len() > MAX_MANGLED_BYTES {
        return None;
    }
    // The alternate form leaves out the hash suffix of legacy symbols.
    rustc_demangle::try_demangle(raw)
        .ok()
        .map(|symbol| format!("{symbol:#}"))
}

fn demangle_itanium(raw: &str) -> Option<String> {
    if raw.len() > MAX_MANGLED_BYTES {
        return None;
    }
    // Mach-O adds an underscore in front of every C symbol name, mangled ones included.
    let mangled = if raw.starts_with("__Z") {
        &raw[1..]
    } else if raw.starts_with("_Z") {
        raw
    } else {
        return None;
    };
    if let Some(thunk) = demangle_thunk(mangled) {
        return Some(thunk);
    }
    let demangled = match template_structor(mangled) {
        Some(demangled) => demangled,
        None => cpp_demangle::Symbol::new(mangled.as_bytes())
            .ok()?
            .demangle()
            .ok()?,
    };
    Some(integer_literal_suffixes(&expand_standard_abbreviations(
        mangled, demangled,
    )))
}

/// Most candidate ends of the name tried by [`template_structor`].
const MAX_NAME_END_TRIES: usize = 16;

/// The display of a template constructor or destructor (`_ZNSsC1IPcEET_S1_RKSaIcE`), or
/// `None` for other names.
///
/// The ABI encodes no return type for them, but `cpp_demangle` 0.5.1 reads their first
/// parameter as one and does not print it (gimli-rs/cpp_demangle#129): `basic_string<char*>(
/// char*, char*, allocator const&)` loses a `char*`. The same encoding with an explicit `v`
/// (`void`) return type after the name demangles with every parameter (`v` is no
/// substitution candidate, so `T_` and `S1_` keep their meaning). The name ends where the
/// `_Z` + nested-name prefix parses as a whole symbol; the correction applies only when the
/// demangler then prints no return type, that is when it sees a constructor or destructor.
fn template_structor(mangled: &str) -> Option<String> {
    let bytes = mangled.as_bytes();
    if !mangled.starts_with("_ZN") {
        return None;
    }
    let marker = bytes
        .windows(3)
        .position(|w| matches!(w, [b'C', b'1'..=b'5', b'I'] | [b'D', b'0'..=b'2', b'I']))?;
    let end = (marker + 3..bytes.len())
        .filter(|&at| bytes[at - 1] == b'E' && bytes[at - 2] == b'E')
        .take(MAX_NAME_END_TRIES)
        .find(|&at| {
            matches!(cpp_demangle::BorrowedSymbol::with_tail(&bytes[..at]),
                Ok((_, tail)) if tail.is_empty())
        })?;
    let patched = format!("{}v{}", &mangled[..end], &mangled[end..]);
    let demangled = cpp_demangle::Symbol::new(patched.as_bytes())
        .ok()?
        .demangle()
        .ok()?;
    (!demangled.starts_with("void ")).then_some(demangled)
}

/// Integer template arguments as `c++filt` prints them: `1l`, `2u`, `3ul`, `4ll`, `5ull`,
/// `6` for `int`, where `cpp_demangle` prints `(long)1`...
fn integer_literal_suffixes(text: &str) -> String {
    const SUFFIXES: [(&str, &str); 6] = [
        ("(int)", ""),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(unsigned long)", "ul"),
        ("(long long)", "ll"),
        ("(unsigned long long)", "ull"),
    ];
    if !text.contains(")") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(at) = rest.find('(') {
        out.push_str(&rest[..at]);
        let here = &rest[at..];
        // Only a cast that starts an argument: after `<`, `, ` or `(`.
        let starts_argument = out.ends_with('<') || out.ends_with(", ") || out.ends_with('(');
        for (cast, suffix) in SUFFIXES {
            let Some(number) = here.strip_prefix(cast).filter(|_| starts_argument) else {
                continue;
            };
            let sign = usize::from(number.starts_with('-'));
            let digits = number[sign..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            let end = sign + digits;
            if digits > 0 && number[end..].starts_with([',', '>']) {
                out.push_str(&number[..end]);
                out.push_str(suffix);
                rest = &number[end..];
                continue 'scan;
            }
        }
        out.push('(');
        rest = &here[1..];
    }
    out.push_str(rest);
    out
}

/// Thunks as `c++filt` prints them (`cpp_demangle` prints its own AST form):
/// `_ZTh<offset>_<encoding>` is a `non-virtual thunk to`, `_ZTv<offset>_<offset>_<encoding>`
/// a `virtual thunk to`, `_ZTc<call offset><call offset><encoding>` a `covariant return thunk
/// to` the demangled encoding.
fn demangle_thunk(mangled: &str) -> Option<String> {
    let rest = mangled.strip_prefix("_ZT")?;
    let (label, encoding) = match rest.as_bytes().first()? {
        b'h' => ("non-virtual thunk to ", skip_call_offset(rest)?),
        b'v' => ("virtual thunk to ", skip_call_offset(rest)?),
        b'c' => {
            let first = skip_call_offset(&rest[1..])?;
            ("covariant return thunk to ", skip_call_offset(first)?)
        }
        _ => return None,
    };
    let target = demangle_itanium(&format!("_Z{encoding}"))?;
    Some(format!("{label}{target}"))
}

/// The text after one `h <number> _` or `v <number> _ <number> _` call offset.
fn skip_call_offset(text: &str) -> Option<&str> {
    let numbers = match text.as_bytes().first()? {
        b'h' => 1,
        b'v' => 2,
        _ => return None,
    };
    let mut rest = &text[1..];
    for _ in 0..numbers {
        let digits = rest.strip_prefix('n').unwrap_or(rest);
        let length = digits.bytes().take_while(u8::is_ascii_digit).count();
        rest = digits
            .get(length..)?
            .strip_prefix('_')
            .filter(|_| length > 0)?;
    }
    Some(rest)
}

/// `c++filt` (binutils 2.40) prints the standard substitutions `Ss`, `Si`, `So` and `Sd` in
/// full, constructors and destructors of them as `basic_string()`..., and `Dn` as
/// `decltype(nullptr)`, where `cpp_demangle` prints `std::string`, `string()` and
/// `std::nullptr_t`. Those are rewritten unless the mangled name also spells a name of that
/// text itself (`St6string`, `St9nullptr_t`).
fn expand_standard_abbreviations(mangled: &str, demangled: String) -> String {
    const EXPANSIONS: [(&str, &str, &str, &str); 5] = [
        (
            "std::string",
            "6string",
            "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
            "basic_string",
        ),
        (
            "std::istream",
            "7istream",
            "std::basic_istream<char, std::char_traits<char> >",
            "basic_istream",
        ),
        (
            "std::ostream",
            "7ostream",
            "std::basic_ostream<char, std::char_traits<char> >",
            "basic_ostream",
        ),
        (
            "std::iostream",
            "8iostream",
            "std::basic_iostream<char, std::char_traits<char> >",
            "basic_iostream",
        ),
        ("std::nullptr_t", "9nullptr_t", "decltype(nullptr)", ""),
    ];
    let identifier = |c: char| c.is_alphanumeric() || c == '_';
    let mut text = demangled;
    for (short, spelled, full, constructor) in EXPANSIONS {
        if mangled.contains(spelled) || !text.contains(short) {
            continue;
        }
        let unqualified = &short["std::".len()..];
        let mut expanded = String::with_capacity(text.len() + full.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(short) {
            let mut after = &rest[at + short.len()..];
            let before = rest[..at].chars().next_back();
            let whole = !after.chars().next().is_some_and(identifier)
                && !before.is_some_and(|c| identifier(c) || c == ':');
            expanded.push_str(&rest[..at]);
            if !whole {
                expanded.push_str(short);
                rest = after;
                continue;
            }
            expanded.push_str(full);
            // A constructor or destructor of the abbreviated class: `std::string::string(`.
            for tilde in ["::", "::~"] {
                let Some(name) = after.strip_prefix(tilde) else {
                    continue;
                };
                if !constructor.is_empty()
                    && name.starts_with(unqualified)
                    && !name[unqualified.len()..]
                        .chars()
                        .next()
                        .is_some_and(identifier)
                {
                    expanded.push_str(tilde);
                    expanded.push_str(constructor);
                    after = &name[unqualified.len()..];
                    break;
                }
            }
            // `> >`, as c++filt separates closing brackets.
            if full.ends_with('>') && after.starts_with('>') {
                expanded.push(' ');
            }
            rest = after;
        }
        expanded.push_str(rest);
        text = expanded;
    }
    text
}

fn demangle_msvc(raw: &str) -> Option<String> {
    if raw.len() > MAX_MSVC_MANGLED_BYTES {
        return None;
    }
    msvc_demangler::demangle(raw, DemangleFlags::llvm()).ok()
}

#[cfg(test)]
mod tests {
    use super::{MAX_MANGLED_BYTES, MAX_MSVC_MANGLED_BYTES, demangle};

    #[test]
    fn each_scheme_is_demangled() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE").as_deref(),
            Some("core::fmt::write")
        );
        assert_eq!(demangle("_ZN3foo3barEi").as_deref(), Some("foo::bar(int)"));
        assert_eq!(demangle("__ZN3foo3barEi").as_deref(), Some("foo::bar(int)"));
        assert_eq!(
            demangle("?foo@bar@@YAHH@Z").as_deref(),
            Some("int __cdecl bar::foo(int)")
        );
    }

    /// Deeply nested names at the length caps demangle (or fail) within a small stack.
    #[test]
    fn nested_names_at_the_caps_fit_a_small_stack() {
        let msvc = format!("?x@@YA{}H@Z", "P6A".repeat(167));
        let itanium = format!("_Z1f{}", "PFv".repeat(1_300));
        let template = format!("_Z1f{}v{}", "I1A".repeat(800), "E".repeat(800));
        let worker = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                assert!(msvc.len() <= MAX_MSVC_MANGLED_BYTES);
                assert!(itanium.len() <= MAX_MANGLED_BYTES && template.len() <= MAX_MANGLED_BYTES);
                for raw in [msvc, itanium, template] {
                    let _ = demangle(&raw);
                }
            })
            .unwrap();
        worker.join().unwrap();
    }

    /// The forms `c++filt` (binutils 2.40) prints differently from `cpp_demangle`.
    #[test]
    fn itanium_names_read_as_cxxfilt_prints_them() {
        let string = "std::basic_string<char, std::char_traits<char>, std::allocator<char> >";
        for (raw, expected) in [
            (
                "_ZThn8_N3foo3barEv",
                "non-virtual thunk to foo::bar()".to_owned(),
            ),
            (
                "_ZTv0_n24_N3foo3barEv",
                "virtual thunk to foo::bar()".to_owned(),
            ),
            (
                "_ZTchn8_h16_N3foo3bazEv",
                "covariant return thunk to foo::baz()".to_owned(),
            ),
            ("_ZNSs4sizeEv", format!("{string}::size()")),
            ("_ZNSsC1Ev", format!("{string}::basic_string()")),
            (
                "_ZNKSt4hashISsEclESs",
                format!("std::hash<{string} >::operator()({string}) const"),
            ),
            (
                "_Z1fSt5ratioILl1ELl1000EE",
                "f(std::ratio<1l, 1000l>)".to_owned(),
            ),
            ("_Z1fDn", "f(decltype(nullptr))".to_owned()),
            ("_ZNSt6string3fooEv", "std::string::foo()".to_owned()),
            (
                "_ZNSs4sizeEv@GLIBCXX_3.4",
                format!("{string}::size()@GLIBCXX_3.4"),
            ),
        ] {
            assert_eq!(demangle(raw), Some(expected), "{raw}");
        }
    }

    #[test]
    fn plain_and_broken_names_are_left_alone() {
        for raw in ["main", "_start", "_Z", "?", "_ZN3foo", "__Z"] {
            assert_eq!(demangle(raw), None, "{raw}");
        }
    }

    proptest::proptest! {
        /// A version or stub suffix never changes how the name before it is demangled, and
        /// arbitrary text never panics.
        #[test]
        fn suffixes_follow_the_demangled_name(
            raw in "_Z[0-9A-Za-z_]{0,24}",
            suffix in "@{1,2}[A-Z0-9_.]{0,12}",
        ) {
            let with_suffix = demangle(&format!("{raw}{suffix}"));
            match demangle(&raw) {
                Some(name) => proptest::prop_assert_eq!(with_suffix, Some(format!("{name}{suffix}"))),
                None => proptest::prop_assert_eq!(with_suffix, None),
            }
        }

        /// Thunk prefixes over any text never panic.
        #[test]
        fn any_thunk_text_is_handled(rest in "[0-9hvcn_A-Za-z]{0,32}") {
            let _ = demangle(&format!("_ZT{rest}"));
        }
    }
}
