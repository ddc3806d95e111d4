//! The cases docs/CONTRACT.md section 3 names, pinned one by one, each also checked against the
//! independent ICU4X-built reference relation.

use crate::support::core::reference_matches;
use rea::core::matches;
use rea::core::{general_key, key};

/// Asserts `matches(prefix, candidate) == expected` and that the reference agrees.
fn pin(prefix: &str, candidate: &str, expected: bool) {
    assert_eq!(
        matches(prefix, candidate),
        expected,
        "matches({prefix:?}, {candidate:?})"
    );
    assert_eq!(
        reference_matches(prefix, candidate),
        expected,
        "reference_matches({prefix:?}, {candidate:?})"
    );
}

#[test]
fn ligature_fi_is_matched_by_its_first_letter() {
    pin("f", "ﬁle", true);
    pin("fi", "ﬁle", true);
    pin("FIL", "ﬁle", true);
    pin("ﬁ", "file", true);
}

#[test]
fn a_base_letter_does_not_match_it_with_an_accent() {
    pin("e", "é", false);
    pin("e", "e\u{301}", false);
    pin("é", "e\u{301}", true);
    pin("cafe", "café", false);
    pin("caf", "café", true);
}

#[test]
fn hangul_jamo_and_syllables_prefix_longer_syllables() {
    // ㅎ is compatibility jamo U+314E; 하 and 한 are precomposed syllables.
    pin("ㅎ", "한", true);
    pin("하", "한", true);
    pin("한", "하", false);
    pin("\u{1112}", "한", true);
    pin("\u{1112}\u{1161}", "한국", true);
    pin("ﾎ", "ホ", true);
}

#[test]
fn full_width_digits_and_letters_match_ascii() {
    pin("0x10", "０ｘ１０ＡＢ", true);
    pin("０Ｘ", "0x10ab", true);
    pin("0x10ab", "０ｘ１０ＡＢ", true);
    pin("0x11", "０ｘ１０ＡＢ", false);
}

#[test]
fn dotted_capital_i_is_not_prefixed_by_plain_i() {
    // İ is I + U+0307 after NFKD and folding; U+0307 is not a starter.
    pin("i", "İstanbul", false);
    pin("i\u{307}", "İstanbul", true);
    pin("İ", "i\u{307}stanbul", true);
    assert_eq!(key("İ"), "i\u{307}");
}

#[test]
fn sharp_s_folds_to_ss_both_ways() {
    pin("ss", "ß", true);
    pin("ß", "ss", true);
    pin("s", "ß", true);
    pin("ẞ", "strasse", false);
    pin("STRASS", "Straße", true);
    assert_eq!(key("ẞ"), "ss");
}

#[test]
fn kelvin_sign_and_other_letterlike_symbols_fold() {
    pin("k", "\u{212A}elvin", true);
    pin("\u{212A}", "kelvin", true);
    pin("\u{2126}", "ω", true);
    pin("\u{212B}", "å", true);
    pin("a", "\u{212B}", false);
}

#[test]
fn final_sigma_and_greek_iota_subscript_fold() {
    pin("σ", "ς", true);
    pin("ΣΟΦ", "σοφ", true);
    pin("αι", "ᾳ", true);
    pin("α", "ᾳ", true);
    assert_eq!(key("ᾼ"), "αι");
}

#[test]
fn arabic_ligature_u_fdfa_expands_to_its_words() {
    let expansion = "صلى الله عليه وسلم";
    assert_eq!(key("\u{FDFA}"), key(expansion));
    pin("صلى", "\u{FDFA}", true);
    pin("\u{FDFA}", expansion, true);
}

#[test]
fn default_ignorables_vanish_from_keys() {
    pin("ab", "a\u{200B}b", true);
    pin("a\u{00AD}b", "abc", true);
    pin("\u{200D}\u{FE0F}", "anything", true);
    pin("\u{E0001}", "", true);
    assert_eq!(key("a\u{200D}b\u{FEFF}"), "ab");
}

#[test]
fn dotless_i_is_the_case_exception() {
    // U+0131 folds to itself, so I/i never reach it: docs/CONTRACT.md section 3 excludes it.
    pin("ı", "I", false);
    pin("i", "ı", false);
    pin("ı", "ıi", true);
}

#[test]
fn nfkd_first_makes_the_d146_witness_stable() {
    // "\u{345}\u{FF9E}": half-width voiced mark decomposes to U+3099 (class 8), which must
    // be reordered before the iota subscript (class 240) before folding.
    let witness = "\u{345}\u{FF9E}";
    assert_eq!(key(witness), "\u{3099}ι");
    assert_eq!(key(witness), key("\u{345}\u{3099}"));
}

#[test]
fn empty_and_ignorable_prefixes_match_everything() {
    pin("", "", true);
    pin("", "é", true);
    pin("\u{200B}", "x", true);
    pin("x", "", false);
}

#[test]
fn ascii_fast_path_is_the_general_path() {
    for sample in [
        "",
        "sub_401000",
        "0x100003F20",
        "-[NSView drawRect:]",
        "std::vector<int>",
    ] {
        assert_eq!(key(sample), general_key(sample), "{sample:?}");
    }
}
