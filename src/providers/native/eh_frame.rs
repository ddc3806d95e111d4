//! Function starts from ELF `.eh_frame`: the initial location of every FDE.
//!
//! Only what is needed to find `pc_begin` is decoded: record lengths, CIE augmentations (for the
//! FDE pointer encoding) and the first FDE field. Parsing stops at the terminator or at the
//! first record that does not fit; records whose pointer encoding cannot be resolved from the
//! section alone (text-, data- or function-relative, indirect) are skipped.

use std::collections::HashMap;

/// How to read `.eh_frame`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameLayout {
    /// Address of the section's first byte.
    pub(crate) section_address: u64,
    /// Whether multi-byte values are little-endian.
    pub(crate) little_endian: bool,
    /// Size of an address in bytes: 4 or 8.
    pub(crate) address_size: u8,
}

const DW_EH_PE_OMIT: u8 = 0xff;
const DW_EH_PE_INDIRECT: u8 = 0x80;

/// A function described by an FDE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameStart {
    /// `pc_begin`: the function's first address.
    pub(crate) address: u64,
    /// `pc_range`: its length in bytes, when readable.
    pub(crate) size: Option<u64>,
}

/// The `pc_begin` and `pc_range` of every FDE in `data`, in section order (duplicates
/// possible).
pub(crate) fn fde_starts(data: &[u8], layout: FrameLayout) -> Vec<FrameStart> {
    let mut starts = Vec::new();
    let mut cies: HashMap<usize, Option<u8>> = HashMap::new();
    let mut offset = 0usize;
    while let Some(record) = Record::at(data, offset, layout) {
        offset = record.end;
        if record.is_cie {
            continue;
        }
        let Some(cie_offset) = record.id_offset.checked_sub(record.id as usize) else {
            continue;
        };
        let encoding = *cies
            .entry(cie_offset)
            .or_insert_with(|| fde_encoding(data, cie_offset, layout));
        let Some(encoding) = encoding else { continue };
        let mut reader = Reader::new(data, record.body, record.end, layout);
        if let Some(address) = reader.pointer(encoding) {
            // pc_range uses the value format of the encoding, without its application.
            let size = reader.pointer_raw(encoding & 0x0f).filter(|&size| size > 0);
            starts.push(FrameStart { address, size });
        }
    }
    starts
}

/// One CIE or FDE record.
struct Record {
    /// Offset of the CIE id / CIE pointer field.
    id_offset: usize,
    /// Value of that field.
    id: u64,
    is_cie: bool,
    /// Offset just after the id field.
    body: usize,
    /// Offset of the next record.
    end: usize,
}

impl Record {
    fn at(data: &[u8], offset: usize, layout: FrameLayout) -> Option<Record> {
        let mut reader = Reader::new(data, offset, data.len(), layout);
        let length = reader.u32()?;
        if length == 0 {
            return None;
        }
        let (length, id_size) = if length == u32::MAX {
            (reader.u64()?, 8)
        } else {
            (u64::from(length), 4)
        };
        let id_offset = reader.position;
        let end = id_offset.checked_add(usize::try_from(length).ok()?)?;
        if end > data.len() {
            return None;
        }
        let mut reader = Reader::new(data, id_offset, end, layout);
        let id = if id_size == 8 {
            reader.u64()?
        } else {
            u64::from(reader.u32()?)
        };
        Some(Record {
            id_offset,
            id,
            is_cie: id == 0,
            body: reader.position,
            end,
        })
    }
}

/// The FDE pointer encoding of the CIE at `offset`; `None` when it is not a readable CIE.
fn fde_encoding(data: &[u8], offset: usize, layout: FrameLayout) -> Option<u8> {
    let record = Record::at(data, offset, layout).filter(|r| r.is_cie)?;
    let mut reader = Reader::new(data, record.body, record.end, layout);
    let version = reader.u8()?;
    if !matches!(version, 1 | 3 | 4) {
        return None;
    }
    let augmentation = reader.c_string()?;
    if version == 4 {
        reader.u8()?; // address size
        reader.u8()?; // segment selector size
    }
    if augmentation.windows(2).any(|w| w == b"eh") {
        reader.skip(usize::from(layout.address_size))?;
    }
    reader.uleb128()?; // code alignment
    reader.uleb128()?; // data alignment (signed; only skipped)
    if version == 1 {
        reader.u8()?;
    } else {
        reader.uleb128()?;
    }
    let mut encoding = 0; // DW_EH_PE_absptr
    if augmentation.first() == Some(&b'z') {
        reader.uleb128()?;
        for &letter in &augmentation[1..] {
            match letter {
                b'R' => encoding = reader.u8()?,
                b'L' => {
                    reader.u8()?;
                }
                b'P' => {
                    let personality = reader.u8()?;
                    reader.pointer_raw(personality & !DW_EH_PE_INDIRECT)?;
                }
                b'S' | b'B' | b'G' => {}
                _ => break,
            }
        }
    }
    Some(encoding)
}

/// A bounded cursor over `data[position..end]`.
struct Reader<'a> {
    data: &'a [u8],
    position: usize,
    end: usize,
    layout: FrameLayout,
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], position: usize, end: usize, layout: FrameLayout) -> Reader<'a> {
        Reader {
            data,
            position,
            end: end.min(data.len()),
            layout,
        }
    }

    fn bytes(&mut self, count: usize) -> Option<&'a [u8]> {
        let end = self.position.checked_add(count)?;
        if end > self.end {
            return None;
        }
        let bytes = &self.data[self.position..end];
        self.position = end;
        Some(bytes)
    }

    fn skip(&mut self, count: usize) -> Option<()> {
        self.bytes(count).map(|_| ())
    }

    fn unsigned(&mut self, size: usize) -> Option<u64> {
        let bytes = self.bytes(size)?;
        let fold = |value: u64, byte: &u8| (value << 8) | u64::from(*byte);
        Some(if self.layout.little_endian {
            bytes.iter().rev().fold(0, fold)
        } else {
            bytes.iter().fold(0, fold)
        })
    }

    fn u8(&mut self) -> Option<u8> {
        self.bytes(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.unsigned(4).map(|v| v as u32)
    }

    fn u64(&mut self) -> Option<u64> {
        self.unsigned(8)
    }

    fn c_string(&mut self) -> Option<&'a [u8]> {
        let rest = &self.data[self.position..self.end];
        let length = rest.iter().position(|&b| b == 0)?;
        let text = &rest[..length];
        self.position += length + 1;
        Some(text)
    }

    fn uleb128(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn sleb128(&mut self) -> Option<u64> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift < 64 {
                value |= u64::from(byte & 0x7f) << shift;
            }
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    value |= u64::MAX << shift;
                }
                return Some(value);
            }
            if shift >= 70 {
                return None;
            }
        }
    }

    /// Reads a value in the format part of `encoding`, sign-extended for signed formats.
    fn pointer_raw(&mut self, encoding: u8) -> Option<u64> {
        let sign_extend = |value: u64, bits: u32| {
            let shift = 64 - bits;
            (((value << shift) as i64) >> shift) as u64
        };
        match encoding & 0x0f {
            0x00 => self.unsigned(usize::from(self.layout.address_size)),
            0x01 => self.uleb128(),
            0x02 => self.unsigned(2),
            0x03 => self.unsigned(4),
            0x04 => self.unsigned(8),
            0x09 => self.sleb128(),
            0x0a => self.unsigned(2).map(|v| sign_extend(v, 16)),
            0x0b => self.unsigned(4).map(|v| sign_extend(v, 32)),
            0x0c => self.unsigned(8),
            _ => None,
        }
    }

    /// Reads a pointer with `encoding`, resolved to an address; `None` for encodings that
    /// need more than the section itself.
    fn pointer(&mut self, encoding: u8) -> Option<u64> {
        if encoding == DW_EH_PE_OMIT || encoding & DW_EH_PE_INDIRECT != 0 {
            return None;
        }
        let field_address = self
            .layout
            .section_address
            .wrapping_add(self.position as u64);
        let value = match encoding & 0x70 {
            0x00 => self.pointer_raw(encoding)?,
            0x10 => self.pointer_raw(encoding)?.wrapping_add(field_address),
            0x50 => {
                let size = usize::from(self.layout.address_size);
                let misalignment = self.position % size;
                if misalignment != 0 {
                    self.skip(size - misalignment)?;
                }
                self.pointer_raw(encoding)?
            }
            _ => return None,
        };
        Some(if self.layout.address_size == 4 {
            value & 0xffff_ffff
        } else {
            value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: FrameLayout = FrameLayout {
        section_address: 0x2000,
        little_endian: true,
        address_size: 8,
    };

    /// A CIE with augmentation "zR" and FDE encoding pcrel|sdata4, then one FDE.
    fn section(pc_begin_delta: i32) -> Vec<u8> {
        let mut data = Vec::new();
        let cie_body = [
            &0u32.to_le_bytes()[..],
            &[1],
            b"zR\0",
            &[1, 0x78, 16, 1, 0x1b],
        ]
        .concat();
        data.extend((cie_body.len() as u32).to_le_bytes());
        data.extend(&cie_body);
        let fde_id_offset = data.len() + 4;
        let fde_body = [
            &(fde_id_offset as u32).to_le_bytes()[..],
            &pc_begin_delta.to_le_bytes(),
            &16u32.to_le_bytes(),
            &[0],
        ]
        .concat();
        data.extend((fde_body.len() as u32).to_le_bytes());
        data.extend(&fde_body);
        data.extend(0u32.to_le_bytes());
        data
    }

    #[test]
    fn pc_relative_starts_resolve_against_the_field_address() {
        let data = section(-0x1000);
        // CIE: 4 length + 13 body bytes; FDE: 4 length + 4 CIE pointer, then pc_begin.
        let field = 0x2000 + 17 + 4 + 4;
        let start = FrameStart {
            address: field - 0x1000,
            size: Some(16),
        };
        assert_eq!(fde_starts(&data, LAYOUT), [start]);
    }

    #[test]
    fn truncated_sections_yield_what_fits() {
        let data = section(0x40);
        for cut in 0..data.len() {
            let starts = fde_starts(&data[..cut], LAYOUT);
            assert!(starts.len() <= 1);
        }
    }
}
