//! The insta settings of the whole suite: snapshots live in the top-level `snapshots/` folder
//! under explicit names (`<area>_<feature>__<case>`, never derived from the module path, so a
//! file can move without renaming its snapshots; `tests/it/architecture.rs` checks the rule and
//! that every file of `snapshots/` is named by a test), and volatile text is replaced by insta
//! filters rather than by hand.

use std::path::Path;

use insta::Settings;

/// Evidence IDs (`ev-` and twelve digits), for [`Settings::add_filter`].
pub const EVIDENCE_ID: &str = r"ev-\d{12}";

/// Residual-unknown IDs (`unk-` and twelve digits), for [`Settings::add_filter`].
pub const UNKNOWN_ID: &str = r"unk-\d{12}";

/// The settings every snapshot is taken under; add filters, then `bind` the assertion.
pub fn settings() -> Settings {
    let mut settings = Settings::clone_current();
    settings.set_snapshot_path(crate::root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// Replaces every occurrence of `path` (a temporary directory or file) with `replacement`.
pub fn filter_path(settings: &mut Settings, path: &Path, replacement: &str) {
    settings.add_filter(&regex::escape(&path.display().to_string()), replacement);
}
