//! Shared proptest generators and the ICU4X-built reference relation for the core tests.
//!
//! The generators are biased toward the hard cases of docs/CONTRACT.md section 3: combining marks
//! in every order, Hangul syllables with conjoining and compatibility jamo, compatibility
//! characters (full-width, ligatures, U+FDFA), default ignorables, case variants, empty
//! strings, and strings at and just over the 4,096-character bound.

use icu_casemap::CaseMapper;
use icu_normalizer::DecomposingNormalizerBorrowed;
use icu_normalizer::properties::CanonicalCombiningClassMapBorrowed;
use icu_properties::CodePointSetData;
use icu_properties::props::DefaultIgnorableCodePoint;
use proptest::prelude::*;
use proptest::sample::select;
use rea::core::MAX_VALUE_CHARS;

/// Combining marks of many classes: 1 (overlay), 7 (nukta), 8 (kana voicing), 202, 216,
/// 220, 230, 232, 233, 234, 240 (iota subscript, which folds to a starter).
pub const MARKS: &[char] = &[
    '\u{0300}',
    '\u{0301}',
    '\u{0302}',
    '\u{0303}',
    '\u{0307}',
    '\u{0308}',
    '\u{030A}',
    '\u{031B}',
    '\u{0323}',
    '\u{0327}',
    '\u{0328}',
    '\u{0331}',
    '\u{0334}',
    '\u{0345}',
    '\u{035C}',
    '\u{035D}',
    '\u{0360}',
    '\u{05B0}',
    '\u{093C}',
    '\u{0E48}',
    '\u{3099}',
    '\u{309A}',
    '\u{1DCE}',
    '\u{20D2}',
    '\u{FE20}',
    '\u{1D165}',
    '\u{1D16D}',
];

/// Compatibility characters: full-width and half-width forms, ligatures, the long Arabic
/// ligatures U+FDFA/U+FDFB, squared and circled forms, letterlike symbols, math letters,
/// and composition exclusions.
pub const COMPATIBILITY: &[char] = &[
    '\u{FF10}',
    '\u{FF11}',
    '\u{FF21}',
    '\u{FF38}',
    '\u{FF41}',
    '\u{FF58}',
    '\u{FF3F}',
    '\u{FF61}',
    '\u{FF76}',
    '\u{FF9E}',
    '\u{FF9F}',
    '\u{FB00}',
    '\u{FB01}',
    '\u{FB02}',
    '\u{FB03}',
    '\u{FB05}',
    '\u{FB06}',
    '\u{FB13}',
    '\u{FDFA}',
    '\u{FDFB}',
    '\u{FDF2}',
    '\u{0132}',
    '\u{01C4}',
    '\u{01C5}',
    '\u{01C6}',
    '\u{3392}',
    '\u{33C2}',
    '\u{2460}',
    '\u{2474}',
    '\u{2075}',
    '\u{00BD}',
    '\u{2126}',
    '\u{212A}',
    '\u{212B}',
    '\u{2160}',
    '\u{1D400}',
    '\u{1D6A4}',
    '\u{1E9B}',
    '\u{0340}',
    '\u{0344}',
    '\u{0958}',
    '\u{0F73}',
    '\u{0F75}',
    '\u{2ADC}',
    '\u{1D15E}',
    '\u{00A0}',
    '\u{3000}',
    '\u{2028}',
    '\u{0149}',
];

/// Default_Ignorable_Code_Point characters, assigned and unassigned, including the Hangul
/// fillers and a variation selector.
pub const IGNORABLES: &[char] = &[
    '\u{00AD}',
    '\u{034F}',
    '\u{061C}',
    '\u{115F}',
    '\u{1160}',
    '\u{17B4}',
    '\u{180B}',
    '\u{180E}',
    '\u{200B}',
    '\u{200C}',
    '\u{200D}',
    '\u{200E}',
    '\u{202A}',
    '\u{2060}',
    '\u{2064}',
    '\u{2065}',
    '\u{3164}',
    '\u{FE00}',
    '\u{FE0F}',
    '\u{FEFF}',
    '\u{FFA0}',
    '\u{FFF0}',
    '\u{1BCA0}',
    '\u{1D173}',
    '\u{E0000}',
    '\u{E0001}',
    '\u{E0041}',
    '\u{E0100}',
    '\u{E0FFF}',
];

/// Case variants, including full foldings (ß, ẞ, ŉ, ǰ), final sigma, KELVIN SIGN, dotted
/// and dotless i, long s, title case, Greek with ypogegrammeni, Cherokee, Georgian, Deseret.
pub const CASE_VARIANTS: &[char] = &[
    'ß', 'ẞ', 'ς', 'σ', 'Σ', 'K', 'k', '\u{212A}', 'İ', 'ı', 'i', 'I', 'ſ', 'ǅ', 'Ǆ', 'ǆ', 'ΐ',
    'ᾳ', 'ᾼ', 'ᾈ', 'µ', 'Μ', 'μ', 'Ꭰ', 'ꭰ', 'ა', 'Ა', '𐐀', '𐐨', 'ǰ', 'ﬅ', 'Å', 'å', 'ω', 'Ω', 'ϐ',
    'ϴ', 'ꙋ', 'ᲈ', 'Ǳ', 'ǲ', 'Ɫ', 'ɫ', 'ẚ', 'ῼ', 'ﬗ', 'Σ', 'S', 's',
];

/// Letters that carry marks well: ASCII, Latin-1, Greek, Cyrillic, Hebrew, Devanagari,
/// Thai, hiragana and a conjoining jamo.
pub const BASES: &[char] = &[
    'a', 'e', 'i', 'o', 'A', 'E', 'I', 'O', 'é', 'α', 'Α', 'ω', 'и', 'й', 'ב', 'क', 'ก', 'か',
    'ᄀ', '0', '_',
];

/// One hard character.
pub fn hard_char() -> BoxedStrategy<char> {
    prop_oneof![
        6 => prop::char::range('!', '~'),
        2 => select(MARKS),
        2 => select(COMPATIBILITY),
        2 => select(IGNORABLES),
        3 => select(CASE_VARIANTS),
        1 => prop::char::range('\u{AC00}', '\u{D7A3}'),
        1 => prop::char::range('\u{3131}', '\u{318E}'),
        1 => prop::char::range('\u{FFA0}', '\u{FFDC}'),
        1 => prop::char::range('\u{1100}', '\u{11FF}'),
        2 => any::<char>(),
    ]
    .boxed()
}

/// A base followed by one to four combining marks, in an order proptest shuffles.
pub fn mark_cluster() -> BoxedStrategy<String> {
    (select(BASES), prop::collection::vec(select(MARKS), 1..5))
        .prop_flat_map(|(base, marks)| (Just(base), Just(marks).prop_shuffle()))
        .prop_map(|(base, marks)| std::iter::once(base).chain(marks).collect())
        .boxed()
}

/// Hangul written every way: a precomposed syllable, conjoining L V (T) jamo, compatibility
/// jamo, half-width jamo, or a syllable followed by a trailing conjoining jamo.
pub fn hangul() -> BoxedStrategy<String> {
    let l = prop::char::range('\u{1100}', '\u{1112}');
    let v = prop::char::range('\u{1161}', '\u{1175}');
    let t = prop::option::of(prop::char::range('\u{11A8}', '\u{11C2}'));
    prop_oneof![
        prop::char::range('\u{AC00}', '\u{D7A3}').prop_map(String::from),
        (l, v, t).prop_map(|(l, v, t)| [Some(l), Some(v), t].into_iter().flatten().collect()),
        prop::collection::vec(prop::char::range('\u{3131}', '\u{318E}'), 1..4)
            .prop_map(|jamo| jamo.into_iter().collect()),
        prop::collection::vec(prop::char::range('\u{FFA0}', '\u{FFDC}'), 1..3)
            .prop_map(|jamo| jamo.into_iter().collect()),
        (
            prop::char::range('\u{AC00}', '\u{D7A3}'),
            prop::char::range('\u{11A8}', '\u{11C2}')
        )
            .prop_map(|(s, t)| [s, t].into_iter().collect()),
    ]
    .boxed()
}

/// A short string of hard pieces; empty about one time in ten.
pub fn short_string() -> BoxedStrategy<String> {
    let piece = prop_oneof![
        5 => hard_char().prop_map(String::from),
        2 => mark_cluster(),
        2 => hangul(),
        2 => "[a-zA-Z0-9_:]{1,4}",
    ];
    prop::collection::vec(piece, 0..7)
        .prop_map(|pieces| pieces.concat())
        .boxed()
}

/// A string of exactly `length` characters built by repeating `seed` (or "a").
pub fn stretched(seed: &str, length: usize) -> String {
    let seed = if seed.is_empty() { "a" } else { seed };
    seed.chars().cycle().take(length).collect()
}

/// A string at or around the 4,096-character bound, sometimes with a combining mark right
/// at the boundary.
pub fn long_string() -> BoxedStrategy<String> {
    let lengths = select(
        &[
            MAX_VALUE_CHARS - 1,
            MAX_VALUE_CHARS,
            MAX_VALUE_CHARS + 1,
            5_000,
        ][..],
    );
    (short_string(), lengths, any::<bool>())
        .prop_map(|(seed, length, mark_at_bound)| {
            let mut text = stretched(&seed, length);
            if mark_at_bound && length >= MAX_VALUE_CHARS {
                let mut chars: Vec<char> = text.chars().collect();
                chars[MAX_VALUE_CHARS - 1] = 'e';
                if let Some(next) = chars.get_mut(MAX_VALUE_CHARS) {
                    *next = '\u{301}';
                }
                text = chars.into_iter().collect();
            }
            text
        })
        .boxed()
}

/// Any test string: mostly short hard strings, sometimes long ones.
pub fn hard_string() -> BoxedStrategy<String> {
    prop_oneof![
        30 => short_string(),
        1 => long_string(),
    ]
    .boxed()
}

/// A string of default ignorables only (its key is empty).
pub fn ignorable_string() -> BoxedStrategy<String> {
    prop::collection::vec(select(IGNORABLES), 0..5)
        .prop_map(|chars| chars.into_iter().collect())
        .boxed()
}

/// A rewriting of `x` that keeps its key: a normal form, a case mapping of its NFKD, or an
/// inserted default ignorable.
pub fn equivalent_variant(x: String) -> BoxedStrategy<String> {
    use unicode_normalization::UnicodeNormalization;
    let decomposed: String = x.nfkd().collect();
    let dotless = decomposed.contains('\u{131}');
    let mut variants = vec![
        x.clone(),
        x.nfc().collect(),
        x.nfd().collect(),
        x.nfkc().collect(),
        decomposed.clone(),
        format!("\u{200B}{x}"),
        format!("{x}\u{00AD}"),
    ];
    if !dotless {
        variants.push(decomposed.to_uppercase());
        variants.push(decomposed.to_lowercase());
    }
    select(variants).boxed()
}

/// The key rebuilt from ICU4X parts: NFKD, full case folding, DI removal, NFKD.
pub fn icu_key(x: &str) -> String {
    let nfkd = DecomposingNormalizerBorrowed::new_nfkd();
    let folded = CaseMapper::new()
        .fold_string(&nfkd.normalize(x))
        .into_owned();
    let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    let stripped: String = folded.chars().filter(|&c| !ignorable.contains(c)).collect();
    nfkd.normalize(&stripped).into_owned()
}

/// Whether `c` is a starter (canonical combining class 0) by ICU4X's data.
pub fn icu_is_starter(c: char) -> bool {
    CanonicalCombiningClassMapBorrowed::new().get_u8(c) == 0
}

/// Longest candidate key, in characters, for which [`reference_matches`] searches every
/// split point; the search is quadratic, and longer keys only come from repeated seeds.
const SPLIT_SEARCH_LIMIT: usize = 200;

/// docs/CONTRACT.md section 3's relation read literally and computed independently of the crate:
/// the prefix key is empty, or the candidate is equivalent to the prefix followed by a suffix
/// whose key is empty or begins with a starter. The suffix is searched char by char among
/// the tails of the candidate's key (every witness suffix has its key there). Keys longer
/// than [`SPLIT_SEARCH_LIMIT`] characters are compared directly (prefix, then a starter).
pub fn reference_matches(prefix: &str, candidate: &str) -> bool {
    let prefix_key = icu_key(prefix);
    if prefix_key.is_empty() {
        return true;
    }
    let candidate_key = icu_key(candidate);
    if candidate_key.chars().count() > SPLIT_SEARCH_LIMIT {
        return candidate_key
            .strip_prefix(&prefix_key)
            .is_some_and(|rest| rest.chars().next().is_none_or(icu_is_starter));
    }
    let splits = candidate_key
        .char_indices()
        .map(|(at, _)| at)
        .chain([candidate_key.len()]);
    for at in splits {
        let suffix = &candidate_key[at..];
        let suffix_ok = icu_key(suffix).chars().next().is_none_or(icu_is_starter);
        if suffix_ok && icu_key(&format!("{prefix}{suffix}")) == candidate_key {
            return true;
        }
    }
    false
}
