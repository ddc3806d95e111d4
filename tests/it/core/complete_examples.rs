//! `complete()` examples: code-point order versus UTF-16 order, the bounds, and the
//! over-long prefix error message.

use rea::core::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT, complete};

#[test]
fn values_sort_by_code_point_not_utf16() {
    // U+FF61 (one UTF-16 unit 0xFF61) sorts before U+1F600 by code point, but after it in
    // UTF-16 order (surrogate 0xD83D < 0xFF61), which is JavaScript's default sort.
    let halfwidth_stop = "x\u{FF61}";
    let grinning = "x\u{1F600}";
    let done = complete("x", [grinning, halfwidth_stop]).expect("short prefix");
    assert_eq!(done.values, [halfwidth_stop, grinning]);
    let utf16 = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    assert!(
        utf16(grinning) < utf16(halfwidth_stop),
        "the pair differs in UTF-16 order"
    );
}

#[test]
fn values_are_verbatim_deduplicated_by_exact_string() {
    let done = complete(
        "sub_4",
        [
            "sub_401000",
            "main",
            "SUB_4010a0",
            "sub_401000",
            "ｓｕｂ＿４",
        ],
    )
    .expect("short prefix");
    assert_eq!(done.values, ["SUB_4010a0", "sub_401000", "ｓｕｂ＿４"]);
    assert_eq!(done.total, 3);
    assert!(!done.has_more);
}

#[test]
fn more_than_max_values_matches_report_total_and_has_more() {
    let candidates: Vec<String> = (0..250).rev().map(|n| format!("fn_{n:03}")).collect();
    let done = complete("FN_", &candidates).expect("short prefix");
    assert_eq!(done.total, 250);
    assert!(done.has_more);
    assert_eq!(done.values.len(), MAX_VALUES);
    assert_eq!(done.values.first().map(String::as_str), Some("fn_000"));
    assert_eq!(done.values.last().map(String::as_str), Some("fn_099"));
}

#[test]
fn exactly_max_values_matches_has_no_more() {
    let candidates: Vec<String> = (0..MAX_VALUES).map(|n| format!("v{n}")).collect();
    let done = complete("v", &candidates).expect("short prefix");
    assert_eq!(
        (done.values.len(), done.total, done.has_more),
        (MAX_VALUES, MAX_VALUES, false)
    );
}

#[test]
fn scan_limit_counts_duplicates_and_over_long_candidates() {
    let over_long = "a".repeat(MAX_VALUE_CHARS + 1);
    let mut candidates = vec![over_long.clone(); SCAN_LIMIT / 2];
    candidates.extend(vec!["a_dup".to_owned(); SCAN_LIMIT / 2 - 1]);
    candidates.push("a_last".to_owned());
    candidates.push("a_after_limit".to_owned());
    let done = complete("a", &candidates).expect("short prefix");
    assert_eq!(done.values, ["a_dup", "a_last"]);
    assert_eq!(done.total, 2);
}

#[test]
fn a_candidate_at_the_bound_is_kept_and_one_over_is_skipped_whole() {
    // 4,095 'e' then "é" as e + U+0301: truncating at 4,096 chars would split the accent.
    let at_bound = "e".repeat(MAX_VALUE_CHARS);
    let split_accent = format!("{}e\u{301}", "e".repeat(MAX_VALUE_CHARS - 1));
    let done = complete("e", [&at_bound, &split_accent]).expect("short prefix");
    assert_eq!(done.values, [at_bound]);
}

#[test]
fn the_empty_and_the_ignorable_prefix_complete_everything() {
    for prefix in ["", "\u{200B}", "\u{FEFF}\u{E0001}"] {
        let done = complete(prefix, ["b", "a", "", "a"]).expect("short prefix");
        assert_eq!(done.values, ["", "a", "b"], "{prefix:?}");
    }
}

#[test]
fn an_over_long_prefix_is_an_error_naming_its_length() {
    let prefix = "ß".repeat(MAX_VALUE_CHARS + 1);
    let error = complete(&prefix, ["anything"]).expect_err("over-long prefix");
    assert_eq!(error.chars, MAX_VALUE_CHARS + 1);
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("core_complete__value_too_long_message", error.to_string());
    });
    let at_bound = "ß".repeat(MAX_VALUE_CHARS);
    assert!(complete(&at_bound, ["x"]).is_ok());
}
