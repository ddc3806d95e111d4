//! Replays the saved inputs of the `resource_uri` fuzz target through its invariant check, and
//! states the percent-encoding round trip as a property.

use rea::resources::{SessionItem, TEMPLATES, decode, encode, expand, parse_session};

#[test]
fn resource_uri_regressions_hold_their_invariants() {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions/resource_uri");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        rea::fuzzing::resources::check_resource_uri(&std::fs::read(entry.unwrap().path()).unwrap());
        count += 1;
    }
    assert!(count >= 3, "saved inputs in {}", dir.display());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any non-empty value survives encoding, including `/`, `%`, spaces and non-ASCII text.
    #[test]
    fn encoding_round_trips(value in "\\PC{1,24}|[/%?#]{1,4}") {
        let encoded = encode(&value);
        proptest::prop_assert!(!encoded.contains('/'));
        proptest::prop_assert_eq!(decode(&encoded), Some(value));
    }

    /// Every template expanded with any values parses back to those values.
    #[test]
    fn every_template_round_trips_its_variables(
        values in proptest::collection::vec("\\PC{1,12}", 3),
        index in 0usize..5,
    ) {
        let template = &TEMPLATES[index];
        let named: std::collections::BTreeMap<&str, &str> = template
            .variables
            .iter()
            .zip(values.iter().chain(values.iter()))
            .map(|((name, _), value)| (*name, value.as_str()))
            .collect();
        let uri = expand(template, &named).unwrap();
        let parsed = parse_session(&uri).unwrap();
        proptest::prop_assert_eq!(parsed.session.as_str(), named["session"]);
        let parts: Vec<&str> = match &parsed.item {
            SessionItem::Evidence { id } | SessionItem::Unknown { id } | SessionItem::Capture { id } => vec![id],
            SessionItem::Procedure { document, procedure } => vec![document, procedure],
            SessionItem::Occurrence { manifest_id, occurrence_id } => vec![manifest_id, occurrence_id],
        };
        let expected: Vec<&str> = template.variables[1..].iter().map(|(name, _)| named[name]).collect();
        proptest::prop_assert_eq!(parts, expected);
    }
}
