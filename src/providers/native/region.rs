//! [`Region`]: one mapped region of an image, as the image reader builds it and the code
//! analysis reads it. It lives apart from both so that neither imports the other for it (the
//! image reader calls the analysis to find procedure starts).

use crate::session::Segment;

/// A mapped region of an image.
pub(crate) struct Region {
    /// The region as `list_segments` shows it; `file_offset` is relative to the image.
    pub(crate) segment: Segment,
    /// Whether it holds code (skipped by string search).
    pub(crate) code: bool,
}

impl Region {
    /// The image bytes of this region, if it has any inside `image`.
    pub(crate) fn bytes<'a>(&self, image: &'a [u8]) -> &'a [u8] {
        let Some(offset) = self.segment.file_offset else {
            return &[];
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let length = usize::try_from(self.segment.file_size).unwrap_or(usize::MAX);
        image
            .get(start..)
            .map_or(&[][..], |rest| &rest[..rest.len().min(length)])
    }
}
