//! Property tests for the matching key and prefix relation: docs/CONTRACT.md section 3,
//! properties 1-7.

use crate::support::core::{
    equivalent_variant, hard_string, icu_key, ignorable_string, reference_matches, short_string,
};
use proptest::prelude::*;
use rea::core::{Prefix, key, matches};
use rea::core::{case_fold, general_key, is_default_ignorable, key_extends};
use rea::fuzzing::core::{check_key, check_pair};
use unicode_normalization::{UnicodeNormalization, is_nfkd};

/// NFKD of `x` contains DOTLESS I, the one exception to the case properties.
fn has_dotless_i(x: &str) -> bool {
    x.nfkd().any(|c| c == '\u{131}')
}

fn owned_key(x: &str) -> String {
    key(x).into_owned()
}

fn normal_forms(x: &str) -> [String; 4] {
    [
        x.nfc().collect(),
        x.nfd().collect(),
        x.nfkc().collect(),
        x.nfkd().collect(),
    ]
}

/// A (prefix, candidate) pair where the candidate often extends an equivalent of the prefix.
fn related_pair() -> impl Strategy<Value = (String, String)> {
    (short_string(), short_string(), any::<bool>()).prop_flat_map(|(prefix, rest, related)| {
        let candidate = if related {
            format!("{prefix}{rest}")
        } else {
            rest
        };
        (Just(prefix), equivalent_variant(candidate))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Property 1: idempotent; the output is NFKD, fold-stable and free of default ignorables.
    #[test]
    fn p1_key_is_idempotent_nfkd_fold_stable_and_ignorable_free(x in hard_string()) {
        let k = key(&x);
        prop_assert_eq!(key(&k), k.clone());
        prop_assert!(is_nfkd(&k));
        prop_assert_eq!(case_fold(&k), k.clone().into_owned());
        prop_assert!(!k.chars().any(is_default_ignorable));
    }

    /// Property 2: the key, and so `matches` on either side, ignores normalization form.
    #[test]
    fn p2_key_and_matches_are_invariant_under_normal_forms((p, c) in related_pair()) {
        let expected = matches(&p, &c);
        for form in normal_forms(&p) {
            prop_assert_eq!(key(&form), key(&p));
            prop_assert_eq!(matches(&form, &c), expected);
        }
        for form in normal_forms(&c) {
            prop_assert_eq!(key(&form), key(&c));
            prop_assert_eq!(matches(&p, &form), expected);
        }
    }

    /// Property 3: upper and lower case of the NFKD share the key (DOTLESS I excepted), so
    /// `matches` is case-insensitive on either side.
    #[test]
    fn p3_key_and_matches_are_case_insensitive((p, c) in related_pair()) {
        prop_assume!(!has_dotless_i(&p) && !has_dotless_i(&c));
        let expected = matches(&p, &c);
        for x in [&p, &c] {
            let d: String = x.nfkd().collect();
            prop_assert_eq!(owned_key(&d.to_uppercase()), owned_key(x));
            prop_assert_eq!(owned_key(&d.to_lowercase()), owned_key(x));
        }
        let upper = |x: &str| x.nfkd().collect::<String>().to_uppercase();
        let lower = |x: &str| x.nfkd().collect::<String>().to_lowercase();
        prop_assert_eq!(matches(&upper(&p), &c), expected);
        prop_assert_eq!(matches(&lower(&p), &c), expected);
        prop_assert_eq!(matches(&p, &upper(&c)), expected);
        prop_assert_eq!(matches(&p, &lower(&c)), expected);
    }

    /// Property 4: reflexive; an empty or all-ignorable prefix matches everything.
    #[test]
    fn p4_reflexive_and_ignorable_prefix_matches_all(
        x in hard_string(),
        ignorable in ignorable_string(),
    ) {
        prop_assert!(matches(&x, &x));
        prop_assert!(key(&ignorable).is_empty());
        prop_assert!(matches(&ignorable, &x));
        prop_assert!(matches("", &x));
    }

    /// Property 5: transitive, and mutual matching is key equality.
    #[test]
    fn p5_transitive_and_mutual_match_is_key_equality(
        a in short_string(),
        s1 in short_string(),
        s2 in short_string(),
        pick in 0usize..3,
    ) {
        let b = format!("{a}{s1}");
        let c = format!("{b}{s2}");
        let (x, y, z) = match pick {
            0 => (a.as_str(), b.as_str(), c.as_str()),
            1 => (c.as_str(), b.as_str(), a.as_str()),
            _ => (b.as_str(), a.as_str(), c.as_str()),
        };
        if matches(x, y) && matches(y, z) {
            prop_assert!(matches(x, z));
        }
        for (l, r) in [(x, y), (y, z), (x, z)] {
            prop_assert_eq!(matches(l, r) && matches(r, l), key(l) == key(r));
        }
    }

    /// Property 5 on pairs built equal: every equivalent rewriting matches both ways.
    #[test]
    fn p5_equivalent_rewritings_match_both_ways(
        (x, y) in hard_string().prop_flat_map(|x| (Just(x.clone()), equivalent_variant(x)))
    ) {
        prop_assert_eq!(key(&x), key(&y));
        prop_assert!(matches(&x, &y) && matches(&y, &x));
    }

    /// Property 6: sound and complete against the definition, computed independently from
    /// ICU4X data by searching a split point char by char.
    #[test]
    fn p6_matches_is_sound_and_complete((p, c) in related_pair()) {
        prop_assert_eq!(matches(&p, &c), reference_matches(&p, &c));
        if matches(&p, &c) && !key(&p).is_empty() {
            // Soundness, constructively: the witness suffix is the rest of the key.
            let candidate_key = key(&c);
            let suffix = &candidate_key[key(&p).len()..];
            prop_assert_eq!(owned_key(&format!("{p}{suffix}")), candidate_key.clone().into_owned());
        }
    }

    /// Property 7: the ASCII fast path equals the general path, and the key equals the one
    /// built from ICU4X data on hard strings.
    #[test]
    fn p7_fast_path_is_general_path_and_backend_is_oracle(
        ascii in "[ -~]{0,40}",
        x in hard_string(),
        (p, c) in related_pair(),
    ) {
        prop_assert_eq!(key(&ascii), general_key(&ascii));
        prop_assert_eq!(key(&ascii), ascii.to_ascii_lowercase());
        prop_assert_eq!(key(&x).into_owned(), icu_key(&x));
        // The matcher's leading-ASCII shortcut against the key-level definition.
        let prefix_key = key(&p);
        let by_key = prefix_key.is_empty() || key_extends(&prefix_key, &key(&c));
        prop_assert_eq!(matches(&p, &c), by_key);
        prop_assert_eq!(Prefix::new(&p).map(|prefix| prefix.matches(&c)), Ok(by_key));
    }

    /// The invariant checks the fuzz targets run hold on generated hard cases too.
    #[test]
    fn fuzz_key_invariants_hold_on_hard_strings(x in hard_string(), (p, c) in related_pair()) {
        prop_assert_eq!(check_key(&x), Ok(()));
        prop_assert_eq!(check_pair(&p, &c), Ok(()));
    }
}

/// Candidates that start with ASCII and continue with non-ASCII exercise the matcher's
/// shortcut boundary; the definition decides.
#[test]
fn ascii_led_candidates_agree_with_the_definition() {
    let prefixes = [
        "",
        "a",
        "ab",
        "A",
        "abc",
        "é",
        "aé",
        "ab\u{301}",
        "ﬁ",
        "fi",
        "ss",
        "ß",
        "\0",
        "a\0b",
        "abcdefgh",
        "ABCDEFGHIJ",
        "abcdefghé",
        "sub_40100",
        // Runs past eight bytes take the sixteen-byte screen; fifteen bytes is the longest
        // it decides alone.
        "ev-000000000",
        "EV-000000000042",
        "abcdefghijklmno",
        "abcdefghijklmnop",
        "abcdefghijklmnopq",
        "abcdefghijklmné",
        "abcdefgh\0",
    ];
    let candidates = [
        "a",
        "ab",
        "abc",
        "ab\u{301}",
        "a\u{301}b",
        "ab\u{200B}\u{301}",
        "abé",
        "abﬁ",
        "aB\u{345}",
        "ab\u{FF9E}",
        "ﬁle",
        "file",
        "fi\u{0307}",
        "ß",
        "ss",
        "sß",
        "Abc\u{E0001}",
        "ab\u{3099}",
        "",
        "\0",
        "a\0",
        "a\0b",
        "abcdefgh",
        "abcdefghij",
        "ABCDEFGHIJK",
        "abcdefghé",
        "abcdefgh\u{301}",
        "abcdéfgh",
        "SUB_401000",
        "sub_4010",
        "ｓｕｂ＿４０１００",
        "ev-000000000042",
        "Ev-000000000042\u{301}",
        "ev-00000000004",
        "ev-0000000000",
        "abcdefghijklmno",
        "abcdefghijklmno\u{301}",
        "abcdefghijklmnoé",
        "abcdefghijklmn\u{301}o",
        "ABCDEFGHIJKLMNOP",
        "abcdefghijklmnopQ",
        "abcdefghijklmnopé",
        "abcdefghijklmnop\u{301}",
        "abcdefghijklmné",
        "abcdefgh\0",
        "abcdefgh",
    ];
    for p in prefixes {
        for c in candidates {
            let prefix_key = key(p);
            let by_key = prefix_key.is_empty() || key_extends(&prefix_key, &key(c));
            assert_eq!(matches(p, c), by_key, "prefix {p:?} candidate {c:?}");
            assert_eq!(
                matches(p, c),
                reference_matches(p, c),
                "prefix {p:?} candidate {c:?}"
            );
        }
        // `complete()` screens candidates in bulk, by another path than `matches`.
        let expected: Vec<&str> = {
            let mut matching: Vec<&str> = candidates
                .iter()
                .copied()
                .filter(|c| reference_matches(p, c))
                .collect();
            matching.sort_unstable();
            matching.dedup();
            matching
        };
        let done = rea::core::complete(p, candidates).expect("short prefix");
        assert_eq!(done.values, expected, "prefix {p:?}");
    }
}
