//! Addresses as the session speaks them: lowercase `0x`-prefixed hexadecimal.

use std::fmt;

use serde::{Serialize, Serializer};

/// A virtual address in a document.
///
/// Parsed from `0x` followed by 1 to 16 lowercase hexadecimal digits, leading zeros allowed (as
/// disassemblers often print them), and always rendered canonically, without leading zeros:
/// `Address::parse("0x0040")` renders as `0x40`. The rendering is the form completion offers
/// ([`is_valid_address`](crate::core::is_valid_address)), so a completed address
/// parses back to itself.
///
/// ```
/// use rea::session::Address;
/// let address = Address::parse("0x00401a0").unwrap();
/// assert_eq!(address.to_string(), "0x401a0");
/// assert_eq!(address.value(), 0x401a0);
/// assert!(Address::parse("0x401A0").is_err());
/// assert!(Address::parse("0x00000000000000001").is_err());
/// // The canonical rendering is what completion offers.
/// assert!(rea::core::is_valid_address(&address.to_string()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address(u64);

/// Text that is not a valid address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{text:?} is not an address: expected `0x` followed by 1 to 16 lowercase hexadecimal digits"
)]
pub struct AddressError {
    /// The rejected text.
    pub text: crate::text::Quoted,
}

impl Address {
    /// The address with this numeric value.
    pub const fn new(value: u64) -> Address {
        Address(value)
    }

    /// Parses `0x` followed by 1 to 16 lowercase hexadecimal digits.
    pub fn parse(text: &str) -> Result<Address, AddressError> {
        let invalid = || AddressError { text: text.into() };
        let digits = text.strip_prefix("0x").ok_or_else(invalid)?;
        let lowercase_hex = digits
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !(1..=16).contains(&digits.len()) || !lowercase_hex {
            return Err(invalid());
        }
        u64::from_str_radix(digits, 16)
            .map(Address)
            .map_err(|_| invalid())
    }

    /// The numeric value.
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl Serialize for Address {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
