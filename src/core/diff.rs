//! Procedure matching across two versions of a program (`compare_procedures`, CONTRACT
//! section 11): pure, deterministic, bounded by a caller's stop signal.
//!
//! Each side is a list of [`Fingerprint`]s in address order. [`compare`] pairs them in rounds,
//! each round only among procedures not paired yet, and repeats the rounds until one pairs
//! nothing (a fixpoint):
//!
//! 1. [`Signal::SymbolName`]: the same name, unique on each side.
//! 2. [`Signal::ExactBytes`]: the same bytes, unique on each side among the unpaired.
//! 3. [`Signal::InstructionHash`]: the same instructions with every address-dependent field
//!    masked (call and branch displacements, PC-relative operands), unique on each side.
//! 4. [`Signal::Anchors`]: the same set of imported symbols called and strings referenced (at
//!    least two anchors, or one string), unique on each side.
//! 5. [`Signal::PointerTable`]: two tables of procedure pointers in data (dispatch tables,
//!    callbacks) of the same length, vouched for by the pairs among the procedures they hold
//!    at the same places and among those that refer to them, at least three times as many
//!    as the slots holding two paired procedures apart, each the other's only such table:
//!    the unpaired procedures in the same slot, at least [`MIN_SLOT_SIMILARITY`] alike.
//! 6. [`Signal::CallGraph`]: for each pair made, its unpaired callees and callers on the two
//!    sides: first by a unique instruction hash among them, then by mutual best
//!    [`similarity`] of at least [`MIN_NEIGHBOUR_SIMILARITY`] ([`MIN_LARGE_NEIGHBOUR_SIMILARITY`]
//!    when both have at least [`LARGE_PROCEDURE_INSTRUCTIONS`]; a best that another is
//!    within [`LIKENESS_MARGIN`] of is a near tie, see below), then the one unpaired
//!    neighbour left on each side when both are that large, from
//!    [`MIN_SOLE_NEIGHBOUR_SIMILARITY`]; and the one unpaired callee on each side between
//!    two callees called in the same order on both sides, or before the first of them, or
//!    after the last (a call slot), when both have at least [`MIN_LIKENESS_INSTRUCTIONS`],
//!    from [`MIN_SOLE_NEIGHBOUR_SIMILARITY`] (before the first and after the last, only
//!    of half to twice the other's size).
//! 7. [`Signal::Likeness`], only when the rounds above paired nothing: unpaired procedures of
//!    at least [`MIN_LIKENESS_INSTRUCTIONS`] that are each other's most similar among all
//!    unpaired procedures of half to twice their size, at least [`MIN_LIKENESS`] alike and
//!    [`LIKENESS_MARGIN`] above the runner-up on both sides.
//! 8. [`Signal::Order`], when the likeness round paired nothing either: the unpaired
//!    procedures between two consecutive pairs, with no other pair between them on either
//!    side, position by position or by mutual best similarity, at least
//!    [`MIN_ORDER_SIMILARITY`] alike (compilers lay functions out in source order).
//! 9. [`Signal::Twins`], when the order round paired nothing either: near-twins, the
//!    instances of one template that a new release rewrote alike (a match finder built for
//!    4, 5 and 6 bytes), each at least [`MIN_TWIN_LIKENESS`] alike to several of the other
//!    side within [`LIKENESS_MARGIN`], or decisively the best of one that is (a hair less
//!    alike crosswise one way than the other). Linked that way they make a family; in a
//!    family, each procedure's own immediates (those not every member of its side holds: the shift by 5,
//!    the other hash prime) decide, by mutual unique best likeness of them, sharing at
//!    least one, among the members that the pairs calling both do not call in different
//!    places (see below).
//!
//! 10. [`Signal::SameCallers`], when the twins round paired nothing either: procedures called
//!     by the same pairs, at least [`MIN_SAME_CALLERS`] (a function rewritten past any
//!     likeness keeps its callers). Those that share a set of paired callers are the
//!     unpaired procedures and those a fuzzy round (4 and 6 to 9) paired with a procedure
//!     that something calls and that has none of their paired callers: the place overrules
//!     the likeness (a procedure that nothing calls, every caller having inlined it, has no
//!     place to be against). The only
//!     one on each side pairs; among more, one set against its place pairs with the only
//!     one on the other side that calls its old partner (a function whose body moved into a
//!     new callee, which is now called in its place), and the others by mutual best
//!     [`similarity`] of at least [`MIN_SOLE_NEIGHBOUR_SIMILARITY`], [`LIKENESS_MARGIN`]
//!     above the rest. A pair overruled is undone, and the rounds go on. Unpaired procedures
//!     of at least [`MIN_LIKENESS_INSTRUCTIONS`] called by one same pair group too, and
//!     there, even one on each side pairs only by that decisive best, half to twice the
//!     other's size, and only when the group has one procedure on a side (a function
//!     rewritten at its one call site; a single call site vouches less, and tiny
//!     procedures all look alike).
//! 11. Near ties, when the same-callers round paired nothing either: a mutual best of the
//!     call-graph or order round that another procedure is within [`LIKENESS_MARGIN`] of
//!     (the instances of one template, rewritten alike) waits for the rounds that tell them
//!     apart (tables, twins, callers). When those pair nothing more, the call-graph round
//!     (then the order round) runs again and settles each by the assignment of its
//!     neighbourhood with the greatest total [`similarity`], which pairs
//!     two only within [`LIKENESS_MARGIN`] of the best on both sides.
//! 12. Inlined callees, once, when the near ties settled nothing either: the likeness round
//!     ([`Signal::Likeness`], the same thresholds) with each unpaired procedure's paired
//!     callees of fewer than [`LARGE_PROCEDURE_INSTRUCTIONS`] taken in (their instructions,
//!     strings, constants and imports added, their callees called instead), for two of which
//!     at least one took code in: a function whose small callee one version inlines and the
//!     other calls. It runs once because it keeps nothing between runs (the likeness round
//!     keeps its bests); the rounds go on from the pairs it makes.
//! 13. Small procedures, once, last ([`Signal::Likeness`]): unpaired procedures of fewer than
//!     [`MIN_LIKENESS_INSTRUCTIONS`] that are each other's most alike among all unpaired
//!     procedures of half to twice their size, by [`LIKENESS_MARGIN`], at least
//!     [`MIN_SMALL_LIKENESS`], and that share an immediate when either has one: a small
//!     function that nothing calls (every caller inlined it) and whose one constant changed.
//!     The many small functions alike (`mov %rdi,%rax; ret`) tie and stay apart.
//!
//! The rounds of likeness and place (6, 7, 8, 10, 11, 12 and 13) and the anchors round (4) never
//! pair two procedures that the pairs calling both call in different places, nor does the
//! twins round (9) tell apart two so called (inlining copies a callee's strings and imports
//! into its callers, so the same anchors are no proof on their own): when, for every pair
//! that calls both, of the longest run of its other callees called in the same order on both
//! sides (each side's callees in the order of their first call), at least
//! [`MIN_PLACES_APART`] are called before one and not before the other. A function removed from one call and another added at
//! another are two functions, however alike; one call moved past another is not enough.
//!
//! The rounds of likeness and place (4 and 6 to 13) never pair a procedure with one that
//! an unpaired caller of it, with it taken in, is more alike to by [`LIKENESS_MARGIN`] (or
//! the other way round): the other version inlined it into that caller, which now holds its
//! code. When nothing calls the other one and a pair calls the procedure, that caller need
//! only be within [`LIKENESS_MARGIN`] of as alike: every caller inlined the callee in the
//! other version, so its place vouches for nothing, and the caller holding it is as likely.
//!
//! The fuzzy rounds (5 to 13) never pair two procedures that both refer to strings and share
//! none, nor two that only compute (no calls, no strings), each hold at least
//! [`MIN_TELLING_CONSTANTS`] constants and share none: two wrappers printing different
//! messages, or two bracket tables of other thresholds, are different functions, however
//! alike their code.
//!
//! A pair is [`Status::Identical`] when both have the same instructions (masked) and, through
//! the pairs, the same callees, imports, strings and constants; otherwise it is
//! [`Status::Changed`] with a similarity below 1 and what differs ([`Changes`]).
//!
//! **Guarantees:** no procedure is in two pairs (the callers round undoes a pair before it
//! makes another with one of its procedures, and its own pairs are never undone, so the
//! rounds end); every procedure is in exactly one of the
//! pairs, `only_in_baseline` or `only_in_candidate`; the same inputs give the same result
//! (iteration is by index, grouping by ordered maps, never by hash seed); the stop signal is
//! asked at least once per round and every [`CHECK_EVERY`] units of work, and a stopped
//! comparison keeps the pairs it made and says so.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Fewest constants each of two procedures must hold for sharing none of them to keep the
/// fuzzy rounds from pairing them (an edit keeps some of a function's constants; one or two
/// constants are often the edit itself).
pub const MIN_TELLING_CONSTANTS: usize = 3;

/// Least similarity a neighbour pair needs in the call-graph round.
pub const MIN_NEIGHBOUR_SIMILARITY: f64 = 0.6;

/// Least similarity two neighbours of a pair need when each has at least
/// [`LARGE_PROCEDURE_INSTRUCTIONS`]: that much code that alike shares far more than chance,
/// and a release that rewrites a large function leaves it about that alike.
pub const MIN_LARGE_NEIGHBOUR_SIMILARITY: f64 = 0.55;

/// Least similarity of the one unpaired neighbour left on each side of a pair, when both
/// are large: the pair and its place vouch for it, and nothing else is there to take it.
pub const MIN_SOLE_NEIGHBOUR_SIMILARITY: f64 = 0.45;

/// Fewest instructions that make a procedure large for [`MIN_LARGE_NEIGHBOUR_SIMILARITY`]
/// and [`MIN_SOLE_NEIGHBOUR_SIMILARITY`].
pub const LARGE_PROCEDURE_INSTRUCTIONS: usize = 64;

/// Least similarity a pair needs in the likeness round, where no neighbour vouches for it.
pub const MIN_LIKENESS: f64 = 0.6;

/// How far above the runner-up, on both sides, a likeness-round pair must be.
pub const LIKENESS_MARGIN: f64 = 0.05;

/// Fewest instructions a procedure needs for the likeness round: tiny ones all look alike
/// (they pair by likeness only when nearly unchanged: [`MIN_SMALL_LIKENESS`]).
pub const MIN_LIKENESS_INSTRUCTIONS: usize = 8;

/// Least similarity of a procedure of fewer than [`MIN_LIKENESS_INSTRUCTIONS`] to the one it
/// pairs with as each other's most alike (round 13 of the module documentation): a few
/// instructions share their operations with many others, so only a nearly unchanged one
/// pairs, by its immediates.
pub const MIN_SMALL_LIKENESS: f64 = 0.7;

/// Least similarity near-twins need in the twins round, where what tells them apart decides.
pub const MIN_TWIN_LIKENESS: f64 = 0.55;

/// How many immediates' worth of the operations' likeness [`similarity`] counts in with the
/// immediates, so that a procedure with a handful of them is not told apart by one (an
/// `assert` line number that moved), and two with none are as alike as their operations.
pub const IMMEDIATES_PRIOR: f64 = 2.0;

/// Least similarity a pair needs in the order round, where its place vouches for it.
pub const MIN_ORDER_SIMILARITY: f64 = 0.6;

/// Fewest paired callers an unpaired procedure needs for the callers round to pair it by
/// them alone (one caller is a single call site, which a removed and an added function share
/// as easily as a function and its rewrite: there, a decisive likeness must add to it).
pub const MIN_SAME_CALLERS: usize = 2;

/// Least similarity a pair needs in the pointer-table round, where its slot in a table that
/// other pairs already align vouches for it (rewritten code in the same slot stays paired).
pub const MIN_SLOT_SIMILARITY: f64 = 0.25;

/// Fewest pairs called in order between the place of one procedure and that of another
/// for the callers they share to tell them apart (one call moved past another is common).
pub const MIN_PLACES_APART: usize = 2;

/// Most unpaired neighbours of a pair, per side, compared by similarity (all of them are
/// compared by instruction hash).
pub const MAX_NEIGHBOURS: usize = 64;

/// Most slots of one table of procedure pointers; a longer run of pointers is cut into tables
/// of this many.
pub const MAX_TABLE_SLOTS: u32 = 4_096;

/// Units of work (similarities computed, procedures visited) between two looks at the stop
/// signal.
pub const CHECK_EVERY: usize = 1_024;

/// What one procedure looks like, as the matcher reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    /// Start address.
    pub address: u64,
    /// Its symbol name, when the binary has one.
    pub name: Option<String>,
    /// Size in bytes (trailing padding excluded).
    pub size: u64,
    /// Hash of its exact bytes.
    pub bytes: u64,
    /// Hash of its instruction sequence with address-dependent fields masked.
    pub shape: u64,
    /// The per-instruction masked hashes, sorted (a multiset).
    pub tokens: Vec<u32>,
    /// The per-instruction operations (mnemonics without operands), sorted (a multiset).
    pub mnemonics: Vec<u16>,
    /// Indices (into the same side) of the procedures it calls or tail-calls: distinct, in
    /// the order of their first call in its code (the call-graph round places a callee
    /// between the others by it; a list sorted by index places callees by address instead).
    pub callees: Vec<u32>,
    /// Imported symbols it calls: sorted, distinct.
    pub imports: Vec<String>,
    /// Hashes of the strings it refers to: sorted, distinct.
    pub strings: Vec<u64>,
    /// Immediate operands that are not addresses: sorted, distinct.
    pub constants: Vec<u64>,
    /// Every immediate operand that is not an address, small ones included, hashed with its
    /// operation: sorted (a multiset). Register allocation leaves them alike, and they tell
    /// apart the instances of one template (a shift by 4 or by 5, another hash prime).
    pub immediates: Vec<u32>,
    /// The slots of tables of procedure pointers that hold it: sorted, distinct.
    pub slots: Vec<Slot>,
    /// The tables of procedure pointers whose start its code refers to (as numbered in
    /// [`Slot::table`]): sorted, distinct.
    pub tables: Vec<u32>,
}

/// One slot of a table of procedure pointers in data: the table (numbered on its side in
/// address order) and the place in it, from 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    /// The table, numbered on its side in address order.
    pub table: u32,
    /// The place in the table, from 0.
    pub index: u32,
}

/// Which signal made a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Signal {
    /// The same symbol name.
    SymbolName,
    /// The same bytes.
    ExactBytes,
    /// The same instructions, addresses masked.
    InstructionHash,
    /// The same imports called and strings referenced.
    Anchors,
    /// The same slot of two tables of procedure pointers that other pairs align.
    PointerTable,
    /// A neighbour (callee or caller) of a pair already made.
    CallGraph,
    /// The most similar of all unpaired procedures, on both sides, by a margin.
    Likeness,
    /// In the same place between two pairs, on both sides.
    Order,
    /// Among near-twins (instances of one template, each alike to several of the other
    /// side), the one whose own immediates, those its twins lack, are the same.
    Twins,
    /// Called by the same pairs (at least [`MIN_SAME_CALLERS`]), which call nothing else on
    /// either side that could be it: a function rewritten past likeness, or split, in its
    /// place. It overrules a fuzzy pair that the place contradicts. Called by one same pair,
    /// the decisively most alike of the procedures it alone calls, when it calls only one
    /// so on a side.
    SameCallers,
}

impl Signal {
    /// Every signal, in the order of the rounds.
    pub const ALL: [Signal; 10] = [
        Signal::SymbolName,
        Signal::ExactBytes,
        Signal::InstructionHash,
        Signal::Anchors,
        Signal::PointerTable,
        Signal::CallGraph,
        Signal::Likeness,
        Signal::Order,
        Signal::Twins,
        Signal::SameCallers,
    ];

    /// Whether the signal is one a fuzzy round makes from likeness or anchors alone, which
    /// the place of the procedures in the call graph can overrule.
    fn is_fuzzy(self) -> bool {
        matches!(
            self,
            Signal::Anchors | Signal::CallGraph | Signal::Likeness | Signal::Order | Signal::Twins
        )
    }

    /// Whether the signal is one of likeness or place that a pair calling the two procedures
    /// in different places overrules ([`Signal::PointerTable`] has evidence of its own, a
    /// slot; the twins round leaves out the members so called before it looks for what tells
    /// them apart).
    fn follows_call_order(self) -> bool {
        matches!(
            self,
            Signal::Anchors
                | Signal::CallGraph
                | Signal::Likeness
                | Signal::Order
                | Signal::SameCallers
        )
    }

    /// The name used in results: `symbol_name`, `exact_bytes`, `instruction_hash`, `anchors`,
    /// `pointer_table`, `call_graph`, `likeness`, `address_order`, `twins`, `same_callers`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::SymbolName => "symbol_name",
            Signal::ExactBytes => "exact_bytes",
            Signal::InstructionHash => "instruction_hash",
            Signal::Anchors => "anchors",
            Signal::PointerTable => "pointer_table",
            Signal::CallGraph => "call_graph",
            Signal::Likeness => "likeness",
            Signal::Order => "address_order",
            Signal::Twins => "twins",
            Signal::SameCallers => "same_callers",
        }
    }
}

/// Whether a pair's code is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The same instructions, callees, imports, strings and constants.
    Identical,
    /// Something differs ([`Changes`]).
    Changed,
}

/// What differs between the two procedures of a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// The sizes differ, and so do the instructions (the same instructions in another size
    /// differ by padding alone).
    pub size: bool,
    /// The masked instruction sequences differ.
    pub instructions: bool,
    /// The callees (through the pairs) or the imports called differ.
    pub callees: bool,
    /// The strings referred to differ.
    pub strings: bool,
    /// The constants differ.
    pub constants: bool,
}

impl Changes {
    /// The names of what differs, in a fixed order: `size`, `instructions`, `callees`,
    /// `strings`, `constants`.
    pub fn names(self) -> Vec<&'static str> {
        [
            (self.size, "size"),
            (self.instructions, "instructions"),
            (self.callees, "callees"),
            (self.strings, "strings"),
            (self.constants, "constants"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }

    fn any(self) -> bool {
        self.size || self.instructions || self.callees || self.strings || self.constants
    }
}

/// One pair: a baseline procedure and its candidate counterpart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// Index into the baseline.
    pub baseline: u32,
    /// Index into the candidate.
    pub candidate: u32,
    /// The signal that made it.
    pub signal: Signal,
    /// Whether the code is the same.
    pub status: Status,
    /// 1 for an identical pair, in [0, 1) for a changed one.
    pub similarity: f64,
    /// What differs (nothing, for an identical pair).
    pub changes: Changes,
}

/// The result of [`compare`].
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The pairs, in baseline address order.
    pub pairs: Vec<Pair>,
    /// Indices of baseline procedures in no pair, in order.
    pub only_in_baseline: Vec<u32>,
    /// Indices of candidate procedures in no pair, in order.
    pub only_in_candidate: Vec<u32>,
    /// Whether the stop signal ended the rounds before the fixpoint.
    pub stopped: bool,
}

/// Pairs the procedures of `baseline` and `candidate` (see the [module documentation](self)).
/// `stop` is asked now and then; once it answers true, no further pair is made.
pub fn compare(
    baseline: &[Fingerprint],
    candidate: &[Fingerprint],
    stop: &mut dyn FnMut() -> bool,
) -> Comparison {
    let mut matcher = Matcher::new(baseline, candidate, stop);
    matcher.run();
    matcher.finish()
}

/// [`compare`] with the likeness round comparing everything anew each time.
#[cfg(test)]
fn compare_forgetting(baseline: &[Fingerprint], candidate: &[Fingerprint]) -> Comparison {
    let mut never = || false;
    let mut matcher = Matcher::new(baseline, candidate, &mut never);
    matcher.remember = false;
    matcher.run();
    matcher.finish()
}

/// How alike two procedures are, in [0, 1]: the immediate operands with their operations
/// (weight 0.3, what a new register allocation leaves alike and an edit changes in part;
/// counted with [`IMMEDIATES_PRIOR`] immediates' worth of the operations' likeness), the
/// operations alone (0.2), the imports and strings (0.15), the masked instructions (0.1:
/// registers included, a new allocation changes most of them), the constants (0.1), the
/// sizes (0.1) and the callee counts (0.05).
pub fn similarity(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let mnemonics = jaccard_multiset(&a.mnemonics, &b.mnemonics);
    let immediates = {
        let common = multiset_common(&a.immediates, &b.immediates) as f64;
        let union = (a.immediates.len() + b.immediates.len()) as f64 - common;
        (common + IMMEDIATES_PRIOR * mnemonics) / (union + IMMEDIATES_PRIOR)
    };
    let anchors = (jaccard_set(&a.imports, &b.imports) + jaccard_set(&a.strings, &b.strings)) / 2.0;
    let tokens = jaccard_multiset(&a.tokens, &b.tokens);
    let constants = jaccard_set(&a.constants, &b.constants);
    let size = ratio(a.size, b.size);
    let callees = ratio(a.callees.len() as u64, b.callees.len() as u64);
    let value = 0.3 * immediates
        + 0.2 * mnemonics
        + 0.15 * anchors
        + 0.1 * tokens
        + 0.1 * constants
        + 0.1 * size
        + 0.05 * callees;
    value.clamp(0.0, 1.0)
}

/// [`similarity`] as the fuzzy rounds read it: 0 when both procedures refer to strings and
/// share none of them (two wrappers that print different messages are different functions,
/// however alike their code), or both only compute ([`is_pure`]), hold at least
/// [`MIN_TELLING_CONSTANTS`] constants each and share none (a function replaced by another of
/// its shape at the same call).
fn kinship(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let strings_conflict = !a.strings.is_empty()
        && !b.strings.is_empty()
        && jaccard_set(&a.strings, &b.strings) == 0.0;
    let constants_conflict = is_pure(a)
        && is_pure(b)
        && a.constants.len() >= MIN_TELLING_CONSTANTS
        && b.constants.len() >= MIN_TELLING_CONSTANTS
        && jaccard_set(&a.constants, &b.constants) == 0.0;
    if strings_conflict || constants_conflict {
        0.0
    } else {
        similarity(a, b)
    }
}

/// The unpaired procedures of `side` (by `partners`) that `keep` keeps, by size, then index.
fn unpaired_by_size(
    side: &[Fingerprint],
    partners: &[Option<u32>],
    keep: impl Fn(&Fingerprint) -> bool,
) -> Vec<u32> {
    let mut indices: Vec<u32> = (0..side.len() as u32)
        .filter(|&i| partners[i as usize].is_none() && keep(&side[i as usize]))
        .collect();
    indices.sort_by_key(|&i| (side[i as usize].size, i));
    indices
}

/// [`kinship`] for the small procedures' round: 0 when they have immediates and share none
/// (a few instructions with other constants are another function of the same operations,
/// which the operations' likeness alone would call alike).
fn small_kinship(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let immediates = !a.immediates.is_empty() || !b.immediates.is_empty();
    if immediates && multiset_common(&a.immediates, &b.immediates) == 0 {
        0.0
    } else {
        kinship(a, b)
    }
}

/// The places in `sorted` (indices into `side`, sorted by size) of the procedures of half to
/// twice `size`: the ones the likeness and twins rounds compare with a procedure of that size.
fn size_window(sorted: &[u32], side: &[Fingerprint], size: u64) -> std::ops::Range<usize> {
    sizes_within_window(sorted, |&i| side[i as usize].size, size)
}

/// The places in `sorted` (sorted by `size_of`) of the items of half to twice `size`.
fn sizes_within_window<T>(
    sorted: &[T],
    size_of: impl Fn(&T) -> u64,
    size: u64,
) -> std::ops::Range<usize> {
    let low = sorted.partition_point(|item| size_of(item).saturating_mul(2) < size);
    let high = sorted.partition_point(|item| size_of(item) <= size.saturating_mul(2));
    low..high.max(low)
}

/// Whether each of two procedures is half to twice the other's size: the window the likeness
/// and twins rounds compare within ([`size_window`] finds it in a sorted list).
fn within_size_window(a: &Fingerprint, b: &Fingerprint) -> bool {
    a.size.saturating_mul(2) >= b.size && a.size <= b.size.saturating_mul(2)
}

/// Least similarity two neighbours of a pair need in the call-graph round.
fn neighbour_least(a: &Fingerprint, b: &Fingerprint) -> f64 {
    if is_large(a) && is_large(b) {
        MIN_LARGE_NEIGHBOUR_SIMILARITY
    } else {
        MIN_NEIGHBOUR_SIMILARITY
    }
}

/// Whether a procedure has at least [`LARGE_PROCEDURE_INSTRUCTIONS`].
fn is_large(procedure: &Fingerprint) -> bool {
    procedure.tokens.len() >= LARGE_PROCEDURE_INSTRUCTIONS
}

/// Whether a procedure only computes: it calls nothing and refers to no string, so its
/// constants are what it is (a procedure that calls may pass line numbers and sizes that
/// move with every release, as `assert` does).
fn is_pure(procedure: &Fingerprint) -> bool {
    procedure.callees.is_empty() && procedure.imports.is_empty() && procedure.strings.is_empty()
}

fn ratio(a: u64, b: u64) -> f64 {
    match a.max(b) {
        0 => 1.0,
        most => a.min(b) as f64 / most as f64,
    }
}

/// |A ∩ B| / |A ∪ B| of two sorted multisets; 1 when both are empty.
fn jaccard_multiset<T: Ord>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = multiset_common(a, b);
    common as f64 / (a.len() + b.len() - common) as f64
}

/// |A ∩ B| of two sorted multisets.
fn multiset_common<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The same for sorted sets (distinct elements).
fn jaccard_set<T: Ord>(a: &[T], b: &[T]) -> f64 {
    jaccard_multiset(a, b)
}

/// The tables of procedure pointers of one side: each a list of slots holding a procedure's
/// index or nothing (a slot no procedure names).
fn tables_of(side: &[Fingerprint]) -> BTreeMap<u32, Vec<Option<u32>>> {
    let mut tables: BTreeMap<u32, Vec<Option<u32>>> = BTreeMap::new();
    for (procedure, fingerprint) in side.iter().enumerate() {
        for slot in fingerprint
            .slots
            .iter()
            .filter(|s| s.index < MAX_TABLE_SLOTS)
        {
            let table = tables.entry(slot.table).or_default();
            let index = slot.index as usize;
            if table.len() <= index {
                table.resize(index + 1, None);
            }
            table[index] = Some(procedure as u32);
        }
    }
    tables
}

/// Forgets each kept best (of `side`'s procedures) that `freed`, a procedure of the other
/// side set free, would enter as best or runner-up, ties included (the likeness round offers
/// in an order, and a tie goes to the first offered).
fn forget_where_changed(bests: &mut [Option<Best>], side: &[Fingerprint], freed: &Fingerprint) {
    if freed.tokens.len() < MIN_LIKENESS_INSTRUCTIONS {
        return;
    }
    for (best, procedure) in bests.iter_mut().zip(side) {
        if let Some(kept) = best
            && within_size_window(freed, procedure)
            && (kept.runner_up_at.is_none() || kinship(procedure, freed) >= kept.runner_up)
        {
            *best = None;
        }
    }
}

/// The pairs among `callers`, each named by its baseline index (`pair_of` gives it, or
/// nothing for an unpaired caller): sorted, distinct.
fn paired_callers(callers: &[u32], pair_of: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut pairs: Vec<u32> = callers
        .iter()
        .filter_map(|&caller| pair_of(caller))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The longest subsequence of `points` (increasing in their first member, distinct in the
/// second) whose second members increase too; of several, the one patience sorting finds.
fn longest_increasing(points: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // `ends[k]`: the index of the point that ends the lowest run of length k + 1 found.
    let mut ends: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = Vec::with_capacity(points.len());
    for (index, &(_, second)) in points.iter().enumerate() {
        let length = ends.partition_point(|&end| points[end].1 < second);
        before.push(length.checked_sub(1).map(|previous| ends[previous]));
        if length == ends.len() {
            ends.push(index);
        } else {
            ends[length] = index;
        }
    }
    let mut run = Vec::with_capacity(ends.len());
    let mut at = ends.last().copied();
    while let Some(index) = at {
        run.push(points[index]);
        at = before[index];
    }
    run.reverse();
    run
}

/// The procedures of one side whose code names each table.
fn referrers_of(side: &[Fingerprint]) -> BTreeMap<u32, Vec<u32>> {
    let mut referrers: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (procedure, fingerprint) in side.iter().enumerate() {
        for &table in &fingerprint.tables {
            referrers.entry(table).or_default().push(procedure as u32);
        }
    }
    referrers
}

/// Callers of each procedure of one side: sorted, distinct.
fn callers_of(side: &[Fingerprint]) -> Vec<Vec<u32>> {
    let mut callers = vec![Vec::new(); side.len()];
    for (index, procedure) in side.iter().enumerate() {
        for &callee in &procedure.callees {
            if let Some(list) = callers.get_mut(callee as usize) {
                list.push(index as u32);
            }
        }
    }
    for list in &mut callers {
        list.sort_unstable();
        list.dedup();
    }
    callers
}

struct Matcher<'a> {
    baseline: &'a [Fingerprint],
    candidate: &'a [Fingerprint],
    baseline_callers: Vec<Vec<u32>>,
    candidate_callers: Vec<Vec<u32>>,
    /// The tables of procedure pointers of each side ([`tables_of`]).
    baseline_tables: BTreeMap<u32, Vec<Option<u32>>>,
    candidate_tables: BTreeMap<u32, Vec<Option<u32>>>,
    /// The baseline procedures whose code names each baseline table.
    table_referrers: BTreeMap<u32, Vec<u32>>,
    /// Baseline index to candidate index.
    forward: Vec<Option<u32>>,
    backward: Vec<Option<u32>>,
    signals: Vec<Option<Signal>>,
    /// The likeness round's best and runner-up of each baseline procedure, when computed.
    row_best: Vec<Option<Best>>,
    /// The same for each candidate procedure.
    column_best: Vec<Option<Best>>,
    /// Whether the likeness round keeps its bests between rounds (off only in the test that
    /// checks that keeping them changes nothing).
    remember: bool,
    /// Whether the mutual best of a neighbourhood settles a near tie by the assignment
    /// ([`best_assignment`]); otherwise it leaves it to the rounds that tell the instances of
    /// one template apart (tables, twins, callers), and settles it only when they pair
    /// nothing more.
    settle_near_ties: bool,
    /// Whether the round of inlined callees ([`Matcher::inlined_round`]) has run.
    inlined_tried: bool,
    /// Whether the round of small procedures ([`Matcher::small_likeness_round`]) has run.
    small_tried: bool,
    /// The unpaired neighbours of a pair (baseline, candidate, and whether near ties were
    /// settled) among which the call-graph round paired nothing: it would pair nothing again.
    quiet_neighbours: BTreeSet<(Vec<u32>, Vec<u32>, bool)>,
    /// What the last twins round found, kept as `row_best` is.
    twins: TwinMemory,
    /// The pairs in force, in the order made (the call-graph round walks their neighbours).
    queue: Vec<(u32, u32)>,
    /// How many pairs were ever made (a pair undone still counts: the rounds go on).
    made: usize,
    stop: &'a mut dyn FnMut() -> bool,
    work: usize,
    stopped: bool,
}

impl<'a> Matcher<'a> {
    fn new(
        baseline: &'a [Fingerprint],
        candidate: &'a [Fingerprint],
        stop: &'a mut dyn FnMut() -> bool,
    ) -> Matcher<'a> {
        Matcher {
            baseline,
            candidate,
            baseline_callers: callers_of(baseline),
            candidate_callers: callers_of(candidate),
            baseline_tables: tables_of(baseline),
            candidate_tables: tables_of(candidate),
            table_referrers: referrers_of(baseline),
            forward: vec![None; baseline.len()],
            backward: vec![None; candidate.len()],
            signals: vec![None; baseline.len()],
            row_best: vec![None; baseline.len()],
            column_best: vec![None; candidate.len()],
            remember: true,
            settle_near_ties: false,
            inlined_tried: false,
            small_tried: false,
            quiet_neighbours: BTreeSet::new(),
            twins: TwinMemory::default(),
            queue: Vec::new(),
            made: 0,
            stop,
            work: 0,
            stopped: false,
        }
    }

    /// Whether to stop: asks the signal every [`CHECK_EVERY`] units (and with `now`).
    fn should_stop(&mut self, units: usize, now: bool) -> bool {
        if self.stopped {
            return true;
        }
        let before = self.work / CHECK_EVERY;
        self.work = self.work.saturating_add(units);
        if (now || self.work / CHECK_EVERY != before) && (self.stop)() {
            self.stopped = true;
        }
        self.stopped
    }

    fn pair(&mut self, b: u32, c: u32, signal: Signal) {
        let (bi, ci) = (b as usize, c as usize);
        if self.forward[bi].is_some() || self.backward[ci].is_some() {
            return;
        }
        if signal.follows_call_order() && self.against_call_order(b, c) {
            return;
        }
        if signal.is_fuzzy() && self.rather_its_caller(b, c) {
            return;
        }
        self.forward[bi] = Some(c);
        self.backward[ci] = Some(b);
        self.signals[bi] = Some(signal);
        self.queue.push((b, c));
        self.made += 1;
    }

    fn run(&mut self) {
        loop {
            if self.should_stop(1, true) {
                return;
            }
            let before = self.made;
            self.unique_round(Signal::SymbolName, |p| {
                p.name.as_ref().map(|name| Key::Name(name.clone()))
            });
            self.unique_round(Signal::ExactBytes, |p| Some(Key::Hash(p.bytes, p.size)));
            self.unique_round(Signal::InstructionHash, |p| Some(Key::Hash(p.shape, 0)));
            self.unique_round(Signal::Anchors, |p| {
                let anchors = p.imports.len() + p.strings.len();
                (anchors >= 2 || !p.strings.is_empty())
                    .then(|| Key::Anchors(p.imports.clone(), p.strings.clone()))
            });
            self.table_round();
            self.call_graph_round();
            if self.made == before {
                self.likeness_round();
            }
            if self.made == before {
                self.order_round();
            }
            if self.made == before {
                self.twins_round();
            }
            if self.made == before {
                self.same_callers_round();
            }
            if self.made == before {
                // Last, the near ties the rounds above left.
                self.settle_near_ties = true;
                self.call_graph_round();
                if self.made == before {
                    self.order_round();
                }
                self.settle_near_ties = false;
            }
            if self.made == before && !self.inlined_tried {
                // Once: it compares more than the likeness round and keeps nothing.
                self.inlined_tried = true;
                self.inlined_round();
            }
            if self.made == before && !self.small_tried {
                // Once, last: what is left of the small procedures after every place.
                self.small_tried = true;
                self.small_likeness_round();
            }
            if self.made == before || self.stopped {
                return;
            }
        }
    }

    /// Pairs the unpaired procedures whose key is unique on each side.
    fn unique_round(&mut self, signal: Signal, key: impl Fn(&Fingerprint) -> Option<Key>) {
        let mut groups: BTreeMap<Key, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
        for (index, procedure) in self.baseline.iter().enumerate() {
            if self.forward[index].is_none()
                && let Some(key) = key(procedure)
            {
                groups.entry(key).or_default().0.push(index as u32);
            }
        }
        for (index, procedure) in self.candidate.iter().enumerate() {
            if self.backward[index].is_none()
                && let Some(key) = key(procedure)
            {
                groups.entry(key).or_default().1.push(index as u32);
            }
        }
        if self.should_stop(self.baseline.len() + self.candidate.len(), false) {
            return;
        }
        let mut made: Vec<(u32, u32)> = groups
            .into_values()
            .filter_map(|(b, c)| (b.len() == 1 && c.len() == 1).then(|| (b[0], c[0])))
            .collect();
        made.sort_unstable();
        for (b, c) in made {
            self.pair(b, c, signal);
        }
    }

    /// Pairs the unpaired procedures in the same slot of two tables of procedure pointers
    /// that the pairs made so far align (see the module documentation).
    fn table_round(&mut self) {
        let sizes = (self.baseline_tables.len(), self.candidate_tables.len());
        if sizes.0 == 0 || sizes.1 == 0 || self.should_stop(sizes.0 + sizes.1, false) {
            return;
        }
        let (baseline, candidate) = (&self.baseline_tables, &self.candidate_tables);
        // Each baseline table's counterpart: the candidate table of its length whose slots
        // hold the partners of most of its paired procedures, at least three times as many as
        // hold something else paired (an earlier round can be wrong), and the only such.
        let mut chosen: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut counterpart: Vec<(u32, u32)> = Vec::new();
        for (&table, slots) in baseline {
            let open = |procedure: &Option<u32>| {
                procedure.is_some_and(|p| self.forward[p as usize].is_none())
            };
            if !slots.iter().any(open) {
                continue;
            }
            let mut votes: BTreeMap<u32, usize> = BTreeMap::new();
            for (index, procedure) in slots.iter().enumerate() {
                let Some(partner) = procedure.and_then(|p| self.forward[p as usize]) else {
                    continue;
                };
                for slot in &self.candidate[partner as usize].slots {
                    if slot.index as usize == index
                        && candidate.get(&slot.table).map(Vec::len) == Some(slots.len())
                    {
                        *votes.entry(slot.table).or_default() += 1;
                    }
                }
            }
            // The code that names both tables, paired, vouches for them as one slot would.
            for &referrer in self.table_referrers.get(&table).into_iter().flatten() {
                let Some(partner) = self.forward[referrer as usize] else {
                    continue;
                };
                for other in &self.candidate[partner as usize].tables {
                    if candidate.get(other).map(Vec::len) == Some(slots.len()) {
                        *votes.entry(*other).or_default() += 1;
                    }
                }
            }
            let mut best: Option<(usize, u32)> = None;
            let mut tied = false;
            for (other, agree) in votes {
                let against = self.slots_against(slots, &candidate[&other]);
                if agree < 3 * against {
                    continue;
                }
                match best {
                    Some((most, _)) if agree < most => {}
                    Some((most, _)) if agree == most => tied = true,
                    _ => (best, tied) = (Some((agree, other)), false),
                }
            }
            if let (Some((_, other)), false) = (best, tied) {
                chosen.entry(other).or_default().push(table);
                counterpart.push((table, other));
            }
        }
        let mut facing: Vec<(u32, u32)> = Vec::new();
        for (table, other) in counterpart {
            if chosen[&other].len() != 1 {
                continue;
            }
            for (left, right) in baseline[&table].iter().zip(&candidate[&other]) {
                if let (Some(b), Some(c)) = (*left, *right) {
                    facing.push((b, c));
                }
            }
        }
        for (b, c) in facing {
            if self.forward[b as usize].is_none()
                && self.backward[c as usize].is_none()
                && kinship(&self.baseline[b as usize], &self.candidate[c as usize])
                    >= MIN_SLOT_SIMILARITY
            {
                self.pair(b, c, Signal::PointerTable);
            }
        }
    }

    /// How many slots of two tables of one length hold a paired procedure facing another
    /// paired procedure than its partner.
    fn slots_against(&self, baseline: &[Option<u32>], candidate: &[Option<u32>]) -> usize {
        baseline
            .iter()
            .zip(candidate)
            .filter(|(left, right)| {
                let partner = left.and_then(|b| self.forward[b as usize]);
                let taken = right.filter(|&c| self.backward[c as usize].is_some());
                matches!((partner, taken), (Some(partner), Some(c)) if partner != c)
            })
            .count()
    }

    /// Pairs the unpaired neighbours of the pairs made so far (see the module documentation).
    fn call_graph_round(&mut self) {
        let mut next = 0;
        while next < self.queue.len() {
            let (b, c) = self.queue[next];
            next += 1;
            let (bi, ci) = (b as usize, c as usize);
            let callees = (
                self.baseline[bi].callees.clone(),
                self.candidate[ci].callees.clone(),
            );
            self.neighbours(&callees.0, &callees.1);
            self.call_slots(&callees.0, &callees.1);
            let callers = (
                self.baseline_callers[bi].clone(),
                self.candidate_callers[ci].clone(),
            );
            self.neighbours(&callers.0, &callers.1);
            if self.stopped {
                return;
            }
        }
    }

    /// Pairs the one unpaired callee on each side between two callees of a pair called in
    /// the same order on both sides (of the longest run of them), or before the first or
    /// after the last of them (bounded on one side only, there the two must also be of half
    /// to twice the other's size: a new function called last may have taken the old one in),
    /// when both have at least
    /// [`MIN_LIKENESS_INSTRUCTIONS`] and are at least [`MIN_SOLE_NEIGHBOUR_SIMILARITY`]
    /// alike: the function called in that place, rewritten (its callees inlined otherwise,
    /// its call now a constant).
    fn call_slots(&mut self, baseline: &[u32], candidate: &[u32]) {
        let unpaired_b = |b: &u32| self.forward[*b as usize].is_none();
        let unpaired_c = |c: &u32| self.backward[*c as usize].is_none();
        if !baseline.iter().any(unpaired_b) || !candidate.iter().any(unpaired_c) {
            return;
        }
        let anchors = self.call_anchors(baseline, candidate, None);
        if anchors.is_empty() {
            return; // No place without a pair called in it.
        }
        // The start and the end of the calls bound the first and the last slot (each bound
        // is one past its anchor: 0 is the start, one past the last call the end).
        let bounds: Vec<(usize, usize)> = std::iter::once((0, 0))
            .chain(anchors.iter().map(|&(b, c)| (b + 1, c + 1)))
            .chain(std::iter::once((baseline.len() + 1, candidate.len() + 1)))
            .collect();
        let mut slots = Vec::new();
        let last = bounds.len() - 2;
        for (at, bounds) in bounds.windows(2).enumerate() {
            let (before, after) = (bounds[0], bounds[1]);
            let mut b = baseline[before.0..after.0 - 1]
                .iter()
                .filter(|b| unpaired_b(b));
            let mut c = candidate[before.1..after.1 - 1]
                .iter()
                .filter(|c| unpaired_c(c));
            if let (Some(&x), None, Some(&y), None) = (b.next(), b.next(), c.next(), c.next()) {
                slots.push((x, y, at == 0 || at == last));
            }
        }
        if self.should_stop(baseline.len() + candidate.len(), false) {
            return;
        }
        for (x, y, at_an_end) in slots {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if old.tokens.len().min(new.tokens.len()) >= MIN_LIKENESS_INSTRUCTIONS
                && kinship(old, new) >= MIN_SOLE_NEIGHBOUR_SIMILARITY
                && (!at_an_end || within_size_window(old, new))
            {
                self.pair(x, y, Signal::CallGraph);
            }
        }
    }

    /// The places (in `baseline` and `candidate`, two callee lists in call order) of the
    /// longest run of pairs called in the same order on both sides, leaving out the pairs
    /// of the procedures of `besides` (baseline, candidate).
    fn call_anchors(
        &self,
        baseline: &[u32],
        candidate: &[u32],
        besides: Option<(u32, u32)>,
    ) -> Vec<(usize, usize)> {
        let place: BTreeMap<u32, usize> = (candidate.iter().enumerate())
            .map(|(at, &callee)| (callee, at))
            .collect();
        let points: Vec<(usize, usize)> = (baseline.iter().enumerate())
            .filter_map(|(at, &callee)| {
                let partner = self.forward.get(callee as usize).copied().flatten()?;
                if besides.is_some_and(|(b, c)| b == callee || c == partner) {
                    return None;
                }
                Some((at, *place.get(&partner)?))
            })
            .collect();
        longest_increasing(&points)
    }

    /// Whether the pairs that call both `b` and `c` all call them in different places: of
    /// the longest run of their other callees called in the same order on both sides, at
    /// least [`MIN_PLACES_APART`] lie before one and not before the other (a function
    /// removed from one place and another added in another, however alike).
    fn against_call_order(&self, b: u32, c: u32) -> bool {
        let (caller_lists, candidate_callers) = (
            &self.baseline_callers[b as usize],
            &self.candidate_callers[c as usize],
        );
        let mut places = caller_lists.iter().filter_map(|&caller| {
            let partner = self.forward[caller as usize]?;
            candidate_callers.binary_search(&partner).ok()?;
            let (old, new) = (
                &self.baseline[caller as usize].callees,
                &self.candidate[partner as usize].callees,
            );
            let (Some(at_b), Some(at_c)) = (
                old.iter().position(|&callee| callee == b),
                new.iter().position(|&callee| callee == c),
            ) else {
                return None;
            };
            let anchors = self.call_anchors(old, new, Some((b, c)));
            Some(
                anchors
                    .partition_point(|anchor| anchor.0 < at_b)
                    .abs_diff(anchors.partition_point(|anchor| anchor.1 < at_c))
                    < MIN_PLACES_APART,
            )
        });
        let first = places.next();
        first == Some(false) && places.all(|same| !same)
    }

    /// `procedure` (of the baseline side, or the candidate's) with the code of its paired
    /// callees of fewer than [`LARGE_PROCEDURE_INSTRUCTIONS`] taken in, as a compiler inlines
    /// them: their instructions, strings, constants and imports added, their callees called
    /// instead; `None` when it calls none such.
    fn with_callees_inlined(&self, procedure: &Fingerprint, baseline: bool) -> Option<Fingerprint> {
        let (side, partners) = if baseline {
            (self.baseline, &self.forward)
        } else {
            (self.candidate, &self.backward)
        };
        // A callee index past the side (a caller's own fingerprints) is never inlined.
        let inlined = |callee: &u32| {
            partners.get(*callee as usize).is_some_and(Option::is_some)
                && side[*callee as usize].tokens.len() < LARGE_PROCEDURE_INSTRUCTIONS
        };
        if !procedure.callees.iter().any(inlined) {
            return None;
        }
        let mut grown = procedure.clone();
        grown.callees.clear();
        for &callee in &procedure.callees {
            if inlined(&callee) {
                take_in(&mut grown, &side[callee as usize], callee);
            } else {
                grown.callees.push(callee);
            }
        }
        Some(tidied(grown))
    }

    /// Whether an unpaired caller of `b`, with `b` taken in, is at least [`LIKENESS_MARGIN`]
    /// more alike to `c` than `b` is, or an unpaired caller of `c`, with `c` taken in, to `b`:
    /// the other version inlined the callee into that caller, and the callee would pair with
    /// the caller that holds its code. Only callers of half to twice the other's size with
    /// the callee taken in are asked, and none of a procedure with more than
    /// [`MAX_NEIGHBOURS`] callers. When the callee has a paired caller and nothing calls the
    /// other procedure, the caller need only be within the margin of as alike.
    fn rather_its_caller(&self, b: u32, c: u32) -> bool {
        let (old, new) = (&self.baseline[b as usize], &self.candidate[c as usize]);
        let alike = similarity(old, new);
        let holds_more = |callers: &[u32],
                          side: &[Fingerprint],
                          partners: &[Option<u32>],
                          callee: u32,
                          other: &Fingerprint,
                          other_called: bool| {
            let placed = callers
                .iter()
                .any(|&caller| partners[caller as usize].is_some());
            let least = if placed && !other_called {
                alike - LIKENESS_MARGIN
            } else {
                alike + LIKENESS_MARGIN
            };
            callers.len() <= MAX_NEIGHBOURS
                && callers.iter().any(|&caller| {
                    let holder = &side[caller as usize];
                    let size = holder.size + side[callee as usize].size;
                    if partners[caller as usize].is_some()
                        || size > other.size.saturating_mul(2)
                        || size.saturating_mul(2) < other.size
                    {
                        return false;
                    }
                    let mut grown = holder.clone();
                    grown.callees.retain(|&called| called != callee);
                    take_in(&mut grown, &side[callee as usize], callee);
                    similarity(&tidied(grown), other) >= least
                })
        };
        holds_more(
            &self.baseline_callers[b as usize],
            self.baseline,
            &self.forward,
            b,
            new,
            !self.candidate_callers[c as usize].is_empty(),
        ) || holds_more(
            &self.candidate_callers[c as usize],
            self.candidate,
            &self.backward,
            c,
            old,
            !self.baseline_callers[b as usize].is_empty(),
        )
    }

    /// Pairs unpaired procedures that are each other's most similar by a margin, as the
    /// likeness round does, with each one's small paired callees taken in
    /// ([`Matcher::with_callees_inlined`]), when that took in code on at least one side: a
    /// function whose callee one version inlines and the other calls.
    fn inlined_round(&mut self) {
        let gather = |side: &'a [Fingerprint], partners: &[Option<u32>], baseline: bool| {
            let mut gathered: Vec<(u32, Cow<'a, Fingerprint>)> = (0..side.len() as u32)
                .filter(|&at| partners[at as usize].is_none())
                .map(|at| {
                    let procedure = &side[at as usize];
                    let grown = self.with_callees_inlined(procedure, baseline);
                    (at, grown.map_or(Cow::Borrowed(procedure), Cow::Owned))
                })
                .filter(|(_, procedure)| procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS)
                .collect();
            gathered.sort_by_key(|(at, procedure)| (procedure.size, *at));
            gathered
        };
        let rows = gather(self.baseline, &self.forward, true);
        let columns = gather(self.candidate, &self.backward, false);
        let grown = |procedure: &Cow<'a, Fingerprint>| matches!(procedure, Cow::Owned(_));
        if !rows.iter().any(|(_, f)| grown(f)) && !columns.iter().any(|(_, g)| grown(g)) {
            return;
        }
        let mut row_best = vec![Best::default(); rows.len()];
        let mut column_best = vec![Best::default(); columns.len()];
        for (row, (_, f)) in rows.iter().enumerate() {
            let range = sizes_within_window(&columns, |(_, g)| g.size, f.size);
            if self.should_stop(range.len(), false) {
                return;
            }
            for (column, (_, g)) in columns.iter().enumerate().take(range.end).skip(range.start) {
                let score = kinship(f, g);
                row_best[row].offer(score, column as u32);
                column_best[column].offer(score, row as u32);
            }
        }
        for (row, best) in row_best.iter().enumerate() {
            let Some(column) = best.at else { continue };
            let (b, f) = &rows[row];
            let (c, g) = &columns[column as usize];
            if (grown(f) || grown(g)) && best.mutual(row as u32, &column_best[column as usize]) {
                self.pair(*b, *c, Signal::Likeness);
            }
        }
    }

    /// Pairs unpaired procedures that are each other's most similar, by a margin, among all
    /// unpaired procedures of half to twice their size (see the module documentation).
    ///
    /// Each procedure's best and runner-up are kept from one round to the next: while both
    /// are still unpaired they are still the best and the runner-up (the others can only
    /// have been paired away), so only the procedures that lost one of them are compared
    /// again, and the result is the same as comparing everything anew.
    fn likeness_round(&mut self) {
        if !self.remember {
            self.row_best.fill(None);
            self.column_best.fill(None);
        }
        let eligible =
            |procedure: &Fingerprint| procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS;
        let rows = unpaired_by_size(self.baseline, &self.forward, eligible);
        let columns = unpaired_by_size(self.candidate, &self.backward, eligible);
        let stale_rows: Vec<u32> = rows
            .iter()
            .copied()
            .filter(|&b| !self.row_best[b as usize].is_some_and(|best| best.holds(&self.backward)))
            .collect();
        let stale_columns: Vec<u32> = columns
            .iter()
            .copied()
            .filter(|&c| {
                !self.column_best[c as usize].is_some_and(|best| best.holds(&self.forward))
            })
            .collect();
        let mut column_is_stale = vec![false; self.candidate.len()];
        for &c in &stale_columns {
            self.column_best[c as usize] = Some(Best::default());
            column_is_stale[c as usize] = true;
        }
        let mut row_is_stale = vec![false; self.baseline.len()];
        for &b in &stale_rows {
            row_is_stale[b as usize] = true;
        }
        // Stale rows against every column; stale columns hear from these rows on the way.
        for &b in &stale_rows {
            let procedure = &self.baseline[b as usize];
            let range = size_window(&columns, self.candidate, procedure.size);
            if self.should_stop(range.len(), false) {
                return;
            }
            let mut best = Best::default();
            for &c in &columns[range] {
                let score = kinship(procedure, &self.candidate[c as usize]);
                best.offer(score, c);
                if column_is_stale[c as usize]
                    && let Some(column) = self.column_best[c as usize].as_mut()
                {
                    column.offer(score, b);
                }
            }
            self.row_best[b as usize] = Some(best);
        }
        // Stale columns against the rows that were not compared above.
        let fresh: Vec<u32> = rows
            .iter()
            .copied()
            .filter(|&b| !row_is_stale[b as usize])
            .collect();
        for &c in &stale_columns {
            let procedure = &self.candidate[c as usize];
            let range = size_window(&fresh, self.baseline, procedure.size);
            if self.should_stop(range.len(), false) {
                return;
            }
            let mut best = self.column_best[c as usize].unwrap_or_default();
            for &b in &fresh[range] {
                best.offer(kinship(&self.baseline[b as usize], procedure), b);
            }
            self.column_best[c as usize] = Some(best);
        }
        for &b in &rows {
            let Some(row) = self.row_best[b as usize] else {
                continue;
            };
            let Some(c) = row.at else { continue };
            if let Some(column) = self.column_best[c as usize]
                && row.mutual(b, &column)
            {
                self.pair(b, c, Signal::Likeness);
            }
        }
    }

    /// Pairs the unpaired procedures of fewer than [`MIN_LIKENESS_INSTRUCTIONS`] that are
    /// each other's most alike by [`LIKENESS_MARGIN`], at least [`MIN_SMALL_LIKENESS`], among
    /// all unpaired procedures of half to twice their size, sharing an immediate when they
    /// have any ([`small_kinship`]): a small function nothing calls (its callers inlined it)
    /// whose one constant changed. The many alike small functions (`mov %rdi,%rax; ret`) tie
    /// and stay apart.
    fn small_likeness_round(&mut self) {
        let rows = unpaired_by_size(self.baseline, &self.forward, |_| true);
        let columns = unpaired_by_size(self.candidate, &self.backward, |_| true);
        let small = |procedure: &Fingerprint| procedure.tokens.len() < MIN_LIKENESS_INSTRUCTIONS;
        // One side's best among the other side's unpaired procedures in its size window.
        let best_of = |procedure: &Fingerprint,
                       others: &[u32],
                       side: &[Fingerprint],
                       baseline_first: bool|
         -> Best {
            let mut best = Best::default();
            for &other in &others[size_window(others, side, procedure.size)] {
                let other_procedure = &side[other as usize];
                let (old, new) = if baseline_first {
                    (procedure, other_procedure)
                } else {
                    (other_procedure, procedure)
                };
                best.offer(small_kinship(old, new), other);
            }
            best
        };
        let mut made = Vec::new();
        // From each small baseline procedure, then from each small candidate one whose best
        // is not small (the pairs of two small ones are found from the baseline).
        for &b in rows.iter().filter(|&&b| small(&self.baseline[b as usize])) {
            if self.should_stop(columns.len(), false) {
                return;
            }
            let row = best_of(&self.baseline[b as usize], &columns, self.candidate, true);
            let Some(c) = row.at.filter(|_| row.decisive(MIN_SMALL_LIKENESS)) else {
                continue;
            };
            let column = best_of(&self.candidate[c as usize], &rows, self.baseline, false);
            if column.at == Some(b) && column.decisive(MIN_SMALL_LIKENESS) {
                made.push((b, c));
            }
        }
        for &c in columns
            .iter()
            .filter(|&&c| small(&self.candidate[c as usize]))
        {
            if self.should_stop(rows.len(), false) {
                return;
            }
            let column = best_of(&self.candidate[c as usize], &rows, self.baseline, false);
            let Some(b) = column.at.filter(|&b| {
                column.decisive(MIN_SMALL_LIKENESS) && !small(&self.baseline[b as usize])
            }) else {
                continue;
            };
            let row = best_of(&self.baseline[b as usize], &columns, self.candidate, true);
            if row.at == Some(c) && row.decisive(MIN_SMALL_LIKENESS) {
                made.push((b, c));
            }
        }
        for (b, c) in made {
            self.pair(b, c, Signal::Likeness);
        }
    }

    /// Pairs the unpaired procedures between two consecutive pairs when no other pair lies
    /// between them on either side (compilers lay procedures out in source order): position
    /// by position when as many lie between them on each side, otherwise by mutual best
    /// similarity among at most [`MAX_NEIGHBOURS`] per side; each at least
    /// [`MIN_ORDER_SIMILARITY`] alike.
    fn order_round(&mut self) {
        let mut gaps = Vec::new();
        let mut previous: Option<(usize, usize)> = None;
        for b in 0..self.baseline.len() {
            let Some(c) = self.forward[b].map(|c| c as usize) else {
                continue;
            };
            if let Some((before_b, before_c)) = previous
                && c > before_c
                && (b - before_b > 1 || c - before_c > 1)
                && (before_c + 1..c).all(|index| self.backward[index].is_none())
            {
                gaps.push((before_b + 1..b, before_c + 1..c));
            }
            previous = Some((b, c));
        }
        for (left, right) in gaps {
            if self.should_stop(left.len().max(right.len()), false) {
                return;
            }
            if left.len() == right.len() {
                for (x, y) in left.zip(right) {
                    if kinship(&self.baseline[x], &self.candidate[y]) >= MIN_ORDER_SIMILARITY {
                        self.pair(x as u32, y as u32, Signal::Order);
                    }
                }
            } else if left.len() <= MAX_NEIGHBOURS && right.len() <= MAX_NEIGHBOURS {
                let (left, right): (Vec<u32>, Vec<u32>) = (
                    left.map(|index| index as u32).collect(),
                    right.map(|index| index as u32).collect(),
                );
                self.mutual_best(&left, &right, |_, _| MIN_ORDER_SIMILARITY, Signal::Order);
            }
        }
    }

    /// Pairs the procedures that the same pairs call, at least [`MIN_SAME_CALLERS`] of them,
    /// when each is the only one so called on its side among the unpaired procedures and
    /// those a fuzzy round paired against their place; and, among the unpaired procedures
    /// one same pair calls, the decisively most alike (see the module documentation).
    fn same_callers_round(&mut self) {
        // Only the unpaired procedures and those of fuzzy pairs can take part: the others'
        // callers are not looked at (two copies of a program pair entirely by bytes).
        let open_b = |b: usize| self.signals[b].is_none_or(Signal::is_fuzzy);
        let baseline_keys: Vec<Option<Vec<u32>>> = (self.baseline_callers.iter().enumerate())
            .map(|(b, callers)| {
                open_b(b).then(|| {
                    paired_callers(callers, |caller| {
                        self.forward[caller as usize].map(|_| caller)
                    })
                })
            })
            .collect();
        let candidate_keys: Vec<Option<Vec<u32>>> = (self.candidate_callers.iter().enumerate())
            .map(|(c, callers)| {
                self.backward[c]
                    .is_none_or(|b| open_b(b as usize))
                    .then(|| paired_callers(callers, |caller| self.backward[caller as usize]))
            })
            .collect();
        if self.should_stop(self.baseline.len() + self.candidate.len(), false) {
            return;
        }
        // An unpaired procedure takes part with enough callers, or with one when it is not
        // tiny. A pair a fuzzy round made is against its place when its procedures have no
        // paired caller in common: then the place may name another partner. A partner that
        // nothing calls has no place to be against (every caller inlined it, or it is
        // called through pointers).
        let open = |key: &[u32], partner: Option<Partner>, procedure: &Fingerprint| match partner {
            None => {
                key.len() >= MIN_SAME_CALLERS
                    || (!key.is_empty() && procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS)
            }
            Some(Partner { key: other, called }) => {
                let other = other.as_deref().unwrap_or_default();
                called
                    && key.len() >= MIN_SAME_CALLERS
                    && !key.iter().any(|pair| other.binary_search(pair).is_ok())
            }
        };
        let mut groups: BTreeMap<&[u32], (Vec<u32>, Vec<u32>)> = BTreeMap::new();
        for (b, key) in baseline_keys.iter().enumerate() {
            let Some(key) = key else { continue };
            let partner = self.forward[b].map(|c| Partner {
                key: &candidate_keys[c as usize],
                called: !self.candidate_callers[c as usize].is_empty(),
            });
            if open(key, partner, &self.baseline[b]) {
                groups.entry(key).or_default().0.push(b as u32);
            }
        }
        for (c, key) in candidate_keys.iter().enumerate() {
            let Some(key) = key else { continue };
            let partner = self.backward[c].map(|b| Partner {
                key: &baseline_keys[b as usize],
                called: !self.baseline_callers[b as usize].is_empty(),
            });
            if open(key, partner, &self.candidate[c]) {
                groups.entry(key).or_default().1.push(c as u32);
            }
        }
        let mut places = Vec::new();
        for (key, (b, c)) in groups {
            if self.should_stop(b.len() * c.len(), false) {
                return;
            }
            places.extend(self.place_partners(&b, &c, key.len()));
        }
        for (x, y) in places {
            // Undoing a pair looks at every kept best once.
            let undoes = self.forward[x as usize].is_some() || self.backward[y as usize].is_some();
            let units = if undoes {
                self.baseline.len() + self.candidate.len()
            } else {
                1
            };
            if self.should_stop(units, false) {
                return;
            }
            if self.against_call_order(x, y) {
                continue;
            }
            self.unpair(x, y);
            self.pair(x, y, Signal::SameCallers);
        }
    }

    /// Who pairs with whom among procedures called by the same `callers` pairs: the only one
    /// on each side, when at least [`MIN_SAME_CALLERS`] vouch for them (unless they conflict:
    /// [`kinship`] 0); else, for one that a fuzzy round paired against its place, the only
    /// one on the other side that calls its old partner (a function whose body moved into a
    /// new callee keeps its callers); else mutual bests by [`LIKENESS_MARGIN`], at least
    /// [`MIN_SOLE_NEIGHBOUR_SIMILARITY`] alike (and, from one caller, half to twice the
    /// other's size, when one side has only one).
    fn place_partners(&self, b: &[u32], c: &[u32], callers: usize) -> Vec<(u32, u32)> {
        let place_alone = callers >= MIN_SAME_CALLERS;
        // One call site vouches less than several: there, only procedures of comparable
        // size are alike (a new function inlining the old one is not its rewrite).
        let alike = |x: u32, y: u32| {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if place_alone || within_size_window(old, new) {
                kinship(old, new)
            } else {
                0.0
            }
        };
        match (b, c) {
            (&[x], &[y]) if place_alone => {
                return if alike(x, y) > 0.0 {
                    vec![(x, y)]
                } else {
                    vec![]
                };
            }
            // From one caller, the place must single out one procedure on a side.
            _ if !place_alone && b.len() > 1 && c.len() > 1 => return vec![],
            _ if b.len() > MAX_NEIGHBOURS || c.len() > MAX_NEIGHBOURS => return vec![],
            _ => {}
        }
        let mut found = Vec::new();
        let only = |members: &[u32], side: &[Fingerprint], old: u32| -> Option<u32> {
            let mut calling = members
                .iter()
                .filter(|&&m| side[m as usize].callees.contains(&old));
            calling.next().filter(|_| calling.next().is_none()).copied()
        };
        for &x in b {
            if let Some(y) = self.forward[x as usize].and_then(|old| only(c, self.candidate, old)) {
                found.push((x, y));
            }
        }
        for &y in c {
            if let Some(x) = self.backward[y as usize].and_then(|old| only(b, self.baseline, old)) {
                found.push((x, y));
            }
        }
        let (mut rows, mut columns) = (
            vec![Best::default(); b.len()],
            vec![Best::default(); c.len()],
        );
        for (i, &x) in b.iter().enumerate() {
            for (j, &y) in c.iter().enumerate() {
                let score = alike(x, y);
                rows[i].offer(score, j as u32);
                columns[j].offer(score, i as u32);
            }
        }
        for (i, row) in rows.iter().enumerate() {
            if let Some(j) = row.at
                && columns[j as usize].at == Some(i as u32)
                && row.decisive(MIN_SOLE_NEIGHBOUR_SIMILARITY)
                && columns[j as usize].decisive(MIN_SOLE_NEIGHBOUR_SIMILARITY)
            {
                found.push((b[i], c[j as usize]));
            }
        }
        // The first claim on a procedure holds.
        let (mut taken_b, mut taken_c) = (Vec::new(), Vec::new());
        found.retain(|&(x, y)| {
            let free = alike(x, y) > 0.0 && !taken_b.contains(&x) && !taken_c.contains(&y);
            if free {
                taken_b.push(x);
                taken_c.push(y);
            }
            free
        });
        found
    }

    /// Undoes the pairs that hold baseline `b` or candidate `c`.
    fn unpair(&mut self, b: u32, c: u32) {
        let old = (self.backward[c as usize], self.forward[b as usize]);
        for (x, y) in [old.0.map(|x| (x, c)), old.1.map(|y| (b, y))]
            .into_iter()
            .flatten()
        {
            self.forward[x as usize] = None;
            self.backward[y as usize] = None;
            self.signals[x as usize] = None;
            self.queue.retain(|&(left, _)| left != x);
            self.forget_bests_near(x, y);
        }
    }

    /// Forgets the bests the likeness round kept that baseline `b` and candidate `c`, set
    /// free, could change (the round assumes that procedures are only ever paired away), and
    /// their own, so that the round finds what it would find anew. The twins round's links
    /// need nothing: it compares again the procedures whose best changed, and these two.
    fn forget_bests_near(&mut self, b: u32, c: u32) {
        let (old, new) = (&self.baseline[b as usize], &self.candidate[c as usize]);
        self.row_best[b as usize] = None;
        self.column_best[c as usize] = None;
        forget_where_changed(&mut self.row_best, self.baseline, new);
        forget_where_changed(&mut self.column_best, self.candidate, old);
    }

    /// Pairs near-twins by what tells them apart (see the module documentation).
    ///
    /// Runs after a likeness round that paired nothing, so the bests it kept are current.
    fn twins_round(&mut self) {
        for family in self.twin_families() {
            if family.baseline.len() < 2
                || family.candidate.len() < 2
                || family.baseline.len() > MAX_NEIGHBOURS
                || family.candidate.len() > MAX_NEIGHBOURS
                || self.should_stop(family.links.len(), false)
            {
                continue;
            }
            let own_b = own_immediates(self.baseline, &family.baseline);
            let own_c = own_immediates(self.candidate, &family.candidate);
            let place = |members: &[u32], at: u32| members.iter().position(|&m| m == at);
            let mut scores = vec![vec![0.0; family.candidate.len()]; family.baseline.len()];
            for &(b, c) in &family.links {
                if let (Some(i), Some(j)) =
                    (place(&family.baseline, b), place(&family.candidate, c))
                    && !own_b[i].is_empty()
                    && !own_c[j].is_empty()
                {
                    let score = jaccard_multiset(&own_b[i], &own_c[j]);
                    // The place is asked only of links that could decide (it is dearer).
                    if score > 0.0 && !self.against_call_order(b, c) {
                        scores[i][j] = score;
                    }
                }
            }
            for (i, row) in scores.iter().enumerate() {
                let best = row.iter().copied().fold(0.0, f64::max);
                let Some(j) = row.iter().position(|&score| score == best) else {
                    continue;
                };
                let unique_in_row = row.iter().filter(|&&score| score == best).count() == 1;
                let unique_in_column = scores.iter().filter(|other| other[j] >= best).count() == 1;
                if best > 0.0 && unique_in_row && unique_in_column {
                    self.pair(family.baseline[i], family.candidate[j], Signal::Twins);
                }
            }
        }
    }

    /// The families of near-twins among the unpaired procedures, in the order of their first
    /// baseline member.
    fn twin_families(&mut self) -> Vec<Family> {
        let Some(links) = self.twin_links() else {
            return Vec::new();
        };
        // Union-find over baseline indices, then candidate indices after them.
        let offset = self.baseline.len();
        let mut parent: Vec<usize> = (0..offset + self.candidate.len()).collect();
        fn root(parent: &mut [usize], mut at: usize) -> usize {
            while parent[at] != at {
                parent[at] = parent[parent[at]];
                at = parent[at];
            }
            at
        }
        for &(b, c) in &links {
            let (x, y) = (
                root(&mut parent, b as usize),
                root(&mut parent, offset + c as usize),
            );
            parent[x.max(y)] = x.min(y);
        }
        let mut families: BTreeMap<usize, Family> = BTreeMap::new();
        for (b, c) in links {
            let family = families.entry(root(&mut parent, b as usize)).or_default();
            family.baseline.push(b);
            family.candidate.push(c);
            family.links.push((b, c));
        }
        let mut families: Vec<Family> = families.into_values().collect();
        for family in &mut families {
            family.baseline.sort_unstable();
            family.baseline.dedup();
            family.candidate.sort_unstable();
            family.candidate.dedup();
        }
        families
    }

    /// The links between near-twins, sorted; `None` when the comparison stopped.
    ///
    /// A procedure is ambiguous when its best is at least [`MIN_TWIN_LIKENESS`] and its
    /// runner-up within [`LIKENESS_MARGIN`] of it; an ambiguous baseline and an ambiguous
    /// candidate procedure are linked when they are at least [`MIN_TWIN_LIKENESS`] alike and
    /// each within that margin of the other's best. A link depends only on the two
    /// procedures and their bests, so the links found last time are kept for the procedures
    /// whose best has not changed since, and only the others are compared again: the result
    /// is the same as comparing everything anew.
    fn twin_links(&mut self) -> Option<Vec<(u32, u32)>> {
        let ambiguous = |best: &Option<Best>| {
            best.is_some_and(|best| {
                best.score >= MIN_TWIN_LIKENESS
                    && best.runner_up_at.is_some()
                    && best.score - best.runner_up < LIKENESS_MARGIN
            })
        };
        let rows_ambiguous: Vec<bool> = self.row_best.iter().map(ambiguous).collect();
        let columns_ambiguous: Vec<bool> = self.column_best.iter().map(ambiguous).collect();
        // A member is a procedure whose best is a near tie, or whose best's is: of two
        // instances a hair less alike crosswise, one may be decisively the other's best.
        let member = |best: &Option<Best>, ambiguous: bool, others_ambiguous: &[bool]| {
            best.filter(|best| {
                best.score >= MIN_TWIN_LIKENESS
                    && (ambiguous || best.at.is_some_and(|at| others_ambiguous[at as usize]))
            })
            .map(|best| best.score)
        };
        let row_scores: Vec<Option<f64>> = (0..self.baseline.len())
            .map(|b| {
                member(&self.row_best[b], rows_ambiguous[b], &columns_ambiguous)
                    .filter(|_| self.forward[b].is_none())
            })
            .collect();
        let column_scores: Vec<Option<f64>> = (0..self.candidate.len())
            .map(|c| {
                member(&self.column_best[c], columns_ambiguous[c], &rows_ambiguous)
                    .filter(|_| self.backward[c].is_none())
            })
            .collect();
        let memory = std::mem::take(&mut self.twins);
        let remembered = self.remember && memory.row_scores.len() == row_scores.len();
        let known_row = |b: u32| {
            remembered
                && row_scores[b as usize].is_some()
                && memory.row_scores[b as usize] == row_scores[b as usize]
        };
        let known_column = |c: u32| {
            remembered
                && column_scores[c as usize].is_some()
                && memory.column_scores[c as usize] == column_scores[c as usize]
        };
        let mut links: Vec<(u32, u32)> = memory
            .links
            .iter()
            .copied()
            .filter(|&(b, c)| known_row(b) && known_column(c))
            .collect();
        let by_size = |side: &[Fingerprint], scores: &[Option<f64>], keep: &dyn Fn(u32) -> bool| {
            let mut indices: Vec<u32> = (0..side.len() as u32)
                .filter(|&i| scores[i as usize].is_some() && keep(i))
                .collect();
            indices.sort_by_key(|&i| (side[i as usize].size, i));
            indices
        };
        let columns = by_size(self.candidate, &column_scores, &|_| true);
        let known_rows = by_size(self.baseline, &row_scores, &|b| known_row(b));
        let linked = |b: u32, c: u32| {
            let score = kinship(&self.baseline[b as usize], &self.candidate[c as usize]);
            let (row, column) = (row_scores[b as usize], column_scores[c as usize]);
            score >= MIN_TWIN_LIKENESS
                && row.is_some_and(|best| best - score < LIKENESS_MARGIN)
                && column.is_some_and(|best| best - score < LIKENESS_MARGIN)
        };
        // Rows whose best changed, against every column; columns whose best changed, against
        // the rows whose best did not.
        let mut found = Vec::new();
        for b in (0..self.baseline.len() as u32).filter(|&b| row_scores[b as usize].is_some()) {
            if known_row(b) {
                continue;
            }
            let range = size_window(&columns, self.candidate, self.baseline[b as usize].size);
            if self.should_stop(range.len(), false) {
                return None;
            }
            found.extend(
                columns[range]
                    .iter()
                    .filter(|&&c| linked(b, c))
                    .map(|&c| (b, c)),
            );
        }
        for c in (0..self.candidate.len() as u32).filter(|&c| column_scores[c as usize].is_some()) {
            if known_column(c) {
                continue;
            }
            let range = size_window(&known_rows, self.baseline, self.candidate[c as usize].size);
            if self.should_stop(range.len(), false) {
                return None;
            }
            found.extend(
                known_rows[range]
                    .iter()
                    .filter(|&&b| linked(b, c))
                    .map(|&b| (b, c)),
            );
        }
        links.extend(found);
        links.sort_unstable();
        self.twins = TwinMemory {
            row_scores,
            column_scores,
            links: links.clone(),
        };
        Some(links)
    }

    fn neighbours(&mut self, baseline: &[u32], candidate: &[u32]) {
        let b: Vec<u32> = baseline
            .iter()
            .copied()
            .filter(|&i| self.forward[i as usize].is_none())
            .collect();
        let c: Vec<u32> = candidate
            .iter()
            .copied()
            .filter(|&i| self.backward[i as usize].is_none())
            .collect();
        if b.is_empty() || c.is_empty() {
            return;
        }
        // What pairs among them depends on nothing else: the same unpaired neighbours that
        // paired nothing before pair nothing again.
        let quiet = (b, c, self.settle_near_ties);
        if self.quiet_neighbours.contains(&quiet) {
            return;
        }
        let (b, c, _) = &quiet;
        let made = self.made;
        self.pair_neighbours(b, c);
        if self.made == made && !self.stopped {
            self.quiet_neighbours.insert(quiet);
        }
    }

    /// [`Self::neighbours`] among `b` and `c`, unpaired and not empty.
    fn pair_neighbours(&mut self, b: &[u32], c: &[u32]) {
        // Unique instruction hashes among the neighbours.
        let mut groups: BTreeMap<u64, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
        for &i in b {
            groups
                .entry(self.baseline[i as usize].shape)
                .or_default()
                .0
                .push(i);
        }
        for &i in c {
            groups
                .entry(self.candidate[i as usize].shape)
                .or_default()
                .1
                .push(i);
        }
        for (bs, cs) in groups.into_values() {
            if bs.len() == 1 && cs.len() == 1 {
                self.pair(bs[0], cs[0], Signal::CallGraph);
            }
        }
        // Mutual best similarity among the rest.
        let unpaired = |matcher: &Self, b: &[u32], c: &[u32]| -> (Vec<u32>, Vec<u32>) {
            (
                b.iter()
                    .copied()
                    .filter(|&i| matcher.forward[i as usize].is_none())
                    .collect(),
                c.iter()
                    .copied()
                    .filter(|&i| matcher.backward[i as usize].is_none())
                    .collect(),
            )
        };
        let (b, c) = unpaired(self, b, c);
        let first = |side: &[u32]| side[..side.len().min(MAX_NEIGHBOURS)].to_vec();
        self.mutual_best(&first(&b), &first(&c), neighbour_least, Signal::CallGraph);
        // The one unpaired neighbour left on each side, when both are large.
        let (b, c) = unpaired(self, &b, &c);
        if let (&[x], &[y]) = (b.as_slice(), c.as_slice()) {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if is_large(old) && is_large(new) && kinship(old, new) >= MIN_SOLE_NEIGHBOUR_SIMILARITY
            {
                self.pair(x, y, Signal::CallGraph);
            }
        }
    }

    /// Pairs each procedure of `b` with the one of `c` it is most similar to, when that is
    /// the unique best both ways and at least `least` (of the two) alike; a near tie (another
    /// within [`LIKENESS_MARGIN`] of that best, either way) waits, or, when the matcher
    /// settles near ties, goes to the assignment of the greatest total likeness
    /// ([`best_assignment`]), which may give the column to another row within the margin of
    /// its best both ways.
    fn mutual_best(
        &mut self,
        b: &[u32],
        c: &[u32],
        least: fn(&Fingerprint, &Fingerprint) -> f64,
        signal: Signal,
    ) {
        if b.is_empty() || c.is_empty() || self.should_stop(b.len() * c.len(), false) {
            return;
        }
        let scores: Vec<Vec<f64>> = b
            .iter()
            .map(|&i| {
                c.iter()
                    .map(|&j| kinship(&self.baseline[i as usize], &self.candidate[j as usize]))
                    .collect()
            })
            .collect();
        let best_of = |row: &[f64]| -> Option<usize> {
            let mut best: Option<usize> = None;
            for (index, &score) in row.iter().enumerate() {
                if best.is_none_or(|at| score > row[at]) {
                    best = Some(index);
                }
            }
            best
        };
        let mut assignment: Option<Vec<Option<usize>>> = None;
        for (row_index, row) in scores.iter().enumerate() {
            let Some(column) = best_of(row) else { continue };
            let score = row[column];
            // Unique best in its row, and the row is the column's unique best.
            let ties = row.iter().filter(|&&s| s == score).count();
            let column_ties = scores.iter().filter(|r| r[column] >= score).count();
            if ties != 1 || column_ties != 1 {
                continue;
            }
            // Two instances of one template rewritten alike are a hair from each other's old
            // selves: the best alone pairs them crosswise, the total of the two does not.
            let runner_up = |cells: &mut dyn Iterator<Item = f64>| {
                cells.filter(|&s| s < score).fold(0.0, f64::max)
            };
            let near_tie = score - runner_up(&mut row.iter().copied()) < LIKENESS_MARGIN
                || score - runner_up(&mut scores.iter().map(|r| r[column])) < LIKENESS_MARGIN;
            if near_tie && !self.settle_near_ties {
                continue;
            }
            let row_index = if near_tie {
                if assignment.is_none() {
                    if self.should_stop(b.len() * b.len().min(c.len()) * c.len(), false) {
                        return;
                    }
                    assignment = Some(best_assignment(&scores));
                }
                let assigned = assignment.as_deref().unwrap_or_default();
                let Some(holder) = assigned.iter().position(|&at| at == Some(column)) else {
                    continue;
                };
                let held = scores[holder][column];
                let holder_best = scores[holder].iter().copied().fold(0.0, f64::max);
                if score - held >= LIKENESS_MARGIN || holder_best - held >= LIKENESS_MARGIN {
                    continue;
                }
                holder
            } else {
                row_index
            };
            let (x, y) = (b[row_index] as usize, c[column] as usize);
            if scores[row_index][column] >= least(&self.baseline[x], &self.candidate[y]) {
                self.pair(b[row_index], c[column], signal);
            }
        }
    }

    /// What `callees` of one side are, comparable across the sides: the candidate index of a
    /// paired callee, the instruction hash of an unpaired one; sorted.
    fn callee_keys(&self, callees: &[u32], baseline: bool) -> Vec<(bool, u64)> {
        let mut keys: Vec<(bool, u64)> = callees
            .iter()
            .map(|&callee| {
                let index = callee as usize;
                let (partner, side) = if baseline {
                    (self.forward.get(index).copied().flatten(), self.baseline)
                } else {
                    (
                        self.backward.get(index).copied().flatten().map(|_| callee),
                        self.candidate,
                    )
                };
                match partner {
                    Some(candidate) => (true, u64::from(candidate)),
                    None => (false, side.get(index).map_or(0, |p| p.shape)),
                }
            })
            .collect();
        keys.sort_unstable();
        keys
    }

    fn finish(self) -> Comparison {
        let mut pairs = Vec::new();
        for (bi, partner) in self.forward.iter().enumerate() {
            let (Some(ci), Some(signal)) = (*partner, self.signals[bi]) else {
                continue;
            };
            let a = &self.baseline[bi];
            let b = &self.candidate[ci as usize];
            // Callees through the pairs; an unpaired callee by its instructions.
            let mapped = self.callee_keys(&a.callees, true);
            let theirs = self.callee_keys(&b.callees, false);
            let same_bytes = a.bytes == b.bytes && a.size == b.size;
            let changes = if same_bytes && mapped == theirs {
                Changes::default()
            } else {
                // The same instructions in another size differ by padding alone (the nops
                // that align a loop, as many as the procedure's address needs).
                let instructions = a.shape != b.shape;
                Changes {
                    size: a.size != b.size && instructions,
                    instructions,
                    callees: mapped != theirs || a.imports != b.imports,
                    strings: a.strings != b.strings,
                    constants: a.constants != b.constants,
                }
            };
            let (status, similarity) = if changes.any() {
                // A changed pair is never fully similar, even when only a callee differs.
                (Status::Changed, similarity(a, b).min(0.99))
            } else {
                (Status::Identical, 1.0)
            };
            pairs.push(Pair {
                baseline: bi as u32,
                candidate: ci,
                signal,
                status,
                similarity,
                changes,
            });
        }
        let only = |partners: &[Option<u32>]| -> Vec<u32> {
            partners
                .iter()
                .enumerate()
                .filter_map(|(index, partner)| partner.is_none().then_some(index as u32))
                .collect()
        };
        Comparison {
            pairs,
            only_in_baseline: only(&self.forward),
            only_in_candidate: only(&self.backward),
            stopped: self.stopped,
        }
    }
}

/// What the twins round found last time: the best of each ambiguous procedure then, and the
/// links between them.
#[derive(Default)]
struct TwinMemory {
    row_scores: Vec<Option<f64>>,
    column_scores: Vec<Option<f64>>,
    links: Vec<(u32, u32)>,
}

/// Near-twins of the two sides, as the twins round links them.
#[derive(Default)]
struct Family {
    baseline: Vec<u32>,
    candidate: Vec<u32>,
    /// Each baseline member and a candidate member within the margin of both their bests.
    links: Vec<(u32, u32)>,
}

/// Adds the code of `inner`, a callee (index `callee` on its side), to `grown`, as a compiler
/// inlines it: its instructions, immediates, strings, constants and imports, and its callees
/// (but itself) called instead; [`tidied`] sorts the result again.
fn take_in(grown: &mut Fingerprint, inner: &Fingerprint, callee: u32) {
    grown.tokens.extend_from_slice(&inner.tokens);
    grown.mnemonics.extend_from_slice(&inner.mnemonics);
    grown.immediates.extend_from_slice(&inner.immediates);
    grown.strings.extend_from_slice(&inner.strings);
    grown.constants.extend_from_slice(&inner.constants);
    grown.imports.extend(inner.imports.iter().cloned());
    grown.size += inner.size;
    (grown.callees).extend(inner.callees.iter().filter(|&&c| c != callee));
}

/// `grown` after [`take_in`]: its multisets sorted, its sets and callees distinct.
fn tidied(mut grown: Fingerprint) -> Fingerprint {
    grown.tokens.sort_unstable();
    grown.mnemonics.sort_unstable();
    grown.immediates.sort_unstable();
    for set in [&mut grown.strings, &mut grown.constants] {
        set.sort_unstable();
        set.dedup();
    }
    grown.imports.sort();
    grown.imports.dedup();
    let mut seen = BTreeSet::new();
    grown.callees.retain(|&callee| seen.insert(callee));
    grown
}

/// The immediates of each of `members` that not every one of them holds (multisets).
fn own_immediates(side: &[Fingerprint], members: &[u32]) -> Vec<Vec<u32>> {
    let mut common = side[members[0] as usize].immediates.clone();
    for &member in &members[1..] {
        common = multiset_difference(
            &common,
            &multiset_difference(&common, &side[member as usize].immediates),
        );
    }
    members
        .iter()
        .map(|&member| multiset_difference(&side[member as usize].immediates, &common))
        .collect()
}

/// `a` without the elements of `b` (sorted multisets: each element of `b` removes one).
fn multiset_difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut rest, mut j) = (Vec::with_capacity(a.len()), 0);
    for &value in a {
        while j < b.len() && b[j] < value {
            j += 1;
        }
        if j < b.len() && b[j] == value {
            j += 1;
        } else {
            rest.push(value);
        }
    }
    rest
}

/// The assignment of rows to distinct columns (one row to one column) with the greatest total
/// score: each row's column, if it has one (Kuhn–Munkres, in O(n²·m) for n rows of m
/// columns, n ≤ m, the other way round transposed).
fn best_assignment(scores: &[Vec<f64>]) -> Vec<Option<usize>> {
    let rows = scores.len();
    let columns = scores.first().map_or(0, Vec::len);
    if rows > columns {
        let transposed: Vec<Vec<f64>> = (0..columns)
            .map(|column| scores.iter().map(|row| row[column]).collect())
            .collect();
        let mut by_row = vec![None; rows];
        for (column, row) in best_assignment(&transposed).into_iter().enumerate() {
            if let Some(row) = row {
                by_row[row] = Some(column);
            }
        }
        return by_row;
    }
    // Potentials `row_potential`, `column_potential` and, per column, the row holding it
    // (`holder`, 1-based, 0 for none) and the column it was reached from; column 0 is virtual.
    let mut row_potential = vec![0.0; rows + 1];
    let mut column_potential = vec![0.0; columns + 1];
    let mut holder = vec![0usize; columns + 1];
    let mut reached_from = vec![0usize; columns + 1];
    for row in 1..=rows {
        holder[0] = row;
        let mut column = 0;
        let mut least_slack = vec![f64::INFINITY; columns + 1];
        let mut visited = vec![false; columns + 1];
        loop {
            visited[column] = true;
            let from_row = holder[column];
            let (mut delta, mut next) = (f64::INFINITY, 0);
            for j in 1..=columns {
                if visited[j] {
                    continue;
                }
                let slack =
                    -scores[from_row - 1][j - 1] - row_potential[from_row] - column_potential[j];
                if slack < least_slack[j] {
                    (least_slack[j], reached_from[j]) = (slack, column);
                }
                if least_slack[j] < delta {
                    (delta, next) = (least_slack[j], j);
                }
            }
            for j in 0..=columns {
                if visited[j] {
                    row_potential[holder[j]] += delta;
                    column_potential[j] -= delta;
                } else {
                    least_slack[j] -= delta;
                }
            }
            column = next;
            if holder[column] == 0 {
                break;
            }
        }
        while column != 0 {
            let previous = reached_from[column];
            holder[column] = holder[previous];
            column = previous;
        }
    }
    let mut by_row = vec![None; rows];
    for (column, &row) in holder.iter().enumerate().skip(1) {
        if row != 0 {
            by_row[row - 1] = Some(column - 1);
        }
    }
    by_row
}

/// The present partner of a procedure of a fuzzy pair, as the callers round sees it: its
/// paired callers (its key in that round) and whether anything calls it at all.
#[derive(Clone, Copy)]
struct Partner<'a> {
    key: &'a Option<Vec<u32>>,
    called: bool,
}

/// The best and second-best similarity one procedure has met (in the likeness round, or in
/// a group of the callers round), and with which procedures of the other side.
#[derive(Clone, Copy, Default)]
struct Best {
    score: f64,
    at: Option<u32>,
    runner_up: f64,
    runner_up_at: Option<u32>,
}

impl Best {
    fn offer(&mut self, score: f64, at: u32) {
        if self.at.is_none() || score > self.score {
            if self.at.is_some() {
                (self.runner_up, self.runner_up_at) = (self.score, self.at);
            }
            (self.score, self.at) = (score, Some(at));
        } else if self.runner_up_at.is_none() || score > self.runner_up {
            (self.runner_up, self.runner_up_at) = (score, Some(at));
        }
    }

    /// Whether this is still the best and runner-up among the other side's unpaired
    /// procedures: neither has been paired since (`partners` of the other side).
    fn holds(&self, partners: &[Option<u32>]) -> bool {
        let unpaired = |at: Option<u32>| at.is_none_or(|index| partners[index as usize].is_none());
        unpaired(self.at) && unpaired(self.runner_up_at)
    }

    /// Whether this best of `row` and `column`'s best are each other, both decisive at
    /// [`MIN_LIKENESS`] (the likeness rounds' pair).
    fn mutual(&self, row: u32, column: &Best) -> bool {
        self.decisive(MIN_LIKENESS) && column.at == Some(row) && column.decisive(MIN_LIKENESS)
    }

    /// At least `least` alike, and by [`LIKENESS_MARGIN`] more than to anything else.
    fn decisive(&self, least: f64) -> bool {
        let runner_up = if self.runner_up_at.is_some() {
            self.runner_up
        } else {
            0.0
        };
        self.score >= least && self.score - runner_up >= LIKENESS_MARGIN
    }
}

/// What a unique round groups by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Name(String),
    Hash(u64, u64),
    Anchors(Vec<String>, Vec<u64>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn procedure(address: u64, shape: u64, tokens: Vec<u32>, callees: Vec<u32>) -> Fingerprint {
        let mut tokens = tokens;
        tokens.sort_unstable();
        let mut mnemonics: Vec<u16> = tokens.iter().map(|&token| (token % 13) as u16).collect();
        mnemonics.sort_unstable();
        Fingerprint {
            address,
            name: None,
            size: tokens.len() as u64 * 4,
            bytes: shape ^ address,
            shape,
            tokens: tokens.clone(),
            mnemonics,
            callees,
            imports: Vec::new(),
            strings: Vec::new(),
            constants: Vec::new(),
            // Each made-up instruction holds one immediate of its own: what an edit changes
            // and a new register allocation keeps.
            immediates: tokens.clone(),
            slots: Vec::new(),
            tables: Vec::new(),
        }
    }

    fn never() -> impl FnMut() -> bool {
        || false
    }

    #[test]
    fn a_program_compared_with_itself_is_identical_throughout() {
        let side = vec![
            procedure(0x10, 1, vec![1, 2, 3], vec![1]),
            procedure(0x20, 2, vec![4, 5], vec![]),
            procedure(0x30, 3, vec![6], vec![0, 1]),
        ];
        let result = compare(&side, &side, &mut never());
        assert_eq!(result.pairs.len(), 3);
        assert!(result.only_in_baseline.is_empty() && result.only_in_candidate.is_empty());
        for pair in &result.pairs {
            assert_eq!(pair.baseline, pair.candidate);
            assert_eq!(pair.status, Status::Identical);
            assert_eq!(pair.similarity, 1.0);
        }
    }

    #[test]
    fn a_moved_procedure_pairs_by_its_instruction_hash() {
        let baseline = vec![procedure(0x10, 7, vec![1, 2], vec![])];
        let candidate = vec![procedure(0x90, 7, vec![1, 2], vec![])];
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(result.pairs[0].signal, Signal::InstructionHash);
        assert_eq!(result.pairs[0].status, Status::Identical);
    }

    #[test]
    fn a_changed_callee_pairs_through_its_caller() {
        // main (shape 1) calls f; f changed (shape 2 -> 3) but is mostly alike.
        let baseline = vec![
            procedure(0x10, 1, vec![1, 2, 3], vec![1]),
            procedure(0x20, 2, vec![10, 11, 12, 13], vec![]),
            procedure(0x30, 5, vec![50, 51, 52, 53], vec![]),
        ];
        let candidate = vec![
            procedure(0x10, 1, vec![1, 2, 3], vec![1]),
            procedure(0x20, 3, vec![10, 11, 12, 14], vec![]),
            procedure(0x40, 6, vec![60, 61], vec![]),
        ];
        let result = compare(&baseline, &candidate, &mut never());
        let changed = result
            .pairs
            .iter()
            .find(|pair| pair.baseline == 1)
            .expect("f is paired");
        assert_eq!(changed.candidate, 1);
        assert_eq!(changed.signal, Signal::CallGraph);
        assert_eq!(changed.status, Status::Changed);
        assert!(changed.changes.instructions);
        assert!(changed.similarity > 0.5 && changed.similarity < 1.0);
        // main calls a changed f: main's instructions are the same, so it is identical.
        assert_eq!(result.pairs[0].status, Status::Identical);
        assert_eq!(result.only_in_baseline, vec![2]);
        assert_eq!(result.only_in_candidate, vec![2]);
    }

    /// `f` rewritten to a likeness in `band`: other instructions and other operations.
    fn rewritten(f: &Fingerprint, band: std::ops::Range<f64>) -> Fingerprint {
        (1..f.tokens.len())
            .map(|changed| {
                let mut g = edited(f, changed);
                let kept = g.mnemonics.len() - changed;
                g.mnemonics.truncate(kept);
                g.mnemonics.extend((0..changed as u16).map(|i| 500 + i));
                g
            })
            .find(|g| band.contains(&similarity(f, g)))
            .expect("a rewrite in the band")
    }

    /// main calls f, rewritten to a likeness in `band`, and with `another_callee` also a
    /// procedure that each side replaced by an unrelated one.
    fn callee_rewritten(
        length: u32,
        band: std::ops::Range<f64>,
        another_callee: bool,
    ) -> Comparison {
        let f = body(0x20, 9, length, vec![]);
        let g = rewritten(&f, band);
        let callees = if another_callee { vec![1, 2] } else { vec![1] };
        let mut main = procedure(0x10, 1, vec![1, 2, 3], callees);
        main.name = Some("main".to_owned());
        let mut baseline = vec![main.clone(), f];
        let mut candidate = vec![main, g];
        if another_callee {
            baseline.push(foreign(0x400, 3, length as u16));
            candidate.push(foreign(0x400, 4, length as u16 / 3));
        }
        compare(&baseline, &candidate, &mut never())
    }

    #[test]
    fn a_large_rewritten_callee_pairs_from_a_lower_likeness_than_a_small_one() {
        let band = MIN_LARGE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY;
        let large = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16, band.clone(), true);
        let pair = large.pairs.iter().find(|pair| pair.baseline == 1);
        assert_eq!(
            pair.map(|pair| (pair.candidate, pair.signal)),
            Some((1, Signal::CallGraph)),
            "{large:?}"
        );
        assert_eq!(
            large.only_in_baseline,
            [2],
            "the unrelated callee stays apart"
        );
        // A small one stays apart, and the callers round leaves it too: one caller with two
        // unpaired callees on each side singles out neither.
        let small = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 / 2, band, true);
        assert_eq!(small.only_in_baseline, [1, 2], "{small:?}");
    }

    #[test]
    fn the_one_large_callee_left_on_each_side_pairs_from_a_lower_likeness_still() {
        let band = MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_LARGE_NEIGHBOUR_SIMILARITY;
        let large = callee_rewritten(
            LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16,
            band.clone(),
            false,
        );
        let pair = large.pairs.iter().find(|pair| pair.baseline == 1);
        assert_eq!(
            pair.map(|pair| (pair.candidate, pair.signal)),
            Some((1, Signal::CallGraph)),
            "{large:?}"
        );
        // Not when another unpaired callee is left beside it (nor then by the callers round,
        // from one caller), nor when it is small: then the callers round pairs it, by a
        // decisive best.
        let beside = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16, band.clone(), true);
        assert_eq!(beside.only_in_baseline, [1, 2], "{beside:?}");
        let small = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 / 2, band, false);
        assert_eq!(
            partner(&small, 1),
            Some((1, Signal::SameCallers)),
            "{small:?}"
        );
    }

    #[test]
    fn pure_procedures_that_share_no_constant_are_different_functions() {
        // main calls f; f is rewritten a little, and its constants decide.
        let with = |constants: [u64; 3], imports: &[&str]| {
            let main = procedure(0x10, 1, vec![1, 2, 3], vec![1]);
            let mut f = procedure(0x20, 2, vec![10, 11, 12, 13, 14, 15, 16, 17], vec![]);
            f.constants = constants.to_vec();
            f.constants.sort_unstable();
            f.imports = imports.iter().map(|&name| name.to_owned()).collect();
            vec![main, f]
        };
        let paired = |baseline: Vec<Fingerprint>, candidate: Vec<Fingerprint>| {
            let mut candidate = candidate;
            candidate[1] = Fingerprint {
                constants: candidate[1].constants.clone(),
                imports: candidate[1].imports.clone(),
                ..edited(&baseline[1], 1)
            };
            assert!(similarity(&baseline[1], &candidate[1]) >= MIN_NEIGHBOUR_SIMILARITY);
            let result = compare(&baseline, &candidate, &mut never());
            result.pairs.iter().any(|pair| pair.baseline == 1)
        };
        let brackets = [500_000, 200_000, 90_000];
        let fees = [900_000, 300_000, 50_000];
        assert!(!paired(with(brackets, &[]), with(fees, &[])));
        assert!(paired(
            with(brackets, &[]),
            with([900_000, 300_000, 90_000], &[])
        ));
        // A procedure that calls passes numbers that move between releases (line numbers
        // of asserts): its constants alone do not tell it apart.
        assert!(paired(
            with(brackets, &["__assert_fail"]),
            with(fees, &["__assert_fail"])
        ));
    }

    #[test]
    fn a_name_unique_on_both_sides_pairs_first() {
        let mut a = procedure(0x10, 1, vec![1], vec![]);
        a.name = Some("parse".to_owned());
        let mut b = procedure(0x10, 9, vec![9], vec![]);
        b.name = Some("parse".to_owned());
        let result = compare(&[a], &[b], &mut never());
        assert_eq!(result.pairs[0].signal, Signal::SymbolName);
        assert_eq!(result.pairs[0].status, Status::Changed);
        assert_eq!(result.pairs[0].changes.names(), vec!["instructions"]);
    }

    #[test]
    fn duplicated_code_is_not_guessed() {
        let side = vec![
            procedure(0x10, 1, vec![1], vec![]),
            procedure(0x20, 1, vec![1], vec![]),
        ];
        let mut other = side.clone();
        for p in &mut other {
            p.bytes ^= 0xff;
        }
        let result = compare(&side, &other, &mut never());
        assert!(result.pairs.is_empty());
        assert_eq!(result.only_in_baseline, vec![0, 1]);
    }

    #[test]
    fn a_stop_signal_ends_the_rounds_and_says_so() {
        let side = vec![procedure(0x10, 1, vec![1], vec![])];
        let result = compare(&side, &side, &mut || true);
        assert!(result.stopped);
        assert!(result.pairs.is_empty());
        assert_eq!(result.only_in_baseline, vec![0]);
    }

    /// A procedure of `length` instructions drawn from `seed`, with `strings`.
    fn body(address: u64, seed: u32, length: u32, strings: Vec<u64>) -> Fingerprint {
        let tokens: Vec<u32> = (0..length).map(|i| (seed * 31 + i * 7) % 97).collect();
        let mut p = procedure(
            address,
            u64::from(seed) << 8 | u64::from(length),
            tokens,
            vec![],
        );
        p.strings = strings;
        p
    }

    /// `p` with its last `changed` instructions replaced: another shape, mostly alike.
    fn edited(p: &Fingerprint, changed: usize) -> Fingerprint {
        let mut q = p.clone();
        let keep = q.tokens.len() - changed;
        q.tokens.truncate(keep);
        q.tokens.extend((0..changed as u32).map(|i| 1_000 + i));
        q.tokens.sort_unstable();
        q.mnemonics = q.tokens.iter().map(|&t| (t % 13) as u16).collect();
        q.mnemonics.sort_unstable();
        q.immediates = q.tokens.clone();
        q.shape ^= 0x5555;
        q.bytes ^= 0x5555;
        q
    }

    /// `callers` procedures named alike on both sides (so they pair by name), each calling the
    /// first `called.0` of `baseline` (on the candidate side, `called.1` of `candidate`),
    /// which follow them.
    fn under_callers(
        callers: usize,
        called: (usize, usize),
        baseline: Vec<Fingerprint>,
        candidate: Vec<Fingerprint>,
    ) -> Comparison {
        let side = |called: usize, rest: Vec<Fingerprint>| {
            let callees: Vec<u32> = (callers..callers + called).map(|i| i as u32).collect();
            let mut side: Vec<Fingerprint> = (0..callers)
                .map(|i| {
                    let at = i as u64 * 0x10;
                    let mut caller = procedure(0x10 + at, 100 + at, vec![1, 2, 3], callees.clone());
                    caller.name = Some(format!("caller{i}"));
                    caller
                })
                .collect();
            side.extend(rest);
            side
        };
        compare(
            &side(called.0, baseline),
            &side(called.1, candidate),
            &mut never(),
        )
    }

    /// A procedure of `length` instructions and operations that no other procedure has.
    fn foreign(address: u64, seed: u16, length: u16) -> Fingerprint {
        let tokens = (0..length)
            .map(|i| u32::from(seed) * 10_000 + u32::from(i))
            .collect();
        let mut p = procedure(address, 900 + u64::from(seed), tokens, vec![]);
        p.mnemonics = (0..length).map(|i| seed * 1_000 + i).collect();
        p
    }

    fn partner(result: &Comparison, baseline: u32) -> Option<(u32, Signal)> {
        let pair = result.pairs.iter().find(|pair| pair.baseline == baseline)?;
        Some((pair.candidate, pair.signal))
    }

    #[test]
    fn a_procedure_rewritten_past_likeness_pairs_by_the_pairs_that_call_it() {
        let f = body(0x400, 9, 40, vec![]);
        let g = foreign(0x400, 1, 30);
        assert!(similarity(&f, &g) < MIN_SOLE_NEIGHBOUR_SIMILARITY);
        let two = under_callers(2, (1, 1), vec![f.clone()], vec![g.clone()]);
        assert_eq!(partner(&two, 2), Some((2, Signal::SameCallers)), "{two:?}");
        // One caller is one call site, where a removed and an added function meet as well:
        // it needs a likeness too.
        let one = under_callers(1, (1, 1), vec![f.clone()], vec![g.clone()]);
        assert_eq!(one.only_in_baseline, [1], "{one:?}");
        // Two that strings tell apart are not paired by their place either.
        let (mut f, mut g) = (f, g);
        (f.strings, g.strings) = (vec![1], vec![2]);
        let told_apart = under_callers(2, (1, 1), vec![f], vec![g]);
        assert_eq!(told_apart.only_in_baseline, [2], "{told_apart:?}");
    }

    /// A small procedure and its rewrite, too unlike for the call-graph round (which asks
    /// small neighbours for more) and alike enough for a decisive best in their place.
    fn small_rewrite() -> (Fingerprint, Fingerprint) {
        let f = body(0x400, 9, 40, vec![]);
        let g = rewritten(
            &f,
            MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_LARGE_NEIGHBOUR_SIMILARITY,
        );
        (f, g)
    }

    #[test]
    fn of_two_in_one_place_the_decisively_most_alike_pairs() {
        let (f, g) = small_rewrite();
        let unrelated = foreign(0x500, 2, 30);
        assert!(similarity(&f, &unrelated) < similarity(&f, &g) - LIKENESS_MARGIN);
        // From one caller as from two (the procedures follow the callers).
        for callers in [1, 2] {
            let (f, g, at) = (f.clone(), g.clone(), callers as u32);
            let decided = under_callers(
                callers,
                (1, 2),
                vec![f.clone()],
                vec![g.clone(), unrelated.clone()],
            );
            assert_eq!(
                partner(&decided, at),
                Some((at, Signal::SameCallers)),
                "{decided:?}"
            );
            // Two as alike stay apart.
            let mut copy = g.clone();
            copy.address = 0x500;
            let tied = under_callers(callers, (1, 2), vec![f], vec![g, copy]);
            assert_eq!(tied.only_in_baseline, [at], "{tied:?}");
        }
    }

    #[test]
    fn from_one_caller_only_procedures_of_a_comparable_size_pair_and_not_tiny_ones() {
        let (f, g) = small_rewrite();
        // Three times the size is another function that took it in, unless two callers say
        // otherwise.
        let mut grown = g.clone();
        grown.size = f.size * 3;
        assert!(similarity(&f, &grown) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
        let inlined = under_callers(1, (1, 1), vec![f.clone()], vec![grown.clone()]);
        assert_eq!(inlined.only_in_baseline, [1], "{inlined:?}");
        let two = under_callers(2, (1, 1), vec![f], vec![grown]);
        assert_eq!(partner(&two, 2), Some((2, Signal::SameCallers)), "{two:?}");
        // Tiny procedures all look alike: one call site does not pair them.
        let tiny = body(0x400, 9, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
        let tiny_rewritten = rewritten(
            &tiny,
            MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
        );
        let small = under_callers(1, (1, 1), vec![tiny], vec![tiny_rewritten]);
        assert_eq!(small.only_in_baseline, [1], "{small:?}");
    }

    #[test]
    fn a_function_whose_body_moved_into_a_new_callee_keeps_its_callers() {
        // f's body moved into g, a new function; f is now a wrapper that calls g, in f's
        // place; m is new too, and called from the same place.
        let f = body(0x400, 9, 60, vec![]);
        let mut g = edited(&f, 3);
        g.address = 0x600;
        let wrapper = procedure(0x400, 77, vec![5, 6], vec![4]);
        let m = foreign(0x500, 3, 20);
        let moved = under_callers(
            2,
            (1, 2),
            vec![f.clone()],
            vec![wrapper.clone(), m.clone(), g.clone()],
        );
        assert_eq!(
            partner(&moved, 2),
            Some((2, Signal::SameCallers)),
            "{moved:?}"
        );
        assert_eq!(moved.only_in_candidate, [3, 4], "{moved:?}");
        // From one caller, the likeness holds.
        let one = under_callers(1, (1, 2), vec![f], vec![wrapper, m, g]);
        assert_eq!(partner(&one, 1), Some((3, Signal::Likeness)), "{one:?}");
    }

    #[test]
    fn a_fuzzy_pair_whose_partner_nothing_calls_keeps_it() {
        // The two callers called f; in the candidate they call w, which inlined f's edit
        // (f's code and more), and nothing calls f's edit any more (every caller inlined
        // it; it stays for its symbol). Its place is unknown, not another.
        let f = body(0x400, 9, 40, vec![]);
        let mut f_edited = edited(&f, 3);
        f_edited.address = 0x600;
        let mut w = foreign(0x500, 4, 30);
        w.tokens.extend_from_slice(&f_edited.tokens);
        w.tokens.sort_unstable();
        w.size = w.tokens.len() as u64 * 4;
        assert!(similarity(&f, &w) > 0.0);
        let inlined = under_callers(2, (1, 1), vec![f.clone()], vec![w, f_edited.clone()]);
        assert_eq!(
            partner(&inlined, 2),
            Some((3, Signal::Likeness)),
            "{inlined:?}"
        );
        assert_eq!(inlined.only_in_candidate, [2], "{inlined:?}");
        // Called by another procedure, f's edit has a place, and the pairs calling f and w
        // name theirs (the moved-body test above).
    }

    /// Three instances of one template (a hash over 4, 5 or 6 bytes), each rewritten alike in
    /// the candidate and laid out in reverse: each is about as alike to all three of the
    /// other side (within [`LIKENESS_MARGIN`]), and only `tell_apart` (each instance's own
    /// immediate) can decide.
    fn twins(tell_apart: bool) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
        let template = body(0, 7, 40, vec![]);
        let instance = |k: u64, rewritten: bool| {
            let mut p = if rewritten {
                edited(&template, 12)
            } else {
                template.clone()
            };
            p.address = if rewritten {
                0x400 - 0x100 * k
            } else {
                0x100 * k
            };
            (p.shape, p.bytes) = (p.shape ^ k, p.bytes ^ k);
            if tell_apart {
                p.immediates.push(100 + k as u32);
                p.immediates.sort_unstable();
            }
            p
        };
        (
            (1..=3).map(|k| instance(k, false)).collect(),
            (1..=3).rev().map(|k| instance(k, true)).collect(),
        )
    }

    #[test]
    fn near_twins_pair_by_the_immediates_that_tell_them_apart() {
        let (baseline, candidate) = twins(true);
        // The candidate is laid out in reverse: baseline 0 is candidate 2's twin.
        let twin = similarity(&baseline[0], &candidate[2]);
        assert!((MIN_TWIN_LIKENESS..1.0).contains(&twin), "{twin}");
        for (b, c) in [(0, 0), (0, 1), (1, 2), (2, 2)] {
            let other = similarity(&baseline[b], &candidate[c]);
            assert!(
                other < twin && twin - other < LIKENESS_MARGIN,
                "{other} {twin}"
            );
        }
        let result = compare(&baseline, &candidate, &mut never());
        let mut made: Vec<(u32, u32, Signal)> = result
            .pairs
            .iter()
            .map(|pair| (pair.baseline, pair.candidate, pair.signal))
            .collect();
        made.sort_unstable();
        assert_eq!(
            made,
            [
                (0, 2, Signal::Twins),
                (1, 1, Signal::Twins),
                (2, 0, Signal::Twins)
            ]
        );
        // Twins that nothing tells apart stay unpaired.
        let (baseline, candidate) = twins(false);
        let result = compare(&baseline, &candidate, &mut never());
        assert!(result.pairs.is_empty(), "{:?}", result.pairs);
        assert_eq!(result.only_in_baseline, [0, 1, 2]);
    }

    #[test]
    fn near_twins_of_which_one_is_decisively_the_others_best_pair_by_what_tells_them_apart() {
        // Two instances of one template (20 instructions), each with 5 of its own; the second
        // and the first's rewrite hold 5 more alike. The first and its rewrite are decisively
        // each other's row best, the rewrite's column best is a near tie (the second is
        // within the margin), as zstd's `HcFindBestMatch_noDict_5` and `_6` are with GCC.
        let pool = |pool: u32, count: u32| (0..count).map(move |i| pool * 10_000 + i);
        let of = |address: u64, shape: u64, pools: &[(u32, u32)]| {
            let tokens = pools.iter().flat_map(|&(p, n)| pool(p, n)).collect();
            procedure(address, shape, tokens, vec![])
        };
        let (template, first, second, shared) = ((1, 20), (5, 5), (6, 5), (9, 5));
        let baseline = [
            of(0x100, 1, &[template, first]),
            of(0x200, 2, &[template, second, shared]),
        ];
        let candidate = [
            of(0x100, 3, &[template, first, shared]),
            of(0x200, 4, &[template, second]),
        ];
        let s = |b: usize, c: usize| similarity(&baseline[b], &candidate[c]);
        assert!(s(0, 0) - s(0, 1) >= LIKENESS_MARGIN && s(1, 1) - s(0, 1) >= LIKENESS_MARGIN);
        assert!(s(0, 0) - s(1, 0) < LIKENESS_MARGIN && s(1, 1) - s(1, 0) < LIKENESS_MARGIN);
        let result = compare(&baseline, &candidate, &mut never());
        let made: Vec<(u32, u32, Signal)> = (result.pairs.iter())
            .map(|pair| (pair.baseline, pair.candidate, pair.signal))
            .collect();
        assert_eq!(made, [(0, 0, Signal::Twins), (1, 1, Signal::Twins)]);
    }

    #[test]
    fn near_twins_called_in_different_places_stay_apart() {
        // The twins above after six kept procedures, all called by `main`, which calls the
        // first instance after the second kept one, and in the candidate four calls later
        // (indices: 0 `main`, 1 to 6 the kept, 7 to 9 the twins, the candidate's reversed).
        let (baseline_twins, candidate_twins) = twins(true);
        let side = |twins: Vec<Fingerprint>, calls: &[u32]| {
            let mut side = kept_and(twins[0].clone());
            side.extend(twins[1..].iter().cloned());
            for (i, p) in side[6..].iter_mut().enumerate() {
                p.address = 0x800 + 0x100 * i as u64;
            }
            calling_in_order(side, calls)
        };
        let baseline = side(baseline_twins, &[1, 2, 7, 3, 4, 5, 6, 8, 9]);
        let in_place = |calls: &[u32]| {
            let candidate = side(candidate_twins.clone(), calls);
            compare(&baseline, &candidate, &mut never())
        };
        let moved = in_place(&[1, 2, 3, 4, 5, 6, 8, 7, 9]);
        assert_eq!(partner(&moved, 8), Some((8, Signal::Twins)), "{moved:?}");
        assert_eq!(partner(&moved, 9), Some((7, Signal::Twins)), "{moved:?}");
        assert_eq!(partner(&moved, 7), None, "{moved:?}");
        assert_eq!(moved.only_in_candidate, [9], "{moved:?}");
        // Called in its place, the first instance pairs as well: the last one left of
        // `main`'s callees on each side.
        let kept = in_place(&[1, 2, 9, 3, 4, 5, 6, 8, 7]);
        assert_eq!(partner(&kept, 7), Some((9, Signal::CallGraph)), "{kept:?}");
    }

    #[test]
    fn a_near_tie_among_the_callees_of_a_pair_waits_for_what_tells_twins_apart() {
        // The twins above, called by one pair, and the first a hair more alike to the wrong
        // instance (three instructions more, which both have, none with an immediate): the mutual best of the call-graph
        // round would pair them, the immediates tell them apart.
        let (mut baseline, mut candidate) = twins(true);
        for p in [&mut baseline[0], &mut candidate[1]] {
            p.tokens.extend([5_000, 5_001, 5_002]);
            p.mnemonics.extend([5, 6, 7]);
            p.mnemonics.sort_unstable();
            p.size += 12;
        }
        let s = |b: usize, c: usize| similarity(&baseline[b], &candidate[c]);
        assert!(s(0, 1) >= MIN_NEIGHBOUR_SIMILARITY);
        assert!(s(0, 1) > s(0, 2) && s(0, 1) - s(0, 2) < LIKENESS_MARGIN);
        assert!(s(0, 1) > s(1, 1) && s(0, 1) > s(2, 1));
        let result = under_callers(1, (3, 3), baseline, candidate);
        let made: Vec<(u32, Option<(u32, Signal)>)> =
            (1..=3).map(|b| (b, partner(&result, b))).collect();
        assert_eq!(
            made,
            [
                (1, Some((3, Signal::Twins))),
                (2, Some((2, Signal::Twins))),
                (3, Some((1, Signal::Twins)))
            ],
            "{result:?}"
        );
    }

    /// A procedure of the given parts: `(pool, from, count)` takes instructions `from..from +
    /// count` of a pool of instructions no other pool shares.
    fn of_pools(address: u64, parts: &[(u32, u32, u32)]) -> Fingerprint {
        let tokens = (parts.iter())
            .flat_map(|&(pool, from, count)| (from..from + count).map(move |i| pool * 10_000 + i))
            .collect();
        let shape = (parts.iter()).fold(address, |shape, &(pool, from, count)| {
            shape * 31 + u64::from(pool * 1_000_000 + from * 1_000 + count)
        });
        procedure(address, shape, tokens, vec![])
    }

    #[test]
    fn of_two_template_instances_a_near_tie_goes_to_the_assignment_of_the_neighbours() {
        // Two instances of one template (zstd's `lazy2`, `lazy2_row`), both rewritten: the
        // new `lazy2` is a hair more alike to the old `lazy2_row` than to its old self, and
        // the new `lazy2_row` is unlike the old `lazy2`.
        let lazy = of_pools(0x400, &[(1, 0, 50), (2, 0, 30)]);
        let row = of_pools(0x800, &[(1, 0, 32), (3, 0, 26), (4, 0, 22)]);
        let new_lazy = of_pools(0x400, &[(1, 0, 50), (3, 0, 30)]);
        let new_row = of_pools(0x800, &[(4, 0, 22), (5, 0, 58)]);
        let s = |a: &Fingerprint, b: &Fingerprint| similarity(a, b);
        assert!(s(&row, &new_lazy) > s(&lazy, &new_lazy));
        assert!(s(&row, &new_lazy) - s(&lazy, &new_lazy) < LIKENESS_MARGIN);
        assert!(s(&row, &new_lazy) > s(&row, &new_row));
        assert!(s(&lazy, &new_lazy) + s(&row, &new_row) > s(&row, &new_lazy) + s(&lazy, &new_row));
        assert!(
            s(&lazy, &new_row) >= MIN_LARGE_NEIGHBOUR_SIMILARITY,
            "the greedy pairs it"
        );
        let result = under_callers(1, (2, 2), vec![lazy, row], vec![new_lazy, new_row]);
        assert_eq!(
            partner(&result, 1),
            Some((1, Signal::CallGraph)),
            "{result:?}"
        );
        assert_eq!(
            partner(&result, 2),
            Some((2, Signal::CallGraph)),
            "{result:?}"
        );
    }

    #[test]
    fn a_changed_procedure_without_neighbours_pairs_by_likeness() {
        let old = body(0x10, 1, 40, vec![]);
        let other = body(0x100, 2, 12, vec![]);
        let result = compare(
            &[old.clone(), other.clone()],
            &[edited(&old, 4), body(0x200, 3, 13, vec![])],
            &mut never(),
        );
        let pair = result
            .pairs
            .iter()
            .find(|p| p.baseline == 0)
            .expect("paired");
        assert_eq!((pair.candidate, pair.signal), (0, Signal::Likeness));
        assert_eq!(pair.status, Status::Changed);
    }

    #[test]
    fn a_new_register_allocation_is_more_alike_than_a_sibling_with_other_immediates() {
        // 40 instructions, half of them with an immediate. The new allocation keeps every
        // operation and immediate and changes every register (so every masked instruction);
        // the sibling keeps the registers and has other immediates (another hash prime, other
        // shifts), so it keeps the other half of the instructions.
        let instruction =
            |i: u32, register: u32, immediate: u32| (i, register * 1_000 + i + 100 * immediate);
        let of = |address: u64, register: u32, immediates: u32| {
            let (operations, tokens): (Vec<u32>, Vec<u32>) = (0..40)
                .map(|i| instruction(i, register, if i % 2 == 0 { immediates } else { 0 }))
                .unzip();
            let mut p = procedure(address, address, tokens, vec![]);
            p.mnemonics = operations.iter().map(|&o| (o % 13) as u16).collect();
            p.mnemonics.sort_unstable();
            p.immediates = (0..20).map(|i| immediates * 100 + i).collect();
            p
        };
        let (old, reallocated, sibling) = (of(0x10, 1, 1), of(0x400, 2, 1), of(0x200, 1, 2));
        assert_eq!(jaccard_multiset(&old.tokens, &reallocated.tokens), 0.0);
        assert_eq!(jaccard_multiset(&old.tokens, &sibling.tokens), 20.0 / 60.0);
        assert!(similarity(&old, &reallocated) >= similarity(&old, &sibling) + LIKENESS_MARGIN);
        let result = compare(&[old], &[sibling, reallocated], &mut never());
        assert_eq!(
            partner(&result, 0),
            Some((1, Signal::Likeness)),
            "{result:?}"
        );
    }

    #[test]
    fn a_callee_that_the_other_version_inlined_does_not_pair_with_the_caller_holding_it() {
        // A kept function (0) called by a large callee (1) and by its small caller (2); the
        // candidate inlined the callee into that caller (1), which now calls the kept one
        // itself. Among the kept function's callers, the callee is the most alike to the
        // candidate's caller, but the caller with the callee taken in is more alike still.
        let kept = body(0x100, 9, 20, vec![]);
        let mut callee = body(0x200, 1, 60, vec![]);
        callee.callees = vec![0];
        let mut caller = body(0x300, 2, 12, vec![]);
        caller.callees = vec![1, 0];
        let mut holding = caller.clone();
        holding.callees = vec![0];
        take_in(&mut holding, &callee, 1);
        let mut holding = tidied(holding);
        (holding.shape, holding.bytes) = (holding.shape ^ 0x77, holding.bytes ^ 0x77);
        assert!(similarity(&callee, &holding) >= MIN_NEIGHBOUR_SIMILARITY);
        assert!(similarity(&callee, &holding) > similarity(&caller, &holding));
        let result = compare(
            &[kept.clone(), callee, caller],
            &[kept, holding],
            &mut never(),
        );
        assert_eq!(
            partner(&result, 0),
            Some((0, Signal::ExactBytes)),
            "{result:?}"
        );
        assert_eq!(partner(&result, 1), None, "{result:?}");
    }

    /// A large callee (1) called by a named caller (0) and by a small unpaired one (2); the
    /// candidate inlined it into both, so nothing calls what holds it (1, the small caller
    /// grown, `edits` instructions edited) and the named caller calls nothing. With the
    /// callee's paired caller asked, which now calls nothing: (baseline, candidate).
    fn inlined_into_an_uncalled_caller(edits: usize) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
        let mut named = procedure(0x10, 100, vec![1, 2, 3], vec![1]);
        named.name = Some("named".into());
        let callee = body(0x200, 1, 60, vec![]);
        let mut caller = body(0x300, 2, 4, vec![]);
        caller.callees = vec![1];
        let mut holding = caller.clone();
        holding.callees.clear();
        take_in(&mut holding, &callee, 1);
        let mut holding = edited(&tidied(holding), edits);
        holding.address = 0x400;
        let mut named_now = named.clone();
        named_now.callees.clear();
        (vec![named, callee, caller], vec![named_now, holding])
    }

    #[test]
    fn a_callee_inlined_into_a_caller_nothing_calls_does_not_pair_with_it_from_as_alike() {
        let (baseline, candidate) = inlined_into_an_uncalled_caller(6);
        let alone = similarity(&baseline[1], &candidate[1]);
        let mut grown = baseline[2].clone();
        grown.callees.clear();
        take_in(&mut grown, &baseline[1], 1);
        let held = similarity(&tidied(grown), &candidate[1]);
        // The caller holding it is not more alike by the margin, only about as alike.
        assert!(alone >= MIN_LIKENESS, "{alone}");
        assert!(
            held < alone + LIKENESS_MARGIN && held >= alone - LIKENESS_MARGIN,
            "{held} {alone}"
        );
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(
            partner(&result, 0),
            Some((0, Signal::SymbolName)),
            "{result:?}"
        );
        assert_eq!(partner(&result, 1), None, "{result:?}");
        // Without a paired caller to say where it was called, the callee keeps its likeness
        // (a wrapper removed in the candidate, and the body it called).
        let (mut baseline, candidate) = inlined_into_an_uncalled_caller(6);
        baseline[0].callees.clear();
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(
            partner(&result, 1),
            Some((1, Signal::Likeness)),
            "{result:?}"
        );
    }

    /// A small procedure of four instructions (`lea`, `sar`, `imul`, `ret`) with the two
    /// immediates `immediates`, which its masked instructions hold too.
    fn small(address: u64, immediates: [u32; 2]) -> Fingerprint {
        let tokens = vec![100_000 + immediates[0], 200_000 + immediates[1], 3, 4];
        let mut p = procedure(
            address,
            u64::from(immediates[0] ^ immediates[1] << 16),
            tokens,
            vec![],
        );
        p.mnemonics = vec![1, 2, 3, 4];
        p.immediates = vec![10_000 + immediates[0], 20_000 + immediates[1]];
        p.immediates.sort_unstable();
        p
    }

    #[test]
    fn a_small_procedure_whose_constant_changed_pairs_when_nothing_else_is_as_alike() {
        // A small function nothing calls (every caller inlined it) whose constant changed, a
        // removed one and an added one of the same operations and other immediates.
        let kept = small(0x100, [0x39a0, 7]);
        let changed = small(0x300, [0x39a8, 7]);
        let removed = small(0x200, [0x1198, 6]);
        let added = small(0x400, [0xf6a4, 1]);
        assert!(kept.tokens.len() < MIN_LIKENESS_INSTRUCTIONS);
        assert!(similarity(&kept, &changed) >= MIN_SMALL_LIKENESS);
        // The operations' likeness alone would call the removed and the added one alike.
        assert!(similarity(&removed, &added) >= MIN_SMALL_LIKENESS);
        let result = compare(
            std::slice::from_ref(&removed),
            std::slice::from_ref(&added),
            &mut never(),
        );
        assert!(result.pairs.is_empty(), "{result:?}");
        let result = compare(&[kept, removed], &[added, changed], &mut never());
        assert_eq!(
            partner(&result, 0),
            Some((1, Signal::Likeness)),
            "{result:?}"
        );
        assert_eq!(partner(&result, 1), None, "{result:?}");
    }

    #[test]
    fn a_small_procedure_as_alike_to_two_stays_apart() {
        let kept = small(0x100, [0x39a0, 7]);
        let changed = small(0x300, [0x39a8, 7]);
        let mut copy = changed.clone();
        (copy.address, copy.bytes) = (0x400, copy.bytes ^ 0x700);
        let result = compare(&[kept], &[changed, copy], &mut never());
        assert!(result.pairs.is_empty(), "{result:?}");
    }

    #[test]
    fn wrappers_of_different_strings_are_not_paired_by_likeness() {
        let removed = body(0x10, 1, 20, vec![7]);
        let mut added = edited(&removed, 1);
        added.strings = vec![8];
        let result = compare(&[removed], &[added], &mut never());
        assert!(result.pairs.is_empty(), "{result:?}");
    }

    /// A caller named alike on both sides (so it pairs by name) calling, in this order,
    /// the procedures that follow it.
    fn calling_in_order(procedures: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
        let mut caller = procedure(0x10, 100, vec![1, 2, 3], calls.to_vec());
        caller.name = Some("main".into());
        std::iter::once(caller).chain(procedures).collect()
    }

    /// `side` with one more procedure, named `second`, calling `calls` in that order.
    fn with_second_caller(mut side: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
        let mut second = procedure(0x900, 200, vec![4, 5, 6], calls.to_vec());
        second.name = Some("second".into());
        side.push(second);
        side
    }

    /// Six kept procedures, each alike on both sides, at 0x100 on; `moved` is the one
    /// procedure more, alike to its counterpart, at 0x800.
    fn kept_and(moved: Fingerprint) -> Vec<Fingerprint> {
        let mut side: Vec<Fingerprint> = (0..6)
            .map(|i| foreign(0x100 + u64::from(i) * 0x40, 10 + i, 12))
            .collect();
        side.push(moved);
        side
    }

    #[test]
    fn a_function_removed_from_one_call_and_another_added_at_another_stay_apart() {
        let removed = body(0x800, 7, 20, vec![]);
        let added = edited(&removed, 2);
        assert!(similarity(&removed, &added) >= MIN_LIKENESS + LIKENESS_MARGIN);
        // `main` called the removed function between the second and third kept ones; it
        // calls the added one last. Indices: 0 is `main`, 1 to 6 the kept, 7 the other.
        let baseline = calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]);
        let apart = calling_in_order(kept_and(added.clone()), &[1, 2, 3, 4, 5, 6, 7]);
        let result = compare(&baseline, &apart, &mut never());
        assert_eq!(partner(&result, 7), None, "{result:?}");
        assert_eq!(result.only_in_candidate, vec![7]);
        // Called in the same place, or one call over (a call moved past another), it is
        // the same function changed.
        for calls in [[1, 2, 7, 3, 4, 5, 6], [1, 2, 3, 7, 4, 5, 6]] {
            let near = calling_in_order(kept_and(added.clone()), &calls);
            let result = compare(&baseline, &near, &mut never());
            assert_eq!(
                partner(&result, 7),
                Some((7, Signal::CallGraph)),
                "{calls:?}"
            );
        }
    }

    #[test]
    fn two_functions_with_the_same_anchors_called_in_different_places_stay_apart() {
        // Inlining copies a callee's strings into its callers: a function and its caller's
        // counterpart can refer to the same one string, and nothing else.
        let removed = body(0x800, 7, 20, vec![42]);
        let mut added = foreign(0x800, 3, 20);
        added.strings = vec![42];
        let baseline = calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]);
        let apart = calling_in_order(kept_and(added.clone()), &[1, 2, 3, 4, 5, 6, 7]);
        let result = compare(&baseline, &apart, &mut never());
        assert_eq!(partner(&result, 7), None, "{result:?}");
        // In the same place, the anchors pair them.
        let near = calling_in_order(kept_and(added), &[1, 2, 7, 3, 4, 5, 6]);
        let result = compare(&baseline, &near, &mut never());
        assert_eq!(
            partner(&result, 7),
            Some((7, Signal::Anchors)),
            "{result:?}"
        );
    }

    #[test]
    fn a_function_rewritten_past_likeness_in_its_place_among_the_calls_pairs_by_it() {
        let old = body(0x800, 7, 30, vec![]);
        let new = rewritten(
            &old,
            MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
        );
        // Another rewrite, as alike, called last: the callers round sees two called by
        // `main` and neither decisively; the place between the second and third calls
        // tells.
        let mut other = rewritten(
            &old,
            MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
        );
        other.address = 0x900;
        other.bytes ^= 1;
        let baseline = calling_in_order(kept_and(old.clone()), &[1, 2, 7, 3, 4, 5, 6]);
        let mut candidate = calling_in_order(kept_and(new), &[1, 2, 7, 3, 4, 5, 6, 8]);
        candidate.push(other);
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(
            partner(&result, 7),
            Some((7, Signal::CallGraph)),
            "{result:?}"
        );
        assert_eq!(result.only_in_candidate, vec![8]);
        // Tiny ones all look alike: a place alone does not pair them.
        let tiny = body(0x800, 7, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
        let other_tiny = body(0x800, 9, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
        assert!(similarity(&tiny, &other_tiny) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
        let baseline = calling_in_order(kept_and(tiny), &[1, 2, 7, 3, 4, 5, 6]);
        let candidate = calling_in_order(kept_and(other_tiny), &[1, 2, 7, 3, 4, 5, 6]);
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(partner(&result, 7), None, "{result:?}");
    }

    #[test]
    fn the_start_and_the_end_of_the_calls_bound_a_call_slot_too() {
        let old = body(0x800, 7, 30, vec![]);
        let new = rewritten(
            &old,
            MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
        );
        // As alike a rewrite called elsewhere (index 8): `main` calls two unpaired
        // procedures on the candidate side and neither decisively, so only the place tells.
        let mut other = new.clone();
        other.address = 0x900;
        other.bytes ^= 1;
        let compared = |rewrite: &Fingerprint, old_calls: &[u32], new_calls: &[u32]| {
            let baseline = calling_in_order(kept_and(old.clone()), old_calls);
            let mut candidate = calling_in_order(kept_and(rewrite.clone()), new_calls);
            candidate.push(other.clone());
            compare(&baseline, &candidate, &mut never())
        };
        let first = ([7, 1, 2, 3, 4, 5, 6], [7, 1, 2, 3, 8, 4, 5, 6]);
        let last = ([1, 2, 3, 4, 5, 6, 7], [1, 2, 8, 3, 4, 5, 6, 7]);
        for (old_calls, new_calls) in [first, last] {
            let result = compared(&new, &old_calls, &new_calls);
            assert_eq!(
                partner(&result, 7),
                Some((7, Signal::CallGraph)),
                "{new_calls:?}: {result:?}"
            );
            assert_eq!(result.only_in_candidate, vec![8], "{new_calls:?}");
        }
        // Bounded on one side only, three times the size is a new function that took the
        // old one in.
        let mut grown = rewritten(
            &old,
            MIN_SOLE_NEIGHBOUR_SIMILARITY + 0.1..MIN_NEIGHBOUR_SIMILARITY,
        );
        grown.size = old.size * 3;
        assert!(kinship(&old, &grown) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
        let result = compared(&grown, &last.0, &last.1);
        assert_eq!(partner(&result, 7), None, "{result:?}");
        // Two unpaired at the end of one side (a function added last) are no slot.
        let result = compared(&new, &[1, 2, 3, 4, 5, 6, 7], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(partner(&result, 7), None, "{result:?}");
    }

    #[test]
    fn the_callers_round_keeps_a_likeness_pair_that_the_call_order_does_not_overrule() {
        // `main` and `second` call `b` (7) between the second and third kept procedures and
        // the unrelated new `c` (7) last; `x` (9), called by nobody, is `b` edited. The
        // callers that `b` and `c` share place them apart, so they do not undo `b` with `x`.
        let b = body(0x800, 7, 20, vec![]);
        let c = foreign(0x800, 3, 20);
        let mut x = edited(&b, 2);
        x.address = 0xa00;
        assert!(similarity(&b, &x) >= MIN_LIKENESS + LIKENESS_MARGIN);
        let (old, new) = ([1, 2, 7, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7]);
        let baseline = with_second_caller(calling_in_order(kept_and(b), &old), &old);
        let mut candidate = with_second_caller(calling_in_order(kept_and(c), &new), &new);
        candidate.push(x);
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(
            partner(&result, 7),
            Some((9, Signal::Likeness)),
            "{result:?}"
        );
        assert_eq!(result.only_in_candidate, vec![7], "{result:?}");
    }

    #[test]
    fn a_function_whose_small_callee_one_version_inlines_pairs_with_the_callee_taken_in() {
        // Index 1 is the callee (the same on both sides, so it pairs by bytes); 2 calls it in
        // the baseline and holds its code in the candidate. Nothing calls 2, and 3 is an
        // unrelated procedure on each side.
        let sides = |callee_length: u16| {
            let callee = foreign(0x300, 5, callee_length);
            let own = foreign(0x400, 6, 12);
            let mut calling = own.clone();
            calling.callees = vec![1];
            let inlined = procedure(
                0x400,
                77,
                own.tokens.iter().chain(&callee.tokens).copied().collect(),
                vec![],
            );
            let mut inlined = Fingerprint {
                mnemonics: own
                    .mnemonics
                    .iter()
                    .chain(&callee.mnemonics)
                    .copied()
                    .collect(),
                ..inlined
            };
            inlined.mnemonics.sort_unstable();
            let mut main = procedure(0x10, 100, vec![1, 2, 3], vec![1]);
            main.name = Some("main".into());
            let baseline = vec![main.clone(), callee.clone(), calling, foreign(0x500, 8, 30)];
            let candidate = vec![main, callee, inlined, foreign(0x500, 9, 30)];
            (baseline, candidate)
        };
        let (baseline, candidate) = sides(24);
        assert!(similarity(&baseline[2], &candidate[2]) < MIN_LIKENESS);
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(
            partner(&result, 2),
            Some((2, Signal::Likeness)),
            "{result:?}"
        );
        assert_eq!(partner(&result, 3), None, "{result:?}");
        // A large callee is not inlined: its code is not taken in.
        let (baseline, candidate) = sides(LARGE_PROCEDURE_INSTRUCTIONS as u16);
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(partner(&result, 2), None, "{result:?}");
    }

    #[test]
    fn a_pair_that_calls_two_in_the_same_place_keeps_them_together() {
        // A second caller calls both first (before any other pair): one caller against is
        // not all of them.
        let removed = body(0x800, 7, 20, vec![]);
        let added = edited(&removed, 2);
        let baseline = with_second_caller(
            calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]),
            &[7, 1],
        );
        let candidate = with_second_caller(
            calling_in_order(kept_and(added), &[1, 2, 3, 4, 5, 6, 7]),
            &[7, 1],
        );
        let result = compare(&baseline, &candidate, &mut never());
        assert_eq!(partner(&result, 7).map(|(c, _)| c), Some(7), "{result:?}");
    }

    #[test]
    fn a_procedure_between_two_pairs_pairs_by_its_place() {
        let first = body(0x10, 1, 10, vec![]);
        let middle = body(0x20, 2, 10, vec![]);
        let last = body(0x30, 3, 10, vec![]);
        let changed = edited(&middle, 4);
        assert!(similarity(&middle, &changed) >= MIN_ORDER_SIMILARITY);
        // A twin of the changed one elsewhere: as like the middle one as its true version, so
        // the likeness round cannot choose, and only the place decides.
        let mut twin = changed.clone();
        twin.address = 0x40;
        twin.bytes ^= 1;
        let result = compare(
            &[first.clone(), middle, last.clone()],
            &[first, changed, last, twin],
            &mut never(),
        );
        let pair = result
            .pairs
            .iter()
            .find(|p| p.baseline == 1)
            .expect("paired");
        assert_eq!((pair.candidate, pair.signal), (1, Signal::Order));
        assert_eq!(result.only_in_candidate, vec![3]);
    }

    #[test]
    fn procedures_in_the_same_slot_of_aligned_tables_pair_by_it() {
        // A table of an anchor (unique code) and two near twins, rewritten in the new version
        // and laid out in the other order, so neither likeness nor place can tell them apart.
        let anchor = body(0x10, 1, 12, vec![]);
        let first = body(0x20, 2, 30, vec![]);
        let mut second = edited(&first, 2);
        second.address = 0x30;
        let slot = |index| Slot { table: 0, index };
        let mut baseline = vec![anchor.clone(), first.clone(), second.clone()];
        for (index, procedure) in baseline.iter_mut().enumerate() {
            procedure.slots = vec![slot(index as u32)];
        }
        let (mut new_first, mut new_second) = (edited(&first, 3), edited(&second, 3));
        // Four distinct codes: no hash pairs any two of them.
        for (procedure, code) in [(&mut new_first, 0x71), (&mut new_second, 0x72)] {
            (procedure.bytes, procedure.shape) = (code, code);
        }
        new_first.slots = vec![slot(1)];
        new_second.slots = vec![slot(2)];
        let mut new_anchor = anchor;
        new_anchor.slots = vec![slot(0)];
        let candidate = vec![new_anchor, new_second, new_first];
        let result = compare(&baseline, &candidate, &mut never());
        let partner = |b: u32| result.pairs.iter().find(|p| p.baseline == b).copied();
        assert_eq!(partner(0).map(|p| p.candidate), Some(0));
        for (b, c) in [(1, 2), (2, 1)] {
            let pair = partner(b).expect("paired");
            assert_eq!((pair.candidate, pair.signal), (c, Signal::PointerTable));
            assert_eq!(pair.status, Status::Changed);
        }
    }

    #[test]
    fn a_table_whose_pairs_sit_in_other_slots_vouches_for_nothing() {
        // Two anchors paired by their code, in swapped slots: the tables disagree as often as
        // they agree, so the unpaired slot stays unpaired.
        let slot = |index| Slot { table: 0, index };
        let mut a = body(0x10, 1, 12, vec![]);
        let mut b = body(0x20, 2, 12, vec![]);
        let mut c = body(0x30, 3, 12, vec![]);
        let mut d = body(0x40, 4, 12, vec![]);
        let target = body(0x50, 5, 30, vec![]);
        let mut old = target.clone();
        old.slots = vec![slot(4)];
        let mut new = edited(&target, 20);
        new.slots = vec![slot(4)];
        (a.slots, b.slots, c.slots, d.slots) =
            (vec![slot(0)], vec![slot(1)], vec![slot(2)], vec![slot(3)]);
        let baseline = vec![a.clone(), b.clone(), c.clone(), d.clone(), old];
        (a.slots, b.slots) = (vec![slot(1)], vec![slot(0)]);
        let candidate = vec![a, b, c, d, new];
        let result = compare(&baseline, &candidate, &mut never());
        assert!(
            result
                .pairs
                .iter()
                .all(|p| p.signal != Signal::PointerTable),
            "{result:?}"
        );
    }

    /// Sides whose procedures are long enough for the likeness round and alike in parts.
    fn long_side() -> impl Strategy<Value = Vec<Fingerprint>> {
        prop::collection::vec(
            (
                prop::collection::vec(0u32..24, 8..30),
                prop::collection::vec(0u64..3, 0..2),
                prop::collection::vec(0u32..6, 0..4),
                prop::collection::vec(0u32..10, 0..3),
            ),
            0..10,
        )
        .prop_map(|items| {
            let count = items.len() as u32;
            items
                .into_iter()
                .enumerate()
                .map(|(index, (tokens, strings, mut immediates, mut callees))| {
                    let shape = tokens
                        .iter()
                        .fold(7u64, |h, &t| h.wrapping_mul(31).wrapping_add(u64::from(t)));
                    callees.retain(|&callee| callee < count);
                    callees.sort_unstable();
                    callees.dedup();
                    let mut p = procedure(index as u64 * 64, shape, tokens, callees);
                    let mut strings = strings;
                    strings.sort_unstable();
                    strings.dedup();
                    p.strings = strings;
                    immediates.sort_unstable();
                    p.immediates = immediates;
                    p
                })
                .collect()
        })
    }

    /// Two sides where named callers call bodies, and the candidate moved some bodies into a
    /// new procedure, calling it from a wrapper in the body's place: the callers round
    /// overrules the likeness that paired a body with its moved copy, and sets the copy free
    /// among uncalled baseline procedures alike to it.
    fn moved_bodies() -> impl Strategy<Value = (Vec<Fingerprint>, Vec<Fingerprint>)> {
        let body = (
            prop::collection::vec(0u32..24, 8..30),
            any::<bool>(),
            0usize..4,
            0u8..16,
        );
        let decoys = prop::collection::vec(prop::collection::vec(0u32..24, 8..30), 0..4);
        (2usize..5, prop::collection::vec(body, 1..7), decoys).prop_map(
            |(callers, bodies, decoys)| {
                let shaped = |address: u64, tokens: Vec<u32>, callees: Vec<u32>| {
                    let shape = tokens
                        .iter()
                        .fold(7u64, |h, &t| h.wrapping_mul(31).wrapping_add(u64::from(t)));
                    procedure(address, shape, tokens, callees)
                };
                let first = callers as u32;
                let moved_at = first + bodies.len() as u32;
                let (mut baseline, mut candidate, mut moved) = (Vec::new(), Vec::new(), Vec::new());
                for (i, (tokens, is_moved, edit, _)) in bodies.iter().enumerate() {
                    let address = 0x1000 + i as u64 * 0x100;
                    baseline.push(shaped(address, tokens.clone(), vec![]));
                    let mut edited = tokens.clone();
                    for token in edited.iter_mut().take(*edit) {
                        *token += 100;
                    }
                    if *is_moved {
                        let wrapper = vec![200 + i as u32, 201];
                        let target = moved_at + moved.len() as u32;
                        candidate.push(shaped(address, wrapper, vec![target]));
                        moved.push(shaped(0x9000 + i as u64 * 0x100, edited, vec![]));
                    } else {
                        candidate.push(shaped(address, edited, vec![]));
                    }
                }
                candidate.extend(moved);
                // Procedures no one calls, alike to the bodies, that a body set free may be more
                // alike to than to what they were alike to before.
                for (i, tokens) in decoys.into_iter().enumerate() {
                    baseline.push(shaped(0x20000 + i as u64 * 0x100, tokens, vec![]));
                }
                let named = |side: Vec<Fingerprint>| {
                    let mut all: Vec<Fingerprint> = (0..callers)
                        .map(|c| {
                            let callees = (bodies.iter().enumerate())
                                .filter(|(_, body)| body.3 & (1 << c) != 0)
                                .map(|(i, _)| first + i as u32)
                                .collect();
                            let mut caller =
                                procedure(c as u64 * 0x10, 500 + c as u64, vec![1, 2, 3], callees);
                            caller.name = Some(format!("caller{c}"));
                            caller
                        })
                        .collect();
                    all.extend(side);
                    all
                };
                (named(baseline), named(candidate))
            },
        )
    }

    /// The procedures of each side as the result places them (in pairs or alone): sorted.
    fn places(result: &Comparison) -> (Vec<u32>, Vec<u32>) {
        let mut baseline: Vec<u32> = result.pairs.iter().map(|p| p.baseline).collect();
        baseline.extend(&result.only_in_baseline);
        baseline.sort_unstable();
        let mut candidate: Vec<u32> = result.pairs.iter().map(|p| p.candidate).collect();
        candidate.extend(&result.only_in_candidate);
        candidate.sort_unstable();
        (baseline, candidate)
    }

    /// Every procedure of each side, once.
    fn every_place(a: &[Fingerprint], b: &[Fingerprint]) -> (Vec<u32>, Vec<u32>) {
        ((0..a.len() as u32).collect(), (0..b.len() as u32).collect())
    }

    fn arbitrary_side() -> impl Strategy<Value = Vec<Fingerprint>> {
        prop::collection::vec(
            (
                0u64..6,
                prop::collection::vec(0u32..12, 0..3),
                prop::option::of("[ab]{1,2}"),
                prop::collection::vec(0u64..4, 0..2),
                prop::collection::vec((0u32..3, 0u32..4), 0..3),
            ),
            0..12,
        )
        .prop_map(|items| {
            let count = items.len() as u32;
            items
                .into_iter()
                .enumerate()
                .map(|(index, (shape, callees, name, strings, slots))| {
                    // Equal shapes have equal instructions, as in a real binary.
                    let tokens: Vec<u32> = (0..shape as u32).collect();
                    let mut callees: Vec<u32> =
                        callees.into_iter().filter(|&c| c < count).collect();
                    callees.sort_unstable();
                    callees.dedup();
                    let mut strings = strings;
                    strings.sort_unstable();
                    strings.dedup();
                    let mut p = procedure(index as u64 * 16, shape, tokens, callees);
                    p.bytes = shape;
                    p.name = name;
                    p.strings = strings;
                    // Tables it sits in and, from the same draw, tables its code names.
                    p.slots = slots
                        .iter()
                        .map(|&(table, index)| Slot { table, index })
                        .collect();
                    p.slots.sort_unstable();
                    p.slots.dedup();
                    p.tables = slots.iter().map(|&(table, _)| table).collect();
                    p.tables.sort_unstable();
                    p.tables.dedup();
                    p
                })
                .collect()
        })
    }

    /// The greatest total of an assignment of rows to distinct columns, by trying them all.
    fn best_total_by_search(scores: &[Vec<f64>], row: usize, taken: &mut Vec<bool>) -> f64 {
        if row == scores.len() {
            return 0.0;
        }
        let mut best = best_total_by_search(scores, row + 1, taken);
        for column in 0..taken.len() {
            if !taken[column] {
                taken[column] = true;
                let total = scores[row][column] + best_total_by_search(scores, row + 1, taken);
                taken[column] = false;
                best = best.max(total);
            }
        }
        best
    }

    proptest! {
        #[test]
        fn the_longest_increasing_run_is_increasing_and_longest(
            seconds in proptest::collection::btree_set(0usize..40, 0..12)
                .prop_map(|set| set.into_iter().collect::<Vec<_>>())
                .prop_shuffle(),
        ) {
            let points: Vec<(usize, usize)> = seconds.into_iter().enumerate().collect();
            let run = longest_increasing(&points);
            prop_assert!(run.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
            prop_assert!(run.iter().all(|point| points.contains(point)));
            // The longest, by the quadratic recurrence.
            let mut longest_ending = vec![1usize; points.len()];
            for i in 0..points.len() {
                for j in 0..i {
                    if points[j].1 < points[i].1 {
                        longest_ending[i] = longest_ending[i].max(longest_ending[j] + 1);
                    }
                }
            }
            prop_assert_eq!(run.len(), longest_ending.into_iter().max().unwrap_or(0));
        }

        #[test]
        fn the_assignment_is_one_to_one_and_of_the_greatest_total(
            (rows, columns, cells) in (1usize..6, 1usize..6)
                .prop_flat_map(|(r, c)| (Just(r), Just(c), prop::collection::vec(0u8..=100, r * c)))
        ) {
            let scores: Vec<Vec<f64>> = cells
                .chunks(columns)
                .map(|row| row.iter().map(|&cell| f64::from(cell) / 100.0).collect())
                .collect();
            let assignment = best_assignment(&scores);
            prop_assert_eq!(assignment.len(), rows);
            let mut used: Vec<usize> = assignment.iter().flatten().copied().collect();
            prop_assert_eq!(used.len(), rows.min(columns));
            used.sort_unstable();
            used.dedup();
            prop_assert_eq!(used.len(), rows.min(columns));
            let total: f64 = (assignment.iter().enumerate())
                .filter_map(|(row, column)| column.map(|column| scores[row][column]))
                .sum();
            let best = best_total_by_search(&scores, 0, &mut vec![false; columns]);
            prop_assert!((total - best).abs() < 1e-9, "{} against {}", total, best);
        }
    }

    proptest! {
        #[test]
        fn keeping_the_likeness_bests_changes_nothing(a in long_side(), b in long_side()) {
            prop_assert_eq!(compare(&a, &b, &mut never()), compare_forgetting(&a, &b));
        }

        #[test]
        fn keeping_the_likeness_bests_changes_nothing_when_the_place_overrules(
            (a, b) in moved_bodies()
        ) {
            let result = compare(&a, &b, &mut never());
            prop_assert_eq!(&result, &compare_forgetting(&a, &b));
            prop_assert_eq!(places(&result), every_place(&a, &b));
        }

        #[test]
        fn long_procedures_are_each_in_exactly_one_place(a in long_side(), b in long_side()) {
            let result = compare(&a, &b, &mut never());
            prop_assert_eq!(places(&result), every_place(&a, &b));
        }

        #[test]
        fn every_procedure_is_in_exactly_one_place(a in arbitrary_side(), b in arbitrary_side()) {
            let result = compare(&a, &b, &mut never());
            let mut seen_a = vec![0u32; a.len()];
            let mut seen_b = vec![0u32; b.len()];
            for pair in &result.pairs {
                seen_a[pair.baseline as usize] += 1;
                seen_b[pair.candidate as usize] += 1;
                prop_assert!((0.0..=1.0).contains(&pair.similarity));
                prop_assert_eq!(pair.status == Status::Identical, pair.similarity == 1.0);
            }
            for &i in &result.only_in_baseline { seen_a[i as usize] += 1; }
            for &i in &result.only_in_candidate { seen_b[i as usize] += 1; }
            prop_assert!(seen_a.iter().all(|&n| n == 1));
            prop_assert!(seen_b.iter().all(|&n| n == 1));
        }

        #[test]
        fn the_same_inputs_give_the_same_result(a in arbitrary_side(), b in arbitrary_side()) {
            prop_assert_eq!(compare(&a, &b, &mut never()), compare(&a, &b, &mut never()));
        }

        #[test]
        fn a_side_compared_with_itself_pairs_with_itself_or_a_twin(a in arbitrary_side()) {
            let result = compare(&a, &a, &mut never());
            for pair in &result.pairs {
                let (x, y) = (&a[pair.baseline as usize], &a[pair.candidate as usize]);
                prop_assert_eq!(x.shape, y.shape);
                if pair.baseline == pair.candidate {
                    prop_assert_eq!(pair.status, Status::Identical);
                }
            }
        }

        #[test]
        fn distinct_code_compared_with_itself_is_identical_throughout(a in arbitrary_side()) {
            let a: Vec<Fingerprint> = a
                .into_iter()
                .enumerate()
                .map(|(index, mut p)| {
                    p.shape = 100 + index as u64;
                    p.bytes = p.shape;
                    p
                })
                .collect();
            let result = compare(&a, &a, &mut never());
            prop_assert_eq!(result.pairs.len(), a.len());
            for pair in &result.pairs {
                prop_assert_eq!(pair.baseline, pair.candidate);
                prop_assert_eq!(pair.status, Status::Identical);
            }
        }

        #[test]
        fn similarity_is_symmetric_and_in_range(a in arbitrary_side(), b in arbitrary_side()) {
            for x in &a {
                for y in &b {
                    let s = similarity(x, y);
                    prop_assert!((0.0..=1.0).contains(&s));
                    prop_assert!((s - similarity(y, x)).abs() < 1e-12);
                }
            }
        }
    }
}
