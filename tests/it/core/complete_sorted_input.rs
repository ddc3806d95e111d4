//! `complete()` on strictly increasing input (the Evidence ledger, sorted address lists), which
//! takes a distinctness fast path, equals the literal filter -> sort -> dedup -> truncate.

use crate::support::core::{hard_string, short_string};
use proptest::prelude::*;
use rea::fuzzing::core::check_complete;

fn sorted_case() -> impl Strategy<Value = (String, Vec<String>)> {
    let prefix = prop_oneof![2 => Just(String::new()), 3 => short_string()];
    let candidates = prop::collection::vec(prop_oneof![hard_string(), "[a-c]{0,3}"], 90..400);
    (prefix, candidates, any::<bool>()).prop_map(|(prefix, mut candidates, break_order)| {
        candidates.sort();
        candidates.dedup();
        if break_order && candidates.len() > 2 {
            // Almost sorted: one duplicate at the end defeats the fast path.
            let first = candidates[0].clone();
            candidates.push(first);
        }
        (prefix, candidates)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sorted_and_almost_sorted_inputs_complete_literally((prefix, candidates) in sorted_case()) {
        prop_assert_eq!(check_complete(&prefix, &candidates), Ok(()));
    }
}

#[test]
fn ten_thousand_sorted_ids_all_match_the_empty_prefix() {
    let ids: Vec<String> = (1..=10_000).map(|n| format!("ev-{n:012}")).collect();
    let done = rea::core::complete("", &ids).unwrap();
    assert_eq!(done.total, 10_000);
    assert!(done.has_more);
    assert_eq!(done.values, ids[..100]);
}
