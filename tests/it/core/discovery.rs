//! Bounded procedure discovery (docs/CONTRACT.md section 6): termination on any page sequence,
//! the 5,000-address bound, names (primary or alias) only after exhaustive discovery and only
//! unshared, malformed pages, repeated cursors.

use std::convert::Infallible;

use proptest::prelude::*;
use rea::core::{
    Discovery, MAX_VALUE_CHARS, Malformed, Outcome, PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE,
    ProcedureEntry, ProcedurePage, Procedures, Step,
};
use rea::core::{discover, is_valid_address};
use rea::fuzzing::core::{check_discovery, check_discovery_bytes, discovery_pages};

fn entry(address: u64, name: Option<&str>) -> ProcedureEntry {
    ProcedureEntry::new(format!("{address:#x}"), name)
}

fn aliased(address: u64, name: Option<&str>, aliases: &[&str]) -> ProcedureEntry {
    ProcedureEntry {
        aliases: aliases.iter().map(|alias| alias.to_string()).collect(),
        ..entry(address, name)
    }
}

fn page(entries: Vec<ProcedureEntry>, next_cursor: Option<&str>) -> ProcedurePage {
    ProcedurePage {
        entries,
        next_cursor: next_cursor.map(str::to_owned),
    }
}

/// Runs discovery over `pages`, answering an empty last page once they run out, and
/// returns the outcome with the number of pages requested.
fn run(pages: &[ProcedurePage]) -> (Outcome, usize) {
    let mut asked = 0;
    let outcome = discover(|_| {
        asked += 1;
        Ok::<_, Infallible>(pages.get(asked - 1).cloned().unwrap_or_default())
    });
    let Ok(outcome) = outcome;
    (outcome, asked)
}

fn found(outcome: Outcome) -> Procedures {
    match outcome {
        Outcome::Found(procedures) => procedures,
        Outcome::Malformed(malformed) => panic!("expected procedures, got {malformed:?}"),
    }
}

/// `count` pages of `PROCEDURE_PAGE_SIZE` fresh addresses, each entry named uniquely, with
/// cursors, the last with `last_cursor`.
fn full_pages(count: usize, last_cursor: Option<&str>) -> Vec<ProcedurePage> {
    (0..count)
        .map(|n| {
            let entries = (0..PROCEDURE_PAGE_SIZE as u64)
                .map(|i| {
                    let address = 0x40_0000 + (n * PROCEDURE_PAGE_SIZE) as u64 + i;
                    entry(address, Some(&format!("fn_{address:x}")))
                })
                .collect();
            let cursor = format!("page{}", n + 1);
            page(
                entries,
                if n + 1 == count {
                    last_cursor
                } else {
                    Some(&cursor)
                },
            )
        })
        .collect()
}

/// An adversarial page: a few entries from a small address and name pool (so pages repeat
/// and names get shared), sometimes invalid or oversized, with cursors from a small pool.
fn adversarial_page() -> impl Strategy<Value = ProcedurePage> {
    let address = prop_oneof![
        12 => (0u64..48).prop_map(|a| format!("{a:#x}")),
        1 => Just("0x0040".to_owned()),
        1 => Just("0X40".to_owned()),
        1 => Just(String::new()),
    ];
    let text = || {
        prop_oneof![
            6 => prop::sample::select(&["main", "init", "sub_1", "start", ""][..]).prop_map(str::to_owned),
            1 => Just("n".repeat(MAX_VALUE_CHARS + 1)),
        ]
    };
    let name = prop::option::weighted(0.7, text());
    let aliases = prop_oneof![
        3 => Just(Vec::new()),
        1 => prop::collection::vec(text(), 1..3),
    ];
    let entries = prop_oneof![
        30 => prop::collection::vec(
            (address, name, aliases).prop_map(|(address, name, aliases)| ProcedureEntry { address, name, aliases }),
            0..8,
        ),
        1 => Just(vec![ProcedureEntry::new("0x1", None); PROCEDURE_PAGE_SIZE + 1]),
    ];
    let cursor = prop_oneof![
        3 => Just(None),
        8 => (0u8..6).prop_map(|c| Some(format!("c{c}"))),
        1 => Just(Some("c".repeat(MAX_VALUE_CHARS + 1))),
    ];
    (entries, cursor).prop_map(|(entries, next_cursor)| ProcedurePage {
        entries,
        next_cursor,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Termination and every rule, on adversarial page sequences replayed forever: checked
    /// against the declarative reading of docs/CONTRACT.md section 6 in `invariants`.
    #[test]
    fn terminates_and_obeys_the_rules_on_adversarial_pages(
        pages in prop::collection::vec(adversarial_page(), 0..12),
    ) {
        prop_assert_eq!(check_discovery(&pages), Ok(()));
    }

    /// The same check on pages decoded from arbitrary bytes, as the fuzz target does.
    #[test]
    fn fuzz_discovery_invariants_hold(data in prop::collection::vec(any::<u8>(), 0..90)) {
        prop_assert_eq!(check_discovery_bytes(&data), Ok(()));
    }

    /// Names are offered after exhaustive discovery, exactly the unshared ones (primary or
    /// alias: a name is unshared when every entry listing it, as its name or among its
    /// aliases, has the same address), in first-seen order; addresses are unique in
    /// first-seen order.
    #[test]
    fn exhaustive_discovery_offers_exactly_the_unshared_names(
        listing in prop::collection::vec(
            (0u64..30, prop::option::of(0u8..8), prop::collection::vec(0u8..8, 0..3)),
            0..60,
        ),
        page_size in 1usize..10,
    ) {
        let entries: Vec<ProcedureEntry> = listing
            .iter()
            .map(|(address, name, aliases)| ProcedureEntry {
                address: format!("{address:#x}"),
                name: name.map(|n| format!("name{n}")),
                aliases: aliases.iter().map(|n| format!("name{n}")).collect(),
            })
            .collect();
        let chunks: Vec<&[ProcedureEntry]> = entries.chunks(page_size).collect();
        let mut pages = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (n, chunk) in chunks.iter().enumerate() {
            let fresh = chunk.iter().filter(|e| seen.insert(e.address.clone())).count();
            let advances = fresh > 0;
            let last = n + 1 == chunks.len();
            // Keep only sequences a sound provider could send: every continued page advances.
            prop_assume!(last || advances);
            pages.push(page(chunk.to_vec(), (!last).then(|| format!("c{n}")).as_deref()));
        }
        let procedures = found(run(&pages).0);
        prop_assert!(procedures.exhaustive);
        let mut addresses: Vec<String> = Vec::new();
        for e in &entries {
            if !addresses.contains(&e.address) {
                addresses.push(e.address.clone());
            }
        }
        prop_assert_eq!(&procedures.addresses, &addresses);
        let names_of = |e: &ProcedureEntry| -> Vec<String> {
            e.name.iter().chain(&e.aliases).cloned().collect()
        };
        let mut unique_names: Vec<String> = Vec::new();
        for name in entries.iter().flat_map(names_of) {
            let owners: std::collections::HashSet<&String> = entries
                .iter()
                .filter(|other| names_of(other).contains(&name))
                .map(|other| &other.address)
                .collect();
            if owners.len() == 1 && !unique_names.contains(&name) {
                unique_names.push(name);
            }
        }
        prop_assert_eq!(&procedures.names, &unique_names);
    }

    /// Reaching the bound stops discovery with exactly 5,000 addresses and no names,
    /// wherever the bound falls in a page.
    #[test]
    fn the_bound_stops_discovery_without_names(offset in 0u64..500, extra_pages in 0usize..3) {
        // Eleven or more full pages: more than the bound is always on offer.
        let mut pages = full_pages(11 + extra_pages, None);
        if offset > 0 {
            // Shift the second page back so it repeats `offset` addresses of the first:
            // the bound then falls inside the eleventh page.
            for (i, e) in pages[1].entries.iter_mut().enumerate() {
                *e = entry(0x40_0000 + PROCEDURE_PAGE_SIZE as u64 - offset + i as u64, Some("dup"));
            }
        }
        let procedures = found(run(&pages).0);
        prop_assert_eq!(procedures.addresses.len(), PROCEDURE_ADDRESS_LIMIT);
        prop_assert!(!procedures.exhaustive);
        prop_assert!(procedures.names.is_empty());
    }

    /// A repeated cursor is detected, however far back it was first returned.
    #[test]
    fn repeated_cursors_are_malformed(pages_before_repeat in 1usize..8, repeat_of in 0usize..8) {
        let repeat_of = repeat_of % pages_before_repeat;
        let mut pages: Vec<ProcedurePage> = (0..pages_before_repeat)
            .map(|n| page(vec![entry(n as u64, None)], Some(&format!("c{n}"))))
            .collect();
        pages.push(page(vec![entry(1_000, None)], Some(&format!("c{repeat_of}"))));
        let (outcome, asked) = run(&pages);
        prop_assert_eq!(outcome, Outcome::Malformed(Malformed::RepeatedCursor));
        prop_assert_eq!(asked, pages_before_repeat + 1);
    }
}

#[test]
fn an_endless_provider_adding_one_address_per_page_stops_at_the_bound() {
    let mut asked = 0u64;
    let outcome = discover(|_| {
        asked += 1;
        Ok::<_, Infallible>(page(
            vec![entry(asked, Some("same"))],
            Some(&format!("c{asked}")),
        ))
    });
    let Ok(outcome) = outcome;
    let procedures = found(outcome);
    assert_eq!(asked, PROCEDURE_ADDRESS_LIMIT as u64);
    assert_eq!(procedures.addresses.len(), PROCEDURE_ADDRESS_LIMIT);
    assert!(!procedures.exhaustive && procedures.names.is_empty());
}

#[test]
fn an_endless_provider_repeating_its_page_is_non_advancing() {
    let mut asked = 0;
    let outcome = discover(|_| {
        asked += 1;
        Ok::<_, Infallible>(page(
            vec![entry(1, None), entry(2, None)],
            Some(&format!("fresh{asked}")),
        ))
    });
    assert_eq!(outcome, Ok(Outcome::Malformed(Malformed::NoProgress)));
    assert_eq!(asked, 2);
}

#[test]
fn exactly_the_bound_on_a_last_page_is_exhaustive() {
    let procedures = found(run(&full_pages(10, None)).0);
    assert_eq!(procedures.addresses.len(), PROCEDURE_ADDRESS_LIMIT);
    assert!(procedures.exhaustive);
    assert_eq!(procedures.names.len(), PROCEDURE_ADDRESS_LIMIT);
    assert_eq!(procedures.candidates().count(), 2 * PROCEDURE_ADDRESS_LIMIT);
}

#[test]
fn exactly_the_bound_with_a_next_cursor_is_bounded() {
    let (outcome, asked) = run(&full_pages(10, Some("more")));
    let procedures = found(outcome);
    assert_eq!(asked, 10);
    assert!(!procedures.exhaustive && procedures.names.is_empty());
}

#[test]
fn one_address_past_the_bound_on_a_last_page_is_bounded() {
    let mut pages = full_pages(10, None);
    pages[9].entries.pop();
    pages.push(page(vec![entry(1, None), entry(2, Some("late"))], None));
    pages[9].next_cursor = Some("tail".to_owned());
    let procedures = found(run(&pages).0);
    assert_eq!(procedures.addresses.len(), PROCEDURE_ADDRESS_LIMIT);
    assert_eq!(procedures.addresses.last().map(String::as_str), Some("0x1"));
    assert!(!procedures.exhaustive && procedures.names.is_empty());
}

#[test]
fn a_shared_name_is_never_offered_but_a_repeated_pair_is_unique() {
    let pages = [page(
        vec![
            entry(0x10, Some("shared")),
            entry(0x20, Some("shared")),
            entry(0x30, Some("twice")),
            entry(0x30, Some("twice")),
            entry(0x30, Some("alias")),
            entry(0x40, Some("")),
        ],
        None,
    )];
    let procedures = found(run(&pages).0);
    assert_eq!(procedures.addresses, ["0x10", "0x20", "0x30", "0x40"]);
    assert_eq!(procedures.names, ["twice", "alias"]);
    let candidates: Vec<&str> = procedures.candidates().collect();
    assert_eq!(
        candidates,
        ["0x10", "0x20", "0x30", "0x40", "twice", "alias"]
    );
}

#[test]
fn aliases_are_names_of_their_address() {
    let pages = [page(
        vec![
            // memcmp and bcmp share one address: both are offered.
            aliased(0x10, Some("memcmp"), &["bcmp"]),
            // `strchr` is primary here and an alias at 0x30: shared, never offered.
            aliased(0x20, Some("strchr"), &["", "index"]),
            aliased(0x30, Some("rindex"), &["strchr"]),
            // Aliases without a primary name, and one repeating itself at one address.
            aliased(0x40, None, &["only_alias", "only_alias"]),
            aliased(0x40, Some("only_alias"), &[]),
        ],
        None,
    )];
    let procedures = found(run(&pages).0);
    assert_eq!(procedures.addresses, ["0x10", "0x20", "0x30", "0x40"]);
    assert_eq!(
        procedures.names,
        ["memcmp", "bcmp", "index", "rindex", "only_alias"]
    );
}

#[test]
fn aliases_count_toward_nothing_but_the_value_bound() {
    // A full page whose entries each carry three aliases is not a page of too many items:
    // the page size counts entries.
    let full: Vec<ProcedureEntry> = (0..PROCEDURE_PAGE_SIZE as u64)
        .map(|i| {
            let names = [format!("a{i}"), format!("b{i}"), format!("c{i}")];
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            aliased(i, Some(&format!("f{i}")), &names)
        })
        .collect();
    let procedures = found(run(&[page(full, None)]).0);
    assert_eq!(procedures.addresses.len(), PROCEDURE_PAGE_SIZE);
    assert_eq!(procedures.names.len(), 4 * PROCEDURE_PAGE_SIZE);
    // An alias at the value bound is fine; one past it makes the page malformed, wherever
    // it stands among the aliases.
    let at_bound = "a".repeat(MAX_VALUE_CHARS);
    let past = "a".repeat(MAX_VALUE_CHARS + 1);
    assert!(matches!(
        run(&[page(vec![aliased(1, None, &[&at_bound])], None)]).0,
        Outcome::Found(_)
    ));
    for aliases in [vec![past.as_str()], vec!["fine", past.as_str()]] {
        assert_eq!(
            run(&[page(vec![aliased(1, Some("f"), &aliases)], None)]).0,
            Outcome::Malformed(Malformed::ValueTooLong)
        );
    }
}

#[test]
fn fuzz_pages_carry_aliases_as_their_seventh_byte_says() {
    // Two unique aliases per entry.
    let unique = discovery_pages(&[3, 0, 0, 0b0100, 0, 0, 0b0010]);
    assert_eq!(
        unique[0].entries[1],
        aliased(1, Some("f_1"), &["a0_1", "a1_1"])
    );
    // Names shared modulo 4 and one alias from the same pool: `g_1` is the alias of 0x0 and
    // the name of 0x1, so it is never offered.
    let shared = discovery_pages(&[2, 0, 0, 0b1000, 0, 3, 0b0101]);
    assert_eq!(
        shared[0].entries,
        [
            aliased(0, Some("g_0"), &["g_1"]),
            aliased(1, Some("g_1"), &["g_2"])
        ]
    );
    assert_eq!(found(run(&shared).0).names, ["g_0", "g_2"]);
    // The entry's own name repeated, empty aliases, and an over-long one in the middle entry.
    let repeated = discovery_pages(&[1, 0, 0, 0b0100, 0, 0, 0b1001]);
    assert_eq!(repeated[0].entries, [aliased(0, Some("f_0"), &["f_0"])]);
    let empty = discovery_pages(&[1, 0, 0, 0, 0, 0, 0b1101]);
    assert_eq!(empty[0].entries, [aliased(0, None, &[""])]);
    let over_long = discovery_pages(&[3, 0, 0, 0, 0, 0, 0b1_0000]);
    assert_eq!(over_long[0].entries[1].aliases.len(), 1);
    assert_eq!(
        run(&over_long).0,
        Outcome::Malformed(Malformed::ValueTooLong)
    );
}

#[test]
fn each_malformed_page_gives_the_malformed_outcome() {
    let good = page(vec![entry(1, Some("a"))], Some("c1"));
    let cases = [
        (
            page(vec![entry(2, None); PROCEDURE_PAGE_SIZE + 1], None),
            Malformed::TooManyEntries {
                got: 501,
                limit: 500,
            },
        ),
        (
            page(vec![ProcedureEntry::new("0x0002", None)], None),
            Malformed::InvalidAddress,
        ),
        (
            page(vec![ProcedureEntry::new("2", None)], None),
            Malformed::InvalidAddress,
        ),
        (
            page(vec![entry(2, Some(&"n".repeat(MAX_VALUE_CHARS + 1)))], None),
            Malformed::ValueTooLong,
        ),
        (
            page(vec![entry(2, None)], Some(&"c".repeat(MAX_VALUE_CHARS + 1))),
            Malformed::ValueTooLong,
        ),
        (
            page(vec![entry(2, None)], Some("c1")),
            Malformed::RepeatedCursor,
        ),
        (
            page(vec![entry(1, Some("b"))], Some("c2")),
            Malformed::NoProgress,
        ),
        (page(Vec::new(), Some("c2")), Malformed::NoProgress),
    ];
    for (bad, expected) in cases {
        let (outcome, _) = run(&[good.clone(), bad.clone()]);
        assert_eq!(outcome, Outcome::Malformed(expected.clone()), "{bad:?}");
    }
    // A name at the bound is fine.
    let at_bound = page(vec![entry(2, Some(&"n".repeat(MAX_VALUE_CHARS)))], None);
    assert!(matches!(run(&[good, at_bound]).0, Outcome::Found(_)));
}

#[test]
fn the_state_machine_asks_with_the_previous_cursor_and_refuses_pages_after_the_end() {
    let mut discovery = Discovery::new();
    let first = discovery.request();
    assert_eq!((first.cursor, first.limit), (None, PROCEDURE_PAGE_SIZE));
    let Step::Fetch(second) = discovery.feed(page(vec![entry(1, None)], Some("next"))) else {
        panic!("expected a second request");
    };
    assert_eq!(second.cursor.as_deref(), Some("next"));
    assert!(matches!(
        discovery.feed(page(vec![entry(2, None)], None)),
        Step::Finished(Outcome::Found(_))
    ));
    assert_eq!(
        discovery.feed(page(vec![entry(3, None)], None)),
        Step::Finished(Outcome::Malformed(Malformed::NoProgress))
    );
}

#[test]
fn valid_addresses_are_canonical_lowercase_hex() {
    for valid in [
        "0x0",
        "0x1",
        "0x401000",
        "0xffffffffffffffff",
        "0x100003f20",
    ] {
        assert!(is_valid_address(valid), "{valid}");
    }
    for invalid in [
        "",
        "0x",
        "0x00",
        "0x0401000",
        "0X401000",
        "0x401A00",
        "401000",
        "0x1_000",
        "0x+1",
        "0x10000000000000000",
        " 0x1",
        "0x1 ",
    ] {
        assert!(!is_valid_address(invalid), "{invalid}");
    }
}

#[test]
fn malformed_messages() {
    let messages: Vec<String> = [
        Malformed::TooManyEntries {
            got: 501,
            limit: 500,
        },
        Malformed::InvalidAddress,
        Malformed::ValueTooLong,
        Malformed::RepeatedCursor,
        Malformed::NoProgress,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("core_discovery__malformed_messages", messages.join("\n"));
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Labels (docs/CONTRACT.md section 17) under section 6's rule, against a naive oracle: after
    /// exhaustive discovery, a provider name or a label is offered exactly when provider names
    /// (primary or alias) and labels together give it one address, each once; the addresses
    /// come first, unchanged; before exhaustive discovery no name and no label is offered.
    #[test]
    fn labels_are_offered_exactly_when_names_and_labels_together_name_one_address(
        listing in prop::collection::vec(
            (0u64..20, prop::option::of(0u8..6), prop::collection::vec(0u8..6, 0..2)),
            0..40,
        ),
        labels in prop::collection::vec((0u64..24, 0u8..9), 0..12),
        exhaustive in any::<bool>(),
    ) {
        let name = |n: u8| format!("name_{n}");
        let entries: Vec<ProcedureEntry> = listing
            .iter()
            .map(|(address, primary, aliases)| {
                let aliases: Vec<String> = aliases.iter().map(|a| name(*a)).collect();
                let aliases: Vec<&str> = aliases.iter().map(String::as_str).collect();
                aliased(*address, primary.map(name).as_deref(), &aliases)
            })
            .collect();
        // Not exhaustive: full pages up to the address bound, the last still promising more.
        let pages = if exhaustive {
            vec![page(entries.clone(), None)]
        } else {
            full_pages(PROCEDURE_ADDRESS_LIMIT / PROCEDURE_PAGE_SIZE, Some("more"))
        };
        let procedures = found(run(&pages).0);
        prop_assert_eq!(procedures.exhaustive, exhaustive);
        let labels: Vec<(String, String)> = labels
            .iter()
            .map(|(address, n)| (format!("{address:#x}"), name(*n)))
            .collect();
        let offered = procedures.candidates_with_labels(&labels);
        let (addresses, names) = offered.split_at(procedures.addresses.len());
        prop_assert_eq!(addresses, procedures.addresses.iter().map(String::as_str).collect::<Vec<_>>());
        if !exhaustive {
            prop_assert_eq!(names, procedures.names.iter().map(String::as_str).collect::<Vec<_>>());
            return Ok(());
        }
        // The oracle: every (name, address) pair from either source, then the names with one.
        let mut named: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for entry in &entries {
            for n in entry.name.iter().chain(&entry.aliases) {
                named.entry(n.clone()).or_default().insert(entry.address.clone());
            }
        }
        for (address, label) in &labels {
            named.entry(label.clone()).or_default().insert(address.clone());
        }
        let expected: std::collections::BTreeSet<&str> = named
            .iter()
            .filter(|(_, at)| at.len() == 1)
            .map(|(n, _)| n.as_str())
            .collect();
        let got: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        prop_assert_eq!(got.len(), names.len(), "each name once: {:?}", names);
        prop_assert_eq!(got, expected);
    }
}
