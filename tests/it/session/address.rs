//! Addresses: lenient on leading zeros, strict on everything else, canonical when rendered.

use proptest::prelude::*;
use rea::core::is_valid_address;
use rea::session::Address;

proptest! {
    /// The rendering is the canonical form completion offers, and it parses back.
    #[test]
    fn rendering_is_canonical_and_round_trips(value in any::<u64>()) {
        let text = Address::new(value).to_string();
        prop_assert!(is_valid_address(&text));
        prop_assert_eq!(Address::parse(&text).unwrap().value(), value);
    }

    /// Leading zeros up to 16 digits are accepted and dropped.
    #[test]
    fn padded_forms_parse_to_the_same_address(value in any::<u64>(), width in 1usize..=16) {
        let padded = format!("0x{value:0width$x}");
        prop_assert_eq!(Address::parse(&padded).unwrap(), Address::new(value));
    }

    /// Anything `parse` accepts is `0x` and 1 to 16 lowercase hexadecimal digits.
    #[test]
    fn accepted_text_has_the_documented_syntax(text in "0?[xX]?[0-9a-fA-FgG]{0,18}") {
        let documented = text.strip_prefix("0x").is_some_and(|digits| {
            (1..=16).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        prop_assert_eq!(Address::parse(&text).is_ok(), documented);
    }
}

#[test]
fn errors_quote_the_text() {
    let error = Address::parse("0x401A00").unwrap_err();
    assert_eq!(
        error.to_string(),
        "\"0x401A00\" is not an address: expected `0x` followed by 1 to 16 lowercase hexadecimal digits"
    );
}
