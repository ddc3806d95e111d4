//! Display names for mangled symbols: Rust (legacy and v0), Itanium C++, MSVC.

use msvc_demangler::DemangleFlags;

/// Longest Itanium or Rust symbol handed to a demangler. The demanglers bound their recursion,
/// but the work for longer (pathological) inputs is not worth it for a display name.
const MAX_MANGLED_BYTES: usize = 4_096;

/// Longest MSVC symbol handed to `msvc-demangler`, which does not bound its recursion: this
/// keeps its stack use small on adversarial input.
const MAX_MSVC_MANGLED_BYTES: usize = 512;

/// The demangled form of `raw`, or `None` when it is not a recognized mangled name.
pub(crate) fn demangle(raw: &str) -> Option<String> {
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
    let symbol = cpp_demangle::Symbol::new(mangled.as_bytes()).ok()?;
    symbol.demangle().ok()
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

    #[test]
    fn plain_and_broken_names_are_left_alone() {
        for raw in ["main", "_start", "_Z", "?", "_ZN3foo", "__Z"] {
            assert_eq!(demangle(raw), None, "{raw}");
        }
    }
}
