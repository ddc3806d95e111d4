//! Property tests for `complete()`: docs/CONTRACT.md section 4.

use crate::support;
use crate::support::core::{
    equivalent_variant, hard_string, long_string, reference_matches, short_string,
};
use proptest::prelude::*;
use rea::core::{Completion, MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT, complete, matches};
use rea::fuzzing::core::{check_complete, check_complete_bytes, literal_completion};

/// A prefix and candidates of which many extend an equivalent of the prefix, with
/// duplicates, over-long values, and sometimes more than `MAX_VALUES` matches.
fn completion_case() -> impl Strategy<Value = (String, Vec<String>)> {
    let prefix = prop_oneof![4 => short_string(), 1 => Just(String::new())];
    prefix.prop_flat_map(|prefix| {
        let related = short_string().prop_flat_map({
            let prefix = prefix.clone();
            move |rest| equivalent_variant(format!("{prefix}{rest}"))
        });
        let numbered = (0u32..400).prop_map({
            let prefix = prefix.clone();
            move |n| format!("{prefix}{n}")
        });
        let candidate = prop_oneof![
            4 => related,
            3 => hard_string(),
            3 => numbered,
            1 => long_string(),
        ];
        (Just(prefix), prop::collection::vec(candidate, 0..260))
    })
}

/// docs/CONTRACT.md section 4 read literally, with the ICU4X-built reference relation.
fn literal(prefix: &str, candidates: &[String]) -> Completion {
    literal_completion(candidates, |candidate| reference_matches(prefix, candidate))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Output strictly increasing, every value matches and came from the input, at most
    /// `MAX_VALUES` values, `total`/`has_more` consistent.
    #[test]
    fn output_is_sorted_matching_from_input_and_consistent((prefix, candidates) in completion_case()) {
        let done = complete(&prefix, &candidates).expect("short prefix");
        prop_assert!(done.values.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(done.values.len() <= MAX_VALUES);
        for value in &done.values {
            prop_assert!(candidates.contains(value));
            prop_assert!(matches(&prefix, value));
            prop_assert!(value.chars().count() <= MAX_VALUE_CHARS);
        }
        prop_assert_eq!(done.values.len(), done.total.min(MAX_VALUES));
        prop_assert_eq!(done.has_more, done.total > MAX_VALUES);
    }

    /// `complete` equals filter, sort, dedup, truncate (against the independent relation).
    #[test]
    fn equals_filter_sort_dedup_truncate((prefix, candidates) in completion_case()) {
        prop_assert_eq!(complete(&prefix, &candidates), Ok(literal(&prefix, &candidates)));
    }

    /// Permuting or duplicating the input within the scan bound changes nothing.
    #[test]
    fn permutation_and_duplication_change_nothing(
        (prefix, candidates, shuffled) in completion_case().prop_flat_map(|(p, c)| {
            (Just(p), Just(c.clone()), Just(c).prop_shuffle())
        }),
        copies in 1usize..4,
    ) {
        let done = complete(&prefix, &candidates);
        prop_assert_eq!(&complete(&prefix, &shuffled), &done);
        let duplicated: Vec<&String> = shuffled.iter().flat_map(|c| std::iter::repeat_n(c, copies)).collect();
        prop_assert_eq!(&complete(&prefix, &duplicated), &done);
    }

    /// Candidates past the first `SCAN_LIMIT` are never examined; duplicates and over-long
    /// candidates count toward the limit.
    #[test]
    fn only_the_first_scan_limit_candidates_count(
        filler in prop_oneof![Just("dup".to_owned()), Just("x".repeat(MAX_VALUE_CHARS + 1)), short_string()],
        late in short_string(),
    ) {
        let mut candidates = vec![filler; SCAN_LIMIT - 1];
        candidates.push("zz_last_scanned".to_owned());
        candidates.push(format!("zz_unscanned{late}"));
        let done = complete("zz_", &candidates).expect("short prefix");
        prop_assert_eq!(done.values, vec!["zz_last_scanned".to_owned()]);
        prop_assert_eq!(done.total, 1);
    }

    /// A prefix over the bound is the typed error with its length; at the bound it is fine.
    /// Over-long candidates are skipped whole, never truncated.
    #[test]
    fn bounds_on_prefix_and_candidates(seed in hard_string()) {
        let at = support::core::stretched(&seed, MAX_VALUE_CHARS);
        let over = support::core::stretched(&seed, MAX_VALUE_CHARS + 1);
        prop_assert!(complete(&at, [&at]).is_ok());
        prop_assert_eq!(complete(&over, [&at]).map_err(|e| e.chars), Err(MAX_VALUE_CHARS + 1));
        let done = complete("", [&at, &over]).expect("empty prefix");
        prop_assert_eq!(done.values, vec![at]);
    }

    /// `complete` is total and keeps every invariant on arbitrary bytes, as the fuzz target.
    #[test]
    fn fuzz_complete_invariants_hold(data in prop::collection::vec(any::<u8>(), 0..200)) {
        prop_assert_eq!(check_complete_bytes(&data), Ok(()));
    }

    /// The same invariant check on generated hard cases.
    #[test]
    fn invariant_check_holds_on_hard_cases((prefix, candidates) in completion_case()) {
        prop_assert_eq!(check_complete(&prefix, &candidates), Ok(()));
    }
}
