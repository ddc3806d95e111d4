//! The prefix index and the ordered tables of docs/CONTRACT.md section 4 answer exactly what
//! `complete()` answers, for every prefix, on generators aimed at the hard cases.

use crate::support::core::{
    IGNORABLES, MARKS, equivalent_variant, hard_string, long_string, short_string,
};
use proptest::prelude::*;
use proptest::sample::select;
use rea::core::{
    MAX_VALUE_CHARS, MAX_VALUES, Prefix, PrefixIndex, SCAN_LIMIT, complete, complete_ordered,
    extends_ordered,
};
use rea::fuzzing::core::{check_index, check_index_bytes};

/// A string that shares the key prefix `base` but continues differently: a combining mark
/// right after it (so the starter rule refuses it), an ignorable, a case or width variant,
/// a digit run, or anything.
fn continuation(base: String) -> BoxedStrategy<String> {
    let with_mark = (select(MARKS), short_string()).prop_map({
        let base = base.clone();
        move |(mark, rest)| format!("{base}{mark}{rest}")
    });
    let with_ignorable = (select(IGNORABLES), short_string()).prop_map({
        let base = base.clone();
        move |(ignorable, rest)| format!("{base}{ignorable}{rest}")
    });
    let variant = short_string().prop_flat_map({
        let base = base.clone();
        move |rest| equivalent_variant(format!("{base}{rest}"))
    });
    let numbered = (0u32..3_000).prop_map({
        let base = base.clone();
        move |n| format!("{base}{n}")
    });
    prop_oneof![
        3 => with_mark,
        2 => with_ignorable,
        4 => variant,
        3 => numbered,
        3 => hard_string(),
        1 => long_string(),
        1 => Just(base),
    ]
    .boxed()
}

/// A base, candidates continuing it in hard ways (with duplicates), and prefixes to ask: the
/// base, its variants, the base cut short, the empty prefix and unrelated strings.
fn index_case(sizes: std::ops::Range<usize>) -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
    short_string().prop_flat_map(move |base| {
        let candidates = prop::collection::vec(continuation(base.clone()), sizes.clone())
            .prop_flat_map(|candidates| {
                let len = candidates.len();
                (
                    Just(candidates),
                    prop::collection::vec(0..len.max(1), 0..len / 4 + 1),
                )
            })
            .prop_map(|(mut candidates, repeats)| {
                // Duplicates by exact string, anywhere.
                for at in repeats {
                    if let Some(copy) = candidates.get(at).cloned() {
                        candidates.push(copy);
                    }
                }
                candidates
            });
        let cut: String = base.chars().take(1).collect();
        let prefixes = prop::collection::vec(
            prop_oneof![
                2 => Just(base.clone()),
                2 => equivalent_variant(base.clone()),
                1 => Just(cut.clone()),
                1 => Just(String::new()),
                2 => short_string(),
                1 => (select(MARKS)).prop_map({
                    let base = base.clone();
                    move |mark| format!("{base}{mark}")
                }),
            ],
            1..6,
        );
        (candidates, prefixes)
    })
}

/// Index and ordered table agree with `complete()` for each prefix.
fn agree(prefixes: &[String], candidates: &[String]) -> Result<(), TestCaseError> {
    for prefix in prefixes {
        prop_assert_eq!(check_index(prefix, candidates), Ok(()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Small tables: every prefix, every way of picking values.
    #[test]
    fn the_index_equals_complete_on_hard_tables((candidates, prefixes) in index_case(0..200)) {
        agree(&prefixes, &candidates)?;
    }

    /// The index of arbitrary bytes, decoded as the fuzz target decodes them.
    #[test]
    fn fuzz_index_equality_holds(data in prop::collection::vec(any::<u8>(), 0..300)) {
        prop_assert_eq!(check_index_bytes(&data), Ok(()));
    }

    /// An ordered table (lowercase ASCII, increasing) completes by binary search exactly as
    /// `complete()` does, ledger-shaped IDs included.
    #[test]
    fn ordered_tables_equal_complete(
        mut ids in prop::collection::vec("[a-c0-9_-]{0,6}", 0..400),
        prefix in prop_oneof![Just(String::new()), "[a-cA-C0-9_-]{0,3}", short_string()],
    ) {
        ids.sort();
        ids.dedup();
        prop_assert!(ids.windows(2).all(|pair| extends_ordered(Some(&pair[0]), &pair[1])));
        let checked = Prefix::new(&prefix).expect("short prefix");
        let done = complete_ordered(&checked, ids.len(), |at| &ids[at]);
        prop_assert_eq!(done, complete(&prefix, &ids).expect("short prefix"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Tables past `MAX_VALUES` matches and near `SCAN_LIMIT`, where the values are found by
    /// walking the ranks.
    #[test]
    fn the_index_equals_complete_on_large_tables((candidates, prefixes) in index_case(2_500..4_000)) {
        agree(&prefixes, &candidates)?;
    }

    /// Only the first `SCAN_LIMIT` candidates count, duplicates and over-long ones included;
    /// matches after the bound are never offered.
    #[test]
    fn the_index_reads_only_the_first_scan_limit(
        filler in prop_oneof![
            Just("dup".to_owned()),
            Just("x".repeat(MAX_VALUE_CHARS + 1)),
            short_string(),
        ],
        late in short_string(),
        extra in 1usize..50,
    ) {
        let mut candidates = vec![filler; SCAN_LIMIT - extra];
        candidates.extend((0..extra).map(|n| format!("zz_{n:03}")));
        candidates.extend((0..extra + 200).map(|n| format!("zz_{late}{n}")));
        prop_assert!(candidates.len() > SCAN_LIMIT);
        agree(&["zz_".to_owned(), String::new(), "ZZ".to_owned(), late], &candidates)?;
        let done = PrefixIndex::new(&candidates).complete(&Prefix::new("zz_").unwrap());
        prop_assert_eq!(done.total, extra);
    }
}

#[test]
fn a_mark_after_the_prefix_key_refuses_the_candidate_in_the_index() {
    let candidates = [
        "e\u{301}clair",
        "eclair",
        "\u{E9}t\u{E9}",
        "E",
        "e\u{200B}x",
    ];
    let index = PrefixIndex::new(candidates);
    let done = index.complete(&Prefix::new("e").unwrap());
    assert_eq!(done, complete("e", candidates).unwrap());
    assert_eq!(done.values, ["E", "eclair", "e\u{200B}x"]);
}

#[test]
fn the_index_of_ten_thousand_names_answers_the_empty_prefix_from_the_smallest() {
    let names: Vec<String> = (0..10_000).map(|n| format!("Name_{n:05}")).collect();
    let index = PrefixIndex::new(&names);
    assert_eq!(index.len(), 10_000);
    let done = index.complete(&Prefix::new("").unwrap());
    assert_eq!(done.values, names[..MAX_VALUES]);
    assert_eq!(done.total, 10_000);
    assert!(done.has_more);
    // Every name's key differs from the name here: text, keys, and 48 bytes per value.
    assert!(index.heap_bytes() < 10_000 * (2 * 10 + 48) + 4);
}

/// The index of the 10,000-document catalog that `benches/e2e_stdio.rs` completes (90% ASCII
/// identifiers, 10% other scripts) stays under 1 MB of heap; `--nocapture` shows the figure.
#[test]
fn the_index_of_the_bench_catalog_stays_under_a_megabyte() {
    let others = [
        "Αρχείο",
        "σημείωση",
        "文档",
        "検索",
        "Café",
        "Ångström",
        "ＦＵＬＬ",
        "naïve",
        "Ελλάδα",
        "数据",
    ];
    let words = [
        "notes", "search", "index", "render", "sync", "cache", "parser", "Store", "view", "Model",
        "query", "export",
    ];
    let names: Vec<String> = (0..10_000)
        .map(|i| {
            if i % 10 == 9 {
                format!("{}_{i}", others[i % others.len()])
            } else {
                format!(
                    "{}{}_{i}",
                    words[i % words.len()],
                    words[(i / 12) % words.len()]
                )
            }
        })
        .collect();
    let index = PrefixIndex::new(&names);
    let text: usize = names.iter().map(String::len).sum();
    println!(
        "index of 10,000 names ({text} bytes of text): {} bytes",
        index.heap_bytes()
    );
    assert!(index.heap_bytes() < 1_000_000);
    for prefix in [
        "", "n", "se", "ind", "Re", "SYNC", "cache9", "Αρ", "文", "cafe", "ｆｕ", "q",
    ] {
        let done = index.complete(&Prefix::new(prefix).unwrap());
        assert_eq!(done, complete(prefix, &names).unwrap(), "{prefix:?}");
    }
}
