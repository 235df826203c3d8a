//! PNG frames: dimensions from the header without decoding, and (feature `blank-check`) the
//! blank-frame verdict from one pass over the decoded rows.
//!
//! ```
//! use agent_tool_result::frame::png_dimensions;
//!
//! // A PNG's size, read from its header alone.
//! let png = [
//!     0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44,
//!     0x52, 0x00, 0x00, 0x07, 0x80, 0x00, 0x00, 0x04, 0x38, 0x08, 0x06, 0x00, 0x00, 0x00,
//! ];
//! assert_eq!(png_dimensions(&png)?, (1920, 1080));
//! assert!(png_dimensions(b"GIF89a").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "blank-check")]
use crate::observation::BlankCheck;

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];

/// The largest frame, in pixels, that is decoded for a blank check (16384 x 16384). A header
/// claiming more is refused before any pixel is read.
pub const MAX_PIXELS: u64 = 1 << 28;

/// Why bytes could not be read as a PNG capture.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct FrameError {
    kind: FrameErrorKind,
    detail: String,
}

/// The kinds of [`FrameError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The bytes do not start with a PNG signature and header.
    NotPng,
    /// The header says the frame is larger than [`MAX_PIXELS`].
    TooLarge,
    /// The PNG is truncated or its data is corrupt.
    Corrupt,
    /// The capture's `base64` text does not decode.
    InvalidBase64,
}

impl FrameError {
    pub(crate) fn new(kind: FrameErrorKind, detail: impl Into<String>) -> Self {
        FrameError {
            kind,
            detail: detail.into(),
        }
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> FrameErrorKind {
        self.kind
    }
}

/// Reads a PNG's width and height from its header, without decoding the image.
///
/// ```
/// let png = [
///     0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n', 0, 0, 0, 13, b'I', b'H', b'D', b'R',
///     0, 0, 3, 32, 0, 0, 2, 88, 8, 6, 0, 0, 0,
/// ];
/// assert_eq!(agent_tool_result::frame::png_dimensions(&png)?, (800, 600));
/// # Ok::<(), agent_tool_result::frame::FrameError>(())
/// ```
///
/// # Errors
///
/// [`FrameErrorKind::NotPng`] when the bytes lack the PNG signature or a well-formed `IHDR`.
pub fn png_dimensions(png: &[u8]) -> Result<(u32, u32), FrameError> {
    let not_png = |why: &str| FrameError::new(FrameErrorKind::NotPng, format!("not a PNG: {why}"));
    if png.len() < SIGNATURE.len() || png[..8] != SIGNATURE {
        return Err(not_png("the PNG signature is missing"));
    }
    if png.len() < 24 {
        return Err(not_png("the header is truncated"));
    }
    if png[8..12] != [0, 0, 0, 13] || &png[12..16] != b"IHDR" {
        return Err(not_png("the first chunk is not a 13-byte IHDR"));
    }
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    let limit = 1 << 31;
    if width == 0 || height == 0 || width >= limit || height >= limit {
        return Err(not_png("the header's width or height is out of range"));
    }
    Ok((width, height))
}

/// Computes the blank-frame verdict of a PNG in one pass over its decoded rows.
///
/// Colours are compared at 5 bits per channel (alpha ignored), so compression noise does not
/// split a flat fill. The dominant colour's share of all pixels is `dominantFraction`; the frame
/// is blank at [`BlankCheck::BLANK_THRESHOLD`] or above, and the dominant colour is dark when
/// its luma is below a quarter of full scale. Every colour type and bit depth the `png` crate
/// decodes is handled (palette, grey, grey+alpha, RGB, RGBA, 1 to 16 bits, interlaced).
///
/// # Errors
///
/// [`FrameError`] when the bytes are not a PNG, are truncated or corrupt, or are larger than
/// [`MAX_PIXELS`].
#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
pub fn blank_check(png: &[u8]) -> Result<BlankCheck, FrameError> {
    let (width, height) = png_dimensions(png)?;
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_PIXELS {
        return Err(FrameError::new(
            FrameErrorKind::TooLarge,
            format!(
                "the PNG is {width}x{height}, more than the {MAX_PIXELS} pixels a blank check decodes"
            ),
        ));
    }
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(corrupt)?;
    let (color, _) = reader.output_color_type();
    let mut histogram = Histogram::new(color);
    let line = reader.output_line_size(width).unwrap_or(usize::MAX);
    if pixels < PARALLEL_PIXELS || reader.info().interlaced || line > MAX_BATCH_BYTES / 8 {
        // Small frames, interlaced ones, and rows so wide that a batch would hold only a few
        // of them are counted as they decode: the decoder's own row buffers are all it takes.
        while let Some(row) = reader.next_row().map_err(corrupt)? {
            histogram.count_row(row.data());
        }
    } else {
        histogram = count_alongside(&mut reader, histogram)?;
    }
    histogram.verdict()
}

/// From this many pixels up, rows are counted on a second thread while the next ones decode.
#[cfg(feature = "blank-check")]
const PARALLEL_PIXELS: u64 = 1 << 18;

/// Rows handed to the counting thread at a time, at most.
#[cfg(feature = "blank-check")]
const ROWS_PER_BATCH: usize = 128;

/// The bytes of one batch, at most: memory is bounded by bytes, not rows, whatever the width.
/// Three batches circulate, so counting on a second thread costs at most three times this.
#[cfg(feature = "blank-check")]
const MAX_BATCH_BYTES: usize = 1 << 20;

#[cfg(feature = "blank-check")]
#[allow(clippy::needless_pass_by_value)] // used as `map_err(corrupt)`
fn corrupt(err: png::DecodingError) -> FrameError {
    FrameError::new(
        FrameErrorKind::Corrupt,
        format!("the PNG does not decode: {err}"),
    )
}

/// Decodes on this thread and counts on a second one. Rows are decoded straight into batch
/// buffers that circulate between the two threads, so the count costs little more than the
/// decode in wall time and memory stays bounded (three batches of at most
/// [`MAX_BATCH_BYTES`], not the frame). For non-interlaced images only: every row then has the
/// same length.
#[cfg(feature = "blank-check")]
fn count_alongside<R: std::io::BufRead + std::io::Seek>(
    reader: &mut png::Reader<R>,
    mut histogram: Histogram,
) -> Result<Histogram, FrameError> {
    use std::sync::mpsc;

    let line = reader
        .output_line_size(reader.info().width)
        .ok_or_else(|| FrameError::new(FrameErrorKind::TooLarge, "a PNG row is too long"))?;
    let rows_per_batch = (MAX_BATCH_BYTES / line).clamp(1, ROWS_PER_BATCH);
    let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<u8>, usize)>(2);
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..3 {
        free_tx
            .send(vec![0; line * rows_per_batch])
            .expect("the pool is open");
    }
    let mut last = Histogram::new(histogram.color);
    std::thread::scope(|scope| {
        let counter = scope.spawn(move || {
            for (batch, rows) in full_rx {
                for row in batch.chunks_exact(line).take(rows) {
                    histogram.count_row(row);
                }
                // The decoder may have stopped and dropped the pool; nothing to return then.
                let _ = free_tx.send(batch);
            }
            histogram
        });
        // The final, partial batch is counted here while the counter finishes the others.
        let decoded = (|| -> Result<(), FrameError> {
            loop {
                let mut batch = free_rx.recv().expect("the counter returns every batch");
                let mut rows = 0;
                for row in batch.chunks_exact_mut(line) {
                    if reader.read_row(row).map_err(corrupt)?.is_none() {
                        for row in batch.chunks_exact(line).take(rows) {
                            last.count_row(row);
                        }
                        return Ok(());
                    }
                    rows += 1;
                }
                if full_tx.send((batch, rows)).is_err() {
                    return Ok(());
                }
            }
        })();
        drop(full_tx);
        let mut histogram = counter.join().expect("the counting thread does not panic");
        decoded?;
        histogram.add(&last);
        Ok(histogram)
    })
}

/// Pixels compared at once when looking for the end of a run.
#[cfg(feature = "blank-check")]
const SPAN_PIXELS: u32 = 16;

/// The number of colours at 5 bits per channel.
#[cfg(feature = "blank-check")]
const BINS: usize = 1 << 15;

/// A run of identical pixels being counted.
#[cfg(feature = "blank-check")]
struct Run<P> {
    current: P,
    len: u32,
}

/// A decoded 8-bit pixel layout.
#[cfg(feature = "blank-check")]
trait Pixel: Copy + Eq {
    /// Bytes per pixel.
    const SIZE: usize;
    /// Reads one pixel from exactly `SIZE` bytes.
    fn read(bytes: &[u8]) -> Self;
    /// The histogram bin: the colour at 5 bits per channel, alpha ignored.
    fn bin(self) -> usize;
}

#[cfg(feature = "blank-check")]
fn bin(r: u8, g: u8, b: u8) -> usize {
    (usize::from(r >> 3) << 10) | (usize::from(g >> 3) << 5) | usize::from(b >> 3)
}

/// RGBA, compared as one `u32`.
#[cfg(feature = "blank-check")]
#[derive(Clone, Copy, PartialEq, Eq)]
struct Rgba(u32);

#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
impl Pixel for Rgba {
    const SIZE: usize = 4;
    fn read(bytes: &[u8]) -> Self {
        Rgba(u32::from_ne_bytes(bytes.try_into().expect("4 bytes")))
    }
    fn bin(self) -> usize {
        let [r, g, b, _] = self.0.to_ne_bytes();
        bin(r, g, b)
    }
}

#[cfg(feature = "blank-check")]
#[derive(Clone, Copy, PartialEq, Eq)]
struct Rgb([u8; 3]);

#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
impl Pixel for Rgb {
    const SIZE: usize = 3;
    fn read(bytes: &[u8]) -> Self {
        Rgb(bytes.try_into().expect("3 bytes"))
    }
    fn bin(self) -> usize {
        bin(self.0[0], self.0[1], self.0[2])
    }
}

#[cfg(feature = "blank-check")]
#[derive(Clone, Copy, PartialEq, Eq)]
struct GreyAlpha([u8; 2]);

#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
impl Pixel for GreyAlpha {
    const SIZE: usize = 2;
    fn read(bytes: &[u8]) -> Self {
        GreyAlpha(bytes.try_into().expect("2 bytes"))
    }
    fn bin(self) -> usize {
        bin(self.0[0], self.0[0], self.0[0])
    }
}

#[cfg(feature = "blank-check")]
#[derive(Clone, Copy, PartialEq, Eq)]
struct Grey(u8);

#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
impl Pixel for Grey {
    const SIZE: usize = 1;
    fn read(bytes: &[u8]) -> Self {
        Grey(bytes[0])
    }
    fn bin(self) -> usize {
        bin(self.0, self.0, self.0)
    }
}

/// Pixel counts per colour at 5 bits per channel.
#[cfg(feature = "blank-check")]
struct Histogram {
    color: png::ColorType,
    bins: Box<[u32]>,
}

#[cfg(feature = "blank-check")]
#[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
impl Histogram {
    fn new(color: png::ColorType) -> Self {
        Histogram {
            color,
            bins: vec![0; BINS].into_boxed_slice(),
        }
    }

    /// Adds another histogram's counts to this one.
    fn add(&mut self, other: &Histogram) {
        for (bin, n) in self.bins.iter_mut().zip(other.bins.iter()) {
            *bin += n;
        }
    }

    /// Counts one decoded row, whose layout the transformations reduced to 8-bit grey,
    /// grey+alpha, RGB or RGBA (palettes are expanded).
    fn count_row(&mut self, row: &[u8]) {
        use png::ColorType;
        match self.color {
            ColorType::Rgba => self.count_runs::<Rgba>(row),
            ColorType::Rgb => self.count_runs::<Rgb>(row),
            ColorType::GrayscaleAlpha => self.count_runs::<GreyAlpha>(row),
            ColorType::Grayscale | ColorType::Indexed => self.count_runs::<Grey>(row),
        }
    }

    /// Counts runs of identical pixels with one histogram update each. A span of
    /// [`SPAN_PIXELS`] pixels that repeats the current colour (the bulk of a screenshot) is
    /// checked with one branch.
    fn count_runs<P: Pixel>(&mut self, row: &[u8]) {
        let span_bytes = P::SIZE * SPAN_PIXELS as usize;
        let Some(first) = row.get(..P::SIZE) else {
            return;
        };
        let mut run = Run {
            current: P::read(first),
            len: 0,
        };
        let mut spans = row.chunks_exact(span_bytes);
        for span in spans.by_ref() {
            let same = span
                .chunks_exact(P::SIZE)
                .fold(true, |same, p| same & (P::read(p) == run.current));
            if same {
                run.len += SPAN_PIXELS;
            } else {
                self.count_pixels(span, &mut run);
            }
        }
        self.count_pixels(spans.remainder(), &mut run);
        self.bins[run.current.bin()] += run.len;
    }

    fn count_pixels<P: Pixel>(&mut self, pixels: &[u8], run: &mut Run<P>) {
        for p in pixels.chunks_exact(P::SIZE) {
            let p = P::read(p);
            if p == run.current {
                run.len += 1;
            } else {
                self.bins[run.current.bin()] += run.len;
                *run = Run { current: p, len: 1 };
            }
        }
    }

    fn verdict(&self) -> Result<BlankCheck, FrameError> {
        let total: u64 = self.bins.iter().map(|&n| u64::from(n)).sum();
        let (dominant, &count) = self
            .bins
            .iter()
            .enumerate()
            .max_by_key(|&(_, n)| n)
            .expect("the histogram has bins");
        if total == 0 {
            return Err(FrameError::new(
                FrameErrorKind::Corrupt,
                "the PNG has no pixels",
            ));
        }
        #[allow(clippy::cast_precision_loss)] // pixel counts are at most 2^28
        let fraction = f64::from(count) / total as f64;
        let channel = |shift: usize| ((dominant >> shift) & 0x1F) * 8 + 4;
        let luma = 299 * channel(10) + 587 * channel(5) + 114 * channel(0);
        let dark = luma < 64 * 1000;
        BlankCheck::from_fraction(fraction.clamp(0.0, 1.0), dark)
            .map_err(|err| FrameError::new(FrameErrorKind::Corrupt, err.to_string()))
    }
}
