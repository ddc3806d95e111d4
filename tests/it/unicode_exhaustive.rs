//! docs/CONTRACT.md section 3, property 7 (and the key's definition), over every Unicode scalar
//! value: the backends the key is built from agree with an independent oracle, ICU4X 2.4.
//!
//! Versions: `unicode-normalization` 0.1.26 and ICU4X 2.4 data are both Unicode 18.0.0, and
//! `unicase` 2.10.0 folds every scalar value exactly as ICU4X does, so no comparison needs
//! restricting to characters assigned in two versions: each runs over all 1,112,064 scalar
//! values, assigned or not. Rust's std case mapping (used by the property tests) is Unicode
//! 17.0.0; the case-variant check below uses both std and ICU4X. `versions_are_recorded`
//! fails when a dependency update changes a version, so the docs get updated with it.

use icu_casemap::CaseMapper;
use icu_normalizer::properties::CanonicalCombiningClassMapBorrowed;
use icu_normalizer::{ComposingNormalizerBorrowed, DecomposingNormalizerBorrowed};
use icu_properties::props::{
    ChangesWhenNfkcCasefolded, DefaultIgnorableCodePoint, GeneralCategory,
};
use icu_properties::{CodePointMapData, CodePointSetData};
use rea::core::{
    UNICODE_VERSION, case_fold, general_key, is_default_ignorable, key, key_extends, matches,
    stable_first_key_char,
};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// Number of Unicode scalar values: every code point but the 2,048 surrogates.
const SCALAR_VALUES: usize = 0x11_0000 - 0x800;

/// Runs `check` on every scalar value (as a one-character string) and fails listing the
/// first few characters for which it returned false.
fn for_every_scalar(what: &str, mut check: impl FnMut(char, &str) -> bool) {
    let mut buffer = [0u8; 4];
    let mut visited = 0;
    let mut failures = Vec::new();
    for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
        visited += 1;
        if !check(c, c.encode_utf8(&mut buffer)) {
            failures.push(format!("U+{:04X}", u32::from(c)));
        }
    }
    assert_eq!(visited, SCALAR_VALUES);
    assert!(
        failures.is_empty(),
        "{what} fails for {} scalar values, first {:?}",
        failures.len(),
        &failures[..failures.len().min(20)]
    );
}

#[test]
fn versions_are_recorded() {
    assert_eq!(
        unicode_normalization::UNICODE_VERSION,
        UNICODE_VERSION,
        "unicode-normalization changed Unicode version: update the rea::core docs and UNICODE_VERSION"
    );
    // Unicode 18.0.0 assigns characters that 17.0.0 did not; ICU4X must know the newest.
    let assigned = (0..=0x10_FFFF)
        .filter_map(char::from_u32)
        .filter(|&c| {
            CodePointMapData::<GeneralCategory>::new().get(c) != GeneralCategory::Unassigned
        })
        .count();
    assert!(
        assigned > 290_000,
        "ICU4X data assigns only {assigned} scalar values"
    );
}

#[test]
fn case_folding_is_icu_full_folding() {
    let icu = CaseMapper::new();
    for_every_scalar("unicase full folding == ICU4X fold_string", |_, s| {
        case_fold(s) == icu.fold_string(s)
    });
}

#[test]
fn nfkd_is_icu_nfkd() {
    let icu = DecomposingNormalizerBorrowed::new_nfkd();
    for_every_scalar("unicode-normalization NFKD == ICU4X NFKD", |_, s| {
        s.nfkd().eq(icu.normalize(s).chars())
    });
}

#[test]
fn combining_classes_are_icu_classes() {
    let icu = CanonicalCombiningClassMapBorrowed::new();
    for_every_scalar("canonical combining class == ICU4X", |c, _| {
        canonical_combining_class(c) == icu.get_u8(c)
    });
}

#[test]
fn default_ignorable_table_is_icu_property() {
    let icu = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    for_every_scalar("Default_Ignorable_Code_Point == ICU4X", |c, _| {
        is_default_ignorable(c) == icu.contains(c)
    });
}

/// The key rebuilt from ICU4X parts only: NFKD, full folding, DI removal, NFKD.
#[test]
fn key_is_the_icu_built_key() {
    let fold = CaseMapper::new();
    let nfkd = DecomposingNormalizerBorrowed::new_nfkd();
    let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    for_every_scalar(
        "key == NFKD(strip_DI(fold(NFKD x))) built from ICU4X",
        |_, s| {
            let folded = fold.fold_string(&nfkd.normalize(s)).into_owned();
            let stripped: String = folded.chars().filter(|&c| !ignorable.contains(c)).collect();
            key(s) == nfkd.normalize(&stripped)
        },
    );
}

/// `key(c) == NFKD(NFKC_Casefold(c))`, through the derived property Unicode publishes for
/// NFKC_Casefold: since `NFKC_Casefold(c) == NFKC(key(c))` exactly when the equation holds,
/// Changes_When_NFKC_Casefolded(c) must equal `NFKC(key(c)) != c`.
#[test]
fn key_agrees_with_changes_when_nfkc_casefolded() {
    let changes = CodePointSetData::new::<ChangesWhenNfkcCasefolded>();
    let nfkc = ComposingNormalizerBorrowed::new_nfkc();
    for_every_scalar(
        "Changes_When_NFKC_Casefolded(c) == (NFKC(key(c)) != c)",
        |c, s| changes.contains(c) == (nfkc.normalize(&key(s)) != s),
    );
}

#[test]
fn key_of_every_scalar_is_a_fixed_point_and_reflexive() {
    for_every_scalar(
        "key(key(c)) == key(c), general path == key, c matches c",
        |_, s| {
            let k = key(s);
            key(&k) == k && general_key(s) == k && matches(s, s) && key_extends(&k, &k)
        },
    );
}

/// Property 3 per character, with std (Unicode 17) and ICU4X (Unicode 18) case mappings.
#[test]
fn case_variants_of_every_scalar_share_its_key() {
    let icu = CaseMapper::new();
    let nfkd = DecomposingNormalizerBorrowed::new_nfkd();
    for_every_scalar(
        "key(upper(NFKD c)) == key(lower(NFKD c)) == key(c)",
        |_, s| {
            let k = key(s);
            let d = nfkd.normalize(s);
            if d == "\u{131}" {
                // DOTLESS I (and U+1D6A4, which decomposes to it): the one exception
                // docs/CONTRACT.md section 3 names. It folds to itself, but its uppercase is "I".
                return k == "\u{131}" && key(&d.to_uppercase()) == "i";
            }
            let und = icu_locale_core::LanguageIdentifier::UNKNOWN;
            key(&d.to_uppercase()) == k
                && key(&d.to_lowercase()) == k
                && key(&icu.uppercase_to_string(&d, &und)) == k
                && key(&icu.lowercase_to_string(&d, &und)) == k
        },
    );
}

/// Property 7's fast path, exhaustively over short ASCII strings.
#[test]
fn ascii_fast_path_is_the_general_path_for_every_ascii_pair() {
    for a in 0u8..128 {
        for b in 0u8..128 {
            let pair = String::from_utf8(vec![a, b]).expect("ASCII is UTF-8");
            assert_eq!(key(&pair), general_key(&pair), "{pair:?}");
            assert_eq!(key(&pair), pair.to_ascii_lowercase(), "{pair:?}");
        }
    }
}

/// The matcher's shortcut: when `stable_first_key_char(c)` is `Some(e)`, every string that
/// begins with `c` has a key beginning with the starter `e`, whatever follows (marks of
/// several classes, the iota subscript that folds to a starter, an ignorable, a letter).
#[test]
fn stable_first_key_char_is_stable_for_every_scalar() {
    const FOLLOWERS: [&str; 6] = [
        "",
        "\u{301}",
        "\u{345}",
        "\u{3099}\u{334}",
        "\u{200B}\u{301}",
        "a",
    ];
    for_every_scalar(
        "key(c + anything) starts with stable_first_key_char(c)",
        |c, s| {
            let Some(lead) = stable_first_key_char(c) else {
                return true;
            };
            canonical_combining_class(lead) == 0
                && FOLLOWERS
                    .iter()
                    .all(|follower| key(&format!("{s}{follower}")).starts_with(lead))
        },
    );
}
