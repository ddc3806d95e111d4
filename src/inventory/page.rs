//! The inventory page document and its validation.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ids::occurrence_id_for;
use crate::schemas::{ARTIFACT_INVENTORY_V1, INVENTORY_PAGE, SchemaViolation};

/// One page of an artifact inventory: the JSON document `inventory_artifacts` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryPage {
    /// Always [`super::INVENTORY_SCHEMA`].
    pub schema: String,
    /// Always [`super::INVENTORY_VERSION`].
    pub version: u64,
    /// The inventory's manifest ID.
    pub manifest_id: String,
    /// What was inventoried.
    pub root: InventoryRoot,
    /// Where this page sits.
    pub page: PagePosition,
    /// This page's occurrences, in path order.
    pub occurrences: Vec<Occurrence>,
    /// This page's rejected entries, in path order.
    pub rejected: Vec<RejectedEntry>,
}

// Not derived: the page is a published document, and its schema is the published Artifact
// Inventory v1 schema (with its own definitions), which a derive would only approximate.
impl JsonSchema for InventoryPage {
    fn schema_name() -> Cow<'static, str> {
        "InventoryPage".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema: Value =
            serde_json::from_str(ARTIFACT_INVENTORY_V1).expect("the published schema is JSON");
        if let Some(object) = schema.as_object_mut() {
            object.remove("$schema");
            object.remove("$id");
        }
        Schema::try_from(schema).expect("the published schema is an object")
    }
}

/// The directory or archive an inventory covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InventoryRoot {
    /// Directory or zip archive.
    pub kind: RootKind,
    /// The path as the caller gave it.
    pub path: String,
}

/// What kind of root an inventory covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootKind {
    /// A directory tree.
    Directory,
    /// A zip archive, read without extracting.
    Zip,
}

/// The position of a page in its inventory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PagePosition {
    /// This page, from 0.
    pub index: u64,
    /// Number of pages.
    pub count: u64,
    /// Most occurrences (and most rejected entries) per page.
    pub size: u64,
    /// Occurrences over all pages.
    pub total_occurrences: u64,
    /// Rejected entries over all pages.
    pub total_rejected: u64,
}

/// One inventoried file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Occurrence {
    /// Stable occurrence ID (`occ-` and 32 hexadecimal digits).
    pub occurrence_id: String,
    /// Path below the root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content, lowercase hexadecimal.
    pub sha256: String,
    /// Executable format detected from the first bytes.
    pub format: ExecutableFormat,
}

/// A file format recognised from its first bytes.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutableFormat {
    /// ELF (`7f 45 4c 46`).
    Elf,
    /// A thin Mach-O, 32 or 64 bit, either byte order.
    MachO,
    /// A Mach-O universal ("fat") binary.
    MachOFat,
    /// A PE image (`MZ` with a `PE\0\0` signature).
    Pe,
    /// A zip archive (also JAR, APK, IPA...).
    Zip,
    /// WebAssembly.
    Wasm,
    /// A Java class file.
    JavaClass,
    /// A Unix `ar` archive (static library, `.deb`).
    Ar,
    /// A script with a `#!` line.
    Script,
    /// Anything else.
    Unknown,
}

/// An entry seen but not inventoried.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RejectedEntry {
    /// The entry's name as found, lossily decoded, at most 4,096 characters.
    pub path: String,
    /// Why it was not inventoried.
    pub reason: RejectReason,
    /// Declared size, for `too_large`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Why an entry was not inventoried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// An archive entry with an absolute path.
    AbsolutePath,
    /// An archive entry with a `..` component.
    ParentComponent,
    /// A name that is not UTF-8, holds a NUL byte, or is empty.
    InvalidName,
    /// A path longer than [`super::MAX_PATH_CHARS`].
    PathTooLong,
    /// One of several archive entries whose names are one path once normalised (`dup.txt`,
    /// `./dup.txt`, `dup.txt/`): every one of them is reported, none inventoried.
    DuplicatePath,
    /// A symbolic link (in a directory or stored in an archive), never followed.
    Symlink,
    /// A symbolic link whose target is outside the root.
    SymlinkOutsideRoot,
    /// A symbolic link to a directory (never descended).
    SymlinkToDirectory,
    /// A symbolic link that does not resolve.
    DanglingSymlink,
    /// A FIFO, socket or device.
    SpecialFile,
    /// A directory deeper than [`super::InventoryLimits::max_depth`].
    TooDeep,
    /// A file larger than [`super::InventoryLimits::max_file_bytes`].
    TooLarge,
    /// An entry that could not be read (permissions, I/O error, encryption, bad compression or
    /// CRC, an archive entry whose bytes do not add up to its declared size).
    Unreadable,
    /// A file whose size or modification time changed while it was hashed, or that gave more
    /// or fewer bytes than its size: no digest is listed, since it would be of no state the
    /// file ever had.
    ChangedWhileReading,
}

/// A document that is not a valid inventory page.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a valid artifact inventory page: {violation}")]
pub struct InvalidPage {
    /// Where and why.
    pub violation: SchemaViolation,
}

impl InvalidPage {
    fn at(pointer: String, message: impl AsRef<str>) -> InvalidPage {
        InvalidPage {
            violation: SchemaViolation::new(pointer, message),
        }
    }
}

/// Validates `document` against the artifact inventory v1 schema and reads it.
///
/// Beyond the schema, a valid page has `page.index` below `page.count`, at most `page.size`
/// occurrences and rejected entries, paths in strictly increasing order, and occurrence IDs
/// that match the manifest ID and path. Integers must be written without a fraction.
pub fn parse_page(document: &Value) -> Result<InventoryPage, InvalidPage> {
    INVENTORY_PAGE
        .check(document)
        .map_err(|violation| InvalidPage { violation })?;
    let page: InventoryPage = serde_json::from_value(document.clone())
        .map_err(|error| InvalidPage::at(String::new(), error.to_string()))?;
    check_consistency(&page)?;
    Ok(page)
}

fn check_consistency(page: &InventoryPage) -> Result<(), InvalidPage> {
    let position = &page.page;
    if position.index >= position.count {
        return Err(InvalidPage::at(
            "/page/index".into(),
            format!(
                "{} is not below page.count {}",
                position.index, position.count
            ),
        ));
    }
    for (field, len) in [
        ("occurrences", page.occurrences.len()),
        ("rejected", page.rejected.len()),
    ] {
        if u64::try_from(len).map_or(true, |len| len > position.size) {
            return Err(InvalidPage::at(
                format!("/{field}"),
                format!("{len} entries exceed page.size {}", position.size),
            ));
        }
    }
    for (index, pair) in page.occurrences.windows(2).enumerate() {
        if pair[0].path >= pair[1].path {
            return Err(InvalidPage::at(
                format!("/occurrences/{}/path", index + 1),
                "paths must be in strictly increasing order",
            ));
        }
    }
    for (index, pair) in page.rejected.windows(2).enumerate() {
        if pair[0] > pair[1] {
            return Err(InvalidPage::at(
                format!("/rejected/{}/path", index + 1),
                "rejected entries must be in path order",
            ));
        }
    }
    for (index, occurrence) in page.occurrences.iter().enumerate() {
        if occurrence.occurrence_id != occurrence_id_for(&page.manifest_id, &occurrence.path) {
            return Err(InvalidPage::at(
                format!("/occurrences/{index}/occurrence_id"),
                "does not match manifest_id and path",
            ));
        }
    }
    Ok(())
}
