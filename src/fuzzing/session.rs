//! The session's parsers of untrusted documents: process captures, inventory pages and zip
//! archives (the `capture_parser`, `inventory_parser` and `zip_reader` targets). Each check
//! panics when an invariant breaks.

use std::io::Cursor;

use serde_json::Value;

use crate::capture::{CAPTURE_SCHEMA, CaptureValidity, Stream, ValidCapture, classify_capture};
use crate::inventory::{
    Inventory, InventoryError, InventoryLimits, PageSize, manifest_id_of, occurrence_id_for,
    parse_page,
};
use crate::text::QUOTED_CHARS;

/// Capture classification on arbitrary bytes (`capture_parser`): classifying is total and
/// repeatable, a valid capture has the typed view claims read, and a violation points into the
/// document.
pub fn check_capture(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let class = classify_capture(&document);
    assert_eq!(classify_capture(&document), class);
    match class {
        CaptureValidity::ValidV4 => {
            let capture = ValidCapture::new(&document).expect("valid captures have a view");
            assert!(capture.exit().is_some());
            assert!(capture.stream(Stream::Stdout).is_some());
            assert!(capture.stream(Stream::Stderr).is_some());
            assert_eq!(document["schema"], CAPTURE_SCHEMA);
        }
        CaptureValidity::OtherVersion(found) => {
            assert!(ValidCapture::new(&document).is_none());
            assert_eq!(document["schema"], CAPTURE_SCHEMA);
            assert_eq!(document["version"], Value::Number(found.clone()));
            assert_ne!(found.as_f64(), Some(4.0));
        }
        CaptureValidity::Invalid(invalid) => {
            assert!(ValidCapture::new(&document).is_none());
            assert_points_into(&document, &invalid.violation.pointer);
            assert!(!invalid.violation.message.is_empty());
        }
    }
}

/// A violation's pointer names a value of the document, or, when a long key made it longer than
/// error text may quote, it is cut (`...` after [`QUOTED_CHARS`] characters) and the part before
/// its last whole segment names one.
fn assert_points_into(document: &Value, pointer: &str) {
    if document.pointer(pointer).is_some() {
        return;
    }
    let kept = pointer
        .strip_suffix("...")
        .filter(|kept| kept.chars().count() == QUOTED_CHARS)
        .unwrap_or_else(|| panic!("{pointer:?} names no value and was not cut"));
    let parent = &kept[..kept.rfind('/').expect("a cut pointer has a segment")];
    assert!(
        document.pointer(parent).is_some(),
        "the whole segments of the cut pointer {pointer:?} name a value"
    );
}

/// The inventory page parser on arbitrary bytes (`inventory_parser`): a valid page has
/// confined paths and derived occurrence IDs and serializes back to the input; a violation
/// points into the document.
pub fn check_inventory_page(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match parse_page(&document) {
        Ok(page) => {
            assert!(page.page.index < page.page.count);
            for occurrence in &page.occurrences {
                assert_eq!(
                    occurrence.occurrence_id,
                    occurrence_id_for(&page.manifest_id, &occurrence.path)
                );
                assert!(
                    occurrence
                        .path
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != "..")
                );
                assert!(!occurrence.path.contains('\0'));
            }
            // A valid page is exactly what the typed page serializes to.
            assert_eq!(serde_json::to_value(&page).unwrap(), document);
        }
        Err(invalid) => {
            assert_points_into(&document, &invalid.violation.pointer);
            assert!(!invalid.violation.message.is_empty());
        }
    }
}

/// The zip inventory reader on arbitrary bytes (`zip_reader`).
pub fn check_zip(data: &[u8]) {
    let limits = InventoryLimits {
        max_entries: 256,
        max_file_bytes: 1 << 20,
        max_total_bytes: 4 << 20,
        max_depth: 64,
    };
    let inventory = match Inventory::of_zip_reader(Cursor::new(data), "fuzz.zip", &limits) {
        Ok(inventory) => inventory,
        Err(error) => {
            assert!(matches!(
                error,
                InventoryError::NotAZip { .. }
                    | InventoryError::TooManyEntries { .. }
                    | InventoryError::TooManyBytes { .. }
            ));
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    let occurrences = inventory.occurrences();
    assert!(occurrences.len() + inventory.rejected().len() <= limits.max_entries);
    assert!(
        occurrences
            .windows(2)
            .all(|pair| pair[0].path < pair[1].path)
    );
    let mut total = 0;
    for occurrence in occurrences {
        // Every inventoried path stays below the root.
        assert!(!occurrence.path.starts_with('/'));
        assert!(!occurrence.path.contains('\\') && !occurrence.path.contains('\0'));
        assert!(
            occurrence
                .path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..")
        );
        assert!(occurrence.size <= limits.max_file_bytes);
        assert_eq!(occurrence.sha256.len(), 64);
        assert_eq!(
            occurrence.occurrence_id,
            occurrence_id_for(inventory.manifest_id(), &occurrence.path)
        );
        total += occurrence.size;
    }
    assert!(total <= limits.max_total_bytes);
    assert_eq!(
        inventory.manifest_id(),
        manifest_id_of(
            occurrences
                .iter()
                .map(|o| (o.path.as_str(), o.sha256.as_str()))
        )
    );
    let mut covered = 0;
    for page in inventory.pages(PageSize::new(7).unwrap()) {
        let document = serde_json::to_value(&page).unwrap();
        assert_eq!(parse_page(&document).unwrap(), page);
        covered += page.occurrences.len();
    }
    assert_eq!(covered, occurrences.len());
}

/// Decoding of stored rows on arbitrary bytes (`store_rows`): the input is split at NUL bytes
/// into the columns of an Evidence record, a revision of an unknown, a session's binary and a
/// revision of an annotation; decoding never panics, and whatever decodes encodes back to a
/// row that decodes the same.
pub fn check_store_rows(data: &[u8]) {
    use crate::session::durable::rows::{
        RecordRow, decode_binary, decode_record, decode_unknown, encode_binary, encode_unknown,
    };
    let text = String::from_utf8_lossy(data);
    let mut columns = text.split('\0');
    let mut next = || columns.next().unwrap_or("");
    let (id, sequence, operation, arguments, result) = (next(), next(), next(), next(), next());
    let (provider, document, unknown_id, revision, binary) =
        (next(), next(), next(), next(), next());
    let row = RecordRow {
        id,
        sequence: sequence.parse().unwrap_or(1),
        operation,
        arguments,
        result,
        provider: (!provider.is_empty()).then_some(provider),
        document: (!document.is_empty()).then_some(document),
    };
    if let Ok(record) = decode_record(row) {
        let arguments = record.arguments.to_string();
        let result = record.result.to_string();
        let again = decode_record(RecordRow {
            arguments: &arguments,
            result: &result,
            ..row
        })
        .expect("a decoded record encodes to a row that decodes");
        assert_eq!(again, record);
    }
    if let Ok(unknown) = decode_unknown(unknown_id, revision) {
        let again = decode_unknown(unknown_id, &encode_unknown(&unknown))
            .expect("a decoded revision encodes to a row that decodes");
        assert_eq!(again, unknown);
    }
    if let Ok(kept) = decode_binary("bs_fuzz", binary) {
        let again = decode_binary("bs_fuzz", &encode_binary(&kept))
            .expect("a decoded binary encodes to a row that decodes");
        assert_eq!(again, kept);
    }
    let (annotation_id, annotation) = (next(), next());
    if let Ok(revision) =
        crate::session::durable::rows::decode_annotation(annotation_id, annotation)
    {
        let encoded = crate::session::durable::rows::encode_annotation(&revision);
        let again = crate::session::durable::rows::decode_annotation(annotation_id, &encoded)
            .expect("a decoded annotation encodes to a row that decodes");
        assert_eq!(again, revision);
    }
}

/// The prototype check of `annotate` on arbitrary text (`annotation_prototype`): the C parser
/// behind it never panics or overflows its stack, answers the same twice, and accepts only
/// what the check's own bounds allow (no preprocessor line, comment or body, at most
/// [`MAX_DECLARATION_CHARS`](crate::annotations::MAX_DECLARATION_CHARS) characters).
pub fn check_prototype(data: &[u8]) {
    use crate::annotations::{MAX_DECLARATION_CHARS, check_declaration};
    let text = String::from_utf8_lossy(data);
    let checked = check_declaration(&text);
    assert_eq!(check_declaration(&text), checked);
    if checked.is_ok() {
        assert!(text.chars().count() <= MAX_DECLARATION_CHARS);
        for refused in ["#", "/*", "//", "{"] {
            assert!(!text.contains(refused), "{refused} accepted in {text:?}");
        }
    }
}

/// The tracer transcript parser on arbitrary bytes (`strace_transcript`): parsing is total and
/// repeatable, it keeps within its bounds, and every event it makes fits the Process Capture v4
/// schema (a capture holding them, numbered in order, is valid).
pub fn check_transcript(data: &[u8]) {
    use crate::capture::trace::{
        MAX_EVENTS, MAX_FRAMES, is_process_start, is_program_start, parse_trace,
    };
    let program = "/w/p";
    let trace = parse_trace(data, program);
    assert_eq!(parse_trace(data, program), trace);
    assert!(trace.events.len() <= MAX_EVENTS);
    if let Some(fault) = &trace.fault {
        assert!(fault.frames.len() <= MAX_FRAMES);
    }
    for line in String::from_utf8_lossy(data).lines() {
        let _ = (is_program_start(line, program), is_process_start(line));
    }
    let mut last = 0;
    let events: Vec<Value> = trace
        .events
        .iter()
        .enumerate()
        .map(|(seq, event)| {
            let mut event = event.clone();
            let t_ms = event
                .get("t_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .max(last);
            last = t_ms;
            event.insert("t_ms".to_owned(), t_ms.into());
            event.insert("seq".to_owned(), seq.into());
            Value::Object(event)
        })
        .collect();
    let document = serde_json::json!({
        "schema": CAPTURE_SCHEMA,
        "version": 4,
        "subject": {"document": program},
        "command": {"argv": [program], "cwd": "/w", "env": {}},
        "bounds": {"wall_time_ms": 1000, "output_bytes": 0, "network": "none"},
        "approval": {"approved_by": "fuzz", "approved_at": "2026-01-01T00:00:00Z", "scope": "fuzz"},
        "exit": {"code": 0, "timed_out": false},
        "streams": {
            "stdout": {"sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "bytes": 0, "truncated": false},
            "stderr": {"sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "bytes": 0, "truncated": false}
        },
        "events": events,
    });
    assert_eq!(
        classify_capture(&document),
        CaptureValidity::ValidV4,
        "events from a transcript fit the capture schema"
    );
}
