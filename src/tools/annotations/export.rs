//! The texts of `export_annotations`: an IDAPython script, a Python script for Ghidra's
//! Script Manager, radare2 commands, JSON. Every value is quoted as a JSON string, which is
//! also a valid Python string literal (JSON escapes are a subset of Python's, and `/` is never
//! escaped); radare2 comments travel base64-encoded.

use std::collections::BTreeMap;

use serde_json::json;

use crate::annotations::{Annotation, AnnotationKind};

/// The newest effective revision of each kind at each address, in address order.
fn newest(effective: &[Annotation]) -> Vec<&Annotation> {
    let mut kept: BTreeMap<(u64, AnnotationKind), &Annotation> = BTreeMap::new();
    for revision in effective {
        let address = revision
            .address
            .as_deref()
            .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        kept.insert((address, revision.kind), revision);
    }
    kept.into_values().collect()
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

fn parts(revision: &Annotation) -> (&str, &str) {
    (
        revision.address.as_deref().unwrap_or("0x0"),
        revision.value.as_deref().unwrap_or(""),
    )
}

fn cites(revision: &Annotation) -> String {
    revision.evidence.join(", ")
}

/// An IDAPython script.
pub(super) fn idapython(effective: &[Annotation]) -> String {
    let mut script = String::from(
        "# Annotations exported by rea (export_annotations); run with File > Script file.\n\
         # Each is an inference of the investigation, backed by the Evidence it cites.\n\
         import idc\n\n",
    );
    for revision in newest(effective) {
        let (address, value) = parts(revision);
        script.push_str(&format!("# {}: {}\n", revision.id, cites(revision)));
        let line = match revision.kind {
            AnnotationKind::Name => {
                format!(
                    "idc.set_name({address}, {}, idc.SN_NOWARN)\n",
                    quoted(value)
                )
            }
            AnnotationKind::Comment => format!("idc.set_cmt({address}, {}, 0)\n", quoted(value)),
            AnnotationKind::Prototype => format!("idc.SetType({address}, {})\n", quoted(value)),
            AnnotationKind::Undo => String::new(),
        };
        script.push_str(&line);
    }
    script
}

/// A Python script for Ghidra's Script Manager.
pub(super) fn ghidra(effective: &[Annotation]) -> String {
    let mut script = String::from(
        "# Annotations exported by rea (export_annotations); run from Ghidra's Script Manager.\n\
         # Each is an inference of the investigation, backed by the Evidence it cites.\n\
         # @category rea\n\
         from ghidra.program.model.symbol import SourceType\n\
         from ghidra.app.util.parser import FunctionSignatureParser\n\
         from ghidra.app.cmd.function import ApplyFunctionSignatureCmd\n\n\
         def rea_name(address, name):\n    \
             function = getFunctionAt(toAddr(address))\n    \
             if function is not None:\n        \
                 function.setName(name, SourceType.USER_DEFINED)\n    \
             else:\n        \
                 createLabel(toAddr(address), name, True, SourceType.USER_DEFINED)\n\n\
         def rea_prototype(address, declaration):\n    \
             parser = FunctionSignatureParser(currentProgram.getDataTypeManager(), None)\n    \
             signature = parser.parse(None, declaration.rstrip(';'))\n    \
             ApplyFunctionSignatureCmd(toAddr(address), signature, SourceType.USER_DEFINED).applyTo(currentProgram)\n\n",
    );
    for revision in newest(effective) {
        let (address, value) = parts(revision);
        script.push_str(&format!("# {}: {}\n", revision.id, cites(revision)));
        let line = match revision.kind {
            AnnotationKind::Name => format!("rea_name({address}, {})\n", quoted(value)),
            AnnotationKind::Comment => {
                format!("setEOLComment(toAddr({address}), {})\n", quoted(value))
            }
            AnnotationKind::Prototype => format!("rea_prototype({address}, {})\n", quoted(value)),
            AnnotationKind::Undo => String::new(),
        };
        script.push_str(&line);
    }
    script
}

/// radare2 commands.
pub(super) fn radare2(effective: &[Annotation]) -> String {
    let mut commands = String::from(
        "# Annotations exported by rea (export_annotations); load with r2 -i FILE.\n\
         # Each is an inference of the investigation, backed by the Evidence it cites.\n",
    );
    for revision in newest(effective) {
        let (address, value) = parts(revision);
        commands.push_str(&format!("# {}: {}\n", revision.id, cites(revision)));
        let line = match revision.kind {
            AnnotationKind::Name if revision.procedure => {
                format!("af @ {address}\nafn {value} @ {address}\n")
            }
            AnnotationKind::Name => format!("f {value} @ {address}\n"),
            AnnotationKind::Comment => {
                format!("CCu base64:{} @ {address}\n", base64(value.as_bytes()))
            }
            AnnotationKind::Prototype => {
                format!(
                    "af @ {address}\n\"afs {}\" @ {address}\n",
                    value.replace('"', "")
                )
            }
            AnnotationKind::Undo => String::new(),
        };
        commands.push_str(&line);
    }
    commands
}

/// JSON: the document and its effective annotations.
pub(super) fn json(document: &str, effective: &[Annotation]) -> String {
    let annotations: Vec<_> = newest(effective)
        .into_iter()
        .map(|revision| {
            json!({
                "id": revision.id.as_str(),
                "kind": revision.kind,
                "address": revision.address,
                "procedure": revision.procedure,
                "value": revision.value,
                "evidence": revision.evidence,
            })
        })
        .collect();
    let value = json!({
        "schema": "rea-annotations",
        "version": 1,
        "document": document,
        "annotations": annotations,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
