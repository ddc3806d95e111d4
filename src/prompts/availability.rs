//! What the server can offer right now, as far as rendering a workflow is concerned.

use std::collections::BTreeSet;

/// Whether the session currently has a binary open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BinarySession {
    /// A binary is open: tools run against its provider.
    Open,
    /// A binary is open, but its file lies outside the roots the client allows now: its tools
    /// answer an error until the roots include it.
    OutsideRoots,
    /// No binary is open: a rendering says that `open_binary` comes first.
    #[default]
    Closed,
}

/// The tools a rendering may list, and whether a binary is open.
///
/// A tool is *offered* when it exists in the server's tool catalog **and** the current
/// session's provider supports it. The mcp layer builds this per `prompts/get` from its catalog
/// and session, usually with [`ToolAvailability::from_catalog`]. With no binary open there is
/// no provider to ask; the caller decides which catalog tools count as offered (`open_binary`
/// at least, when the catalog has it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolAvailability {
    offered: BTreeSet<String>,
    binary: BinarySession,
}

impl ToolAvailability {
    /// Availability from the set of offered tool names.
    pub fn new<I, S>(offered: I, binary: BinarySession) -> ToolAvailability
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ToolAvailability {
            offered: offered.into_iter().map(Into::into).collect(),
            binary,
        }
    }

    /// Availability from a catalog of tool names and a test of provider support: a tool is
    /// offered when it is in `catalog` and `provider_supports` accepts it.
    pub fn from_catalog<'c, I, F>(
        catalog: I,
        provider_supports: F,
        binary: BinarySession,
    ) -> ToolAvailability
    where
        I: IntoIterator<Item = &'c str>,
        F: Fn(&str) -> bool,
    {
        let offered = catalog.into_iter().filter(|tool| provider_supports(tool));
        ToolAvailability::new(offered, binary)
    }

    /// Whether `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.offered.contains(tool)
    }

    /// The offered tool names, sorted.
    pub fn offered(&self) -> impl Iterator<Item = &str> {
        self.offered.iter().map(String::as_str)
    }

    /// Whether a binary is open.
    pub fn binary(&self) -> BinarySession {
        self.binary
    }
}
