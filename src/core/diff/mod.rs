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
//! 5. [`Signal::RecordName`]: two tables of named records in data (a pointer to a string
//!    right before a pointer to a procedure: a method table's `{"flush", reader_flush, …}`, a
//!    command table's `{"quit", do_quit}`), each the other's unique best by the share of the
//!    names they hold, at least [`MIN_SHARED_RECORD_NAMES`], then by the names whose
//!    procedures are already paired (two classes with the same methods): the unpaired procedures that
//!    they name alike, each name held by one procedure in each table, however their code
//!    changed (a procedure named in several records pairs only when they all agree).
//! 6. [`Signal::PointerTable`]: two tables of procedure pointers in data (dispatch tables,
//!    callbacks) of the same length, vouched for by the pairs among the procedures they hold
//!    at the same places and among those that refer to them, at least three times as many
//!    as the slots holding two paired procedures apart, each the other's only such table:
//!    the unpaired procedures in the same slot, at least [`MIN_SLOT_SIMILARITY`] alike.
//! 7. [`Signal::CallGraph`]: for each pair made, its unpaired callees and callers on the two
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
//! 8. [`Signal::Likeness`], only when the rounds above paired nothing: unpaired procedures of
//!    at least [`MIN_LIKENESS_INSTRUCTIONS`] that are each other's most similar among all
//!    unpaired procedures of half to twice their size, at least [`MIN_LIKENESS`] alike and
//!    [`LIKENESS_MARGIN`] above the runner-up on both sides.
//! 9. [`Signal::Order`], when the likeness round paired nothing either: the unpaired
//!    procedures between two consecutive pairs, with no other pair between them on either
//!    side, position by position or by mutual best similarity, at least
//!    [`MIN_ORDER_SIMILARITY`] alike (compilers lay functions out in source order).
//! 10. [`Signal::Twins`], when the order round paired nothing either: near-twins, the
//!     instances of one template that a new release rewrote alike (a match finder built for
//!     4, 5 and 6 bytes), each at least [`MIN_TWIN_LIKENESS`] alike to several of the other
//!     side within [`LIKENESS_MARGIN`], or decisively the best of one that is (a hair less
//!     alike crosswise one way than the other). Linked that way they make a family; in a
//!     family, each procedure's own immediates (those not every member of its side holds:
//!     the shift by 5, the other hash prime) decide, by mutual unique best likeness of them,
//!     sharing at least one, among the members that the pairs calling both do not call in
//!     different places (see below).
//!
//! 11. [`Signal::SameCallers`], when the twins round paired nothing either: procedures called
//!     by the same pairs, at least [`MIN_SAME_CALLERS`] (a function rewritten past any
//!     likeness keeps its callers). Those that share a set of paired callers are the
//!     unpaired procedures and those a fuzzy round (4, 7 to 10 and 14) paired with a procedure
//!     that something calls, or that has a name, and that lacks at least
//!     [`MIN_SAME_CALLERS`] of their paired callers (a caller of every function, a
//!     program's `main`, vouches for nothing): the place overrules the likeness (a
//!     procedure that nothing calls, every caller having inlined it, has no place to be
//!     against, unless it has a name, as an exported procedure that nothing inside calls is
//!     an entry point whose place is outside, or the procedure paired with it is called by
//!     an unpaired procedure too, which may be its other version: a function kept for its
//!     callers and inlined into one that every caller then inlined). The only one on each
//!     side pairs; among
//!     more, one set against its place pairs with the only
//!     one on the other side that calls its old partner (a function whose body moved into a
//!     new callee, which is now called in its place), and the others by mutual best
//!     [`similarity`] of at least [`MIN_SOLE_NEIGHBOUR_SIMILARITY`], [`LIKENESS_MARGIN`]
//!     above the rest. A pair overruled is undone, and the rounds go on. Unpaired procedures
//!     of at least [`MIN_LIKENESS_INSTRUCTIONS`] called by one same pair group too, and
//!     there, even one on each side pairs only by that decisive best, half to twice the
//!     other's size, only when the group has one procedure on a side, and only when that
//!     pair calls them in the same slot, between the same two of its other callees called
//!     in the same order on both sides (a function rewritten at its one call site; a
//!     single call site vouches less, since a dispatcher's removed and added functions
//!     all meet there, and tiny procedures all look alike).
//! 12. Near ties, when the same-callers round paired nothing either: a mutual best of the
//!     call-graph or order round that another procedure is within [`LIKENESS_MARGIN`] of
//!     (the instances of one template, rewritten alike) waits for the rounds that tell them
//!     apart (tables, twins, callers). When those pair nothing more, the call-graph round
//!     (then the order round) runs again and settles each by the assignment of its
//!     neighbourhood with the greatest total [`similarity`], which pairs
//!     two only within [`LIKENESS_MARGIN`] of the best on both sides.
//! 13. Inlined callees, once, when the near ties settled nothing either: the likeness round
//!     ([`Signal::Likeness`], the same thresholds) with each unpaired procedure's paired
//!     callees of fewer than [`LARGE_PROCEDURE_INSTRUCTIONS`] taken in (their instructions,
//!     strings, constants and imports added, their callees called instead), for two of which
//!     at least one took code in: a function whose small callee one version inlines and the
//!     other calls. Then a second pass takes in, besides, the unpaired callees of at most
//!     four callers (a static function the other version inlined into each of its callers,
//!     of any size), and leaves those callees out as procedures of their own: one is about
//!     as alike to its caller's other version as the caller is, having its code, and would
//!     keep the two apart by the margin. It runs once because it keeps nothing between runs
//!     (the likeness round keeps its bests); the rounds go on from the pairs it makes.
//! 14. [`Signal::Constants`], whenever the rounds above pair nothing: an unpaired procedure on
//!     each side holding the same constant (or a `lea`'s [`Fingerprint::addends`]) of at
//!     least 0x100 in magnitude (`x - 28` holds a `-28` that says no more than `28`) that no
//!     other procedure of either side holds, paired or not (a paired one may hold it as an
//!     inlined copy), when that is the only such partner either has, the two share at least
//!     half the constants of the one with fewer (two that meet on one of their many by chance
//!     are two functions) and are alike at all ([`similarity`] above 0 once the strings and
//!     constants conflicts below are counted). A random multiplier or a magic number survives
//!     the edits that move a function past every likeness threshold.
//! 15. Small procedures, once, last ([`Signal::Likeness`]): unpaired procedures of fewer than
//!     [`MIN_LIKENESS_INSTRUCTIONS`] that are each other's most alike among all unpaired
//!     procedures of half to twice their size, by [`LIKENESS_MARGIN`], at least
//!     [`MIN_SMALL_LIKENESS`], and that share an immediate or an addend when either has an
//!     immediate: a small function that nothing calls (every caller inlined it) and whose one
//!     constant changed. The many small functions alike (`mov %rdi,%rax; ret`) tie and stay
//!     apart.
//!
//! The rounds of likeness and place (7, 8, 9, 11 to 15) and the anchors round (4) never
//! pair two procedures that the pairs calling both call in different places, nor does the
//! twins round (10) tell apart two so called (inlining copies a callee's strings and imports
//! into its callers, so the same anchors are no proof on their own): when, for every pair
//! that calls both, of the longest run of its other callees called in the same order on both
//! sides (each side's callees in the order of their first call), at least
//! [`MIN_PLACES_APART`] are called before one and not before the other. A function removed
//! from one call and another added at another are two functions, however alike; one call
//! moved past another is not enough, and one caller against is not all of them, even in
//! the same-callers round (11), whose only evidence is the place (a function of a large
//! C++ library is called in other places by one caller and in the same by the rest).
//!
//! The rounds of likeness and place (4 and 7 to 15) never pair a procedure with one that
//! an unpaired caller of it, with it taken in, is more alike to by [`LIKENESS_MARGIN`] (or
//! the other way round): the other version inlined it into that caller, which now holds its
//! code. When nothing calls the other one and a pair calls the procedure, that caller need
//! only be within [`LIKENESS_MARGIN`] of as alike: every caller inlined the callee in the
//! other version, so its place vouches for nothing, and the caller holding it is as likely.
//! The same when only pairs call the other one, the caller brings at least a quarter of
//! the callee's size, and the caller with it taken in is at least as alike or a pair that
//! calls the procedure does not call the other one: one version inlined the callee into
//! that caller and kept it out of line, the other the opposite, and no unpaired caller is
//! left to hold the other one as a callee (a wrapper much smaller than its callee is, taken
//! in, the callee itself; where every pair calling the procedure calls the other one, the
//! place agrees with the pair).
//! The same-callers round (11) asks this before it undoes a pair for one of its own.
//!
//! Nor do the fuzzy rounds (4, 7 to 10 and 12 to 15) pair a procedure with one that a
//! sibling of that one (an unpaired procedure that calls one of its paired callees, or that
//! one of its paired callers calls) is more alike to by [`LIKENESS_MARGIN`], while something
//! unpaired calls the procedure (or the other way round): a version that inlined a
//! procedure into a caller and kept it for its other callers holds its code twice, and the
//! neighbourhood that sees only the caller would pair the caller with it. A sibling that the
//! one calls is no rival when the one with it taken in is as alike: that version inlined it.
//!
//! The fuzzy rounds (6 to 15) never pair two procedures that both refer to strings and share
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

mod matcher;
mod measure;
#[cfg(test)]
mod tests;

use matcher::Matcher;
use measure::{jaccard_multiset, jaccard_set, multiset_common, ratio};

/// Fewest constants each of two procedures must hold for sharing none of them to keep the
/// fuzzy rounds from pairing them (an edit keeps some of a function's constants; one or two
/// constants are often the edit itself).
pub const MIN_TELLING_CONSTANTS: usize = 3;

/// Least share of their names (shared over all) two tables of named records hold in common to
/// be counterparts ([`Signal::RecordName`]): a release adds and removes methods, and renames
/// few.
pub const MIN_SHARED_RECORD_NAMES: f64 = 0.5;

/// Most tables of named records of one side that one name may be in and still vote for a
/// counterpart ([`Signal::RecordName`]): a name that many tables hold tells nothing, and
/// the votes stay linear in the records.
pub const MAX_TABLES_PER_RECORD_NAME: usize = 64;

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
/// pairs with as each other's most alike (round 14 of the module documentation): a few
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
    /// Constants added to a register without an immediate operand (x86's `lea k(%reg)`), of
    /// at least 0x100: sorted, distinct. Compilers compute `x + k` that way, and a
    /// structure member's address too, whose offset moves with the layout, so they stay out
    /// of the likeness; the rounds of telling constants and of small procedures read them.
    pub addends: Vec<u64>,
    /// The slots of tables of procedure pointers that hold it: sorted, distinct.
    pub slots: Vec<Slot>,
    /// The tables of procedure pointers whose start its code refers to (as numbered in
    /// [`Slot::table`]): sorted, distinct.
    pub tables: Vec<u32>,
    /// The records in data that name it: a pointer to a string right before a pointer to it
    /// (a method table's `{"flush", reader_flush, …}`): sorted, distinct.
    pub labels: Vec<Label>,
}

/// A record in data that names a procedure: the table of such records (numbered on its side
/// in address order) and the hash of the name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Label {
    /// The table of records, numbered on its side in address order.
    pub table: u32,
    /// The hash of the name the record holds.
    pub name: u64,
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
    /// The same name in two tables of named records in data that share most of their names
    /// (a method table's `{"flush", reader_flush, …}`).
    RecordName,
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
    /// The same constant, which no other procedure of either side holds.
    Constants,
}

impl Signal {
    /// Every signal, in the order of the rounds.
    pub const ALL: [Signal; 12] = [
        Signal::SymbolName,
        Signal::ExactBytes,
        Signal::InstructionHash,
        Signal::Anchors,
        Signal::RecordName,
        Signal::PointerTable,
        Signal::CallGraph,
        Signal::Likeness,
        Signal::Order,
        Signal::Twins,
        Signal::SameCallers,
        Signal::Constants,
    ];

    /// Whether the signal is one a fuzzy round makes from likeness or anchors alone, which
    /// the place of the procedures in the call graph can overrule.
    fn is_fuzzy(self) -> bool {
        matches!(
            self,
            Signal::Anchors
                | Signal::CallGraph
                | Signal::Likeness
                | Signal::Order
                | Signal::Twins
                | Signal::Constants
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
                | Signal::Constants
        )
    }

    /// The name used in results: `symbol_name`, `exact_bytes`, `instruction_hash`, `anchors`,
    /// `record_name`, `pointer_table`, `call_graph`, `likeness`, `address_order`, `twins`, `same_callers`,
    /// `constants`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::SymbolName => "symbol_name",
            Signal::ExactBytes => "exact_bytes",
            Signal::InstructionHash => "instruction_hash",
            Signal::Anchors => "anchors",
            Signal::RecordName => "record_name",
            Signal::PointerTable => "pointer_table",
            Signal::CallGraph => "call_graph",
            Signal::Likeness => "likeness",
            Signal::Order => "address_order",
            Signal::Twins => "twins",
            Signal::SameCallers => "same_callers",
            Signal::Constants => "constants",
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
