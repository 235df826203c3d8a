//! [`SessionArtifacts`]: the per-session artifact directory, atomic PNG writes, and captures
//! summarized for `lastObservation`.
//!
//! The directory is `<root>/<started>-<sessionId>/` (`started` in UTC as `yyyyMMdd-HHmmss`) and
//! captures are named `capture-<UTC yyyyMMdd-HHmmssfff>-<n>.png`, `n` counting up per session.
//! A write goes to a temporary file in the same directory and is then linked into place, so no
//! reader ever sees half a file and no existing file is ever replaced. A write that fails does
//! not lose the result: the summary carries `artifactError` instead of `artifact`.
//!
//! ```
//! use agent_tool_result::artifact::SessionArtifacts;
//! use std::time::{Duration, UNIX_EPOCH};
//!
//! let root = std::env::temp_dir().join(format!("atr-artifact-doc-{}", std::process::id()));
//! let started = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
//! let artifacts = SessionArtifacts::new(&root, "s-4f2a", started)?;
//! assert!(artifacts.dir().ends_with("20261201-090000-s-4f2a"));
//! // A session id that could name a path outside the root is refused before the disk is touched.
//! assert!(SessionArtifacts::new(&root, "../etc", started).is_err());
//! std::fs::remove_dir_all(&root).ok();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::Value;

use crate::frame::{FrameError, FrameErrorKind, png_dimensions};
use crate::observation::{
    ArtifactOutcome, BlankCheck, CaptureSummary, ObservationError, WindowInfo,
};
use crate::{JsonObject, Observation};

/// The longest session id accepted for a directory name.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// The per-session artifact directory.
///
/// ```
/// use agent_tool_result::artifact::SessionArtifacts;
/// use agent_tool_result::observation::ArtifactOutcome;
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let root = std::env::temp_dir().join(format!("atr-doc-{}", std::process::id()));
/// let started = UNIX_EPOCH + Duration::from_secs(1_782_900_900);
/// let artifacts = SessionArtifacts::new(&root, "s-4f2a", started)?;
/// assert!(artifacts.dir().ends_with("20260701-101500-s-4f2a"));
///
/// assert!(SessionArtifacts::new(&root, "../escape", started).is_err());
/// # std::fs::remove_dir_all(&root).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SessionArtifacts {
    dir: PathBuf,
    next: AtomicU64,
}

impl SessionArtifacts {
    /// The artifact directory of session `session_id`, started at `started`, under `root`.
    /// Nothing is created until the first write.
    ///
    /// # Errors
    ///
    /// [`InvalidSessionId`] when the id is empty, longer than [`MAX_SESSION_ID_LEN`], `.` or
    /// `..`, or holds anything but ASCII letters, digits, `-`, `_` and `.`: such an id could name
    /// a path outside `root` (a separator, a drive, NUL) and is refused before the disk is touched.
    pub fn new(
        root: impl AsRef<Path>,
        session_id: &str,
        started: SystemTime,
    ) -> Result<Self, InvalidSessionId> {
        check_session_id(session_id)?;
        let name = format!("{}-{session_id}", utc(started).seconds());
        Ok(SessionArtifacts {
            dir: root.as_ref().join(name),
            next: AtomicU64::new(1),
        })
    }

    /// The session's artifact directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a capture's PNG bytes to a new file in the directory and returns its path.
    ///
    /// The bytes are written to a temporary file and linked into place under a name no file has
    /// yet; safe to call from many threads at once.
    ///
    /// # Errors
    ///
    /// The I/O error, when the directory cannot be created or written.
    pub fn write_png(&self, png: &[u8]) -> io::Result<PathBuf> {
        fs::create_dir_all(&self.dir)?;
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let name = format!("capture-{}-{n}.png", utc(SystemTime::now()).millis());
            let path = self.dir.join(&name);
            let temporary = self
                .dir
                .join(format!(".{name}.{:016x}.tmp", temporary_suffix()));
            // Only a file this write created is ever removed; a name that is taken (a file
            // left by a process that stopped, whose id this one reuses) is passed over.
            match write_new(&temporary, png) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(err),
            }
            let placed = place(&temporary, &path);
            let _ = fs::remove_file(&temporary);
            match placed {
                Ok(()) => return Ok(path),
                // Another writer (another process on the same session) took the name.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Summarizes a PNG capture: writes it, reads its size from the header and computes its
    /// blank check. A failed write is not an error: the summary carries `artifactError`.
    ///
    /// # Errors
    ///
    /// [`FrameError`] when the bytes are not a decodable PNG or are too large to check.
    #[cfg(feature = "blank-check")]
    #[cfg_attr(docsrs, doc(cfg(feature = "blank-check")))]
    pub fn summarize_png(
        &self,
        png: &[u8],
        window: Option<WindowInfo>,
    ) -> Result<CaptureSummary, FrameError> {
        let blank_check = crate::frame::blank_check(png)?;
        self.summarize_png_with(png, window, blank_check)
    }

    /// Like [`SessionArtifacts::summarize_png`], with a blank check the caller already has (the
    /// image is then not decoded, only its header read).
    ///
    /// # Errors
    ///
    /// [`FrameError`] when the bytes do not start with a PNG header.
    pub fn summarize_png_with(
        &self,
        png: &[u8],
        window: Option<WindowInfo>,
        blank_check: BlankCheck,
    ) -> Result<CaptureSummary, FrameError> {
        let (width, height) = png_dimensions(png)?;
        let artifact = ArtifactOutcome::of_write(self.write_png(png), &self.dir);
        let summary = CaptureSummary::new(width, height, png.len() as u64, blank_check, artifact);
        Ok(match window {
            Some(window) => summary.with_window(window),
            None => summary,
        })
    }

    /// The observation to keep from a prior call's result object.
    ///
    /// A capture result (one with a `base64` field) is decoded, its PNG written and a
    /// [`CaptureSummary`] returned in its place, the base64 dropped; its `window`, `handle` and
    /// `file` carry over. Any other result is kept as it is, checked against the no-base64 rule.
    ///
    /// # Errors
    ///
    /// [`CaptureError`] when the `base64` does not decode to a PNG, or the object breaks the
    /// no-base64 rule elsewhere.
    pub fn observe(&self, result: &JsonObject) -> Result<Observation, CaptureError> {
        let Some(encoded) = result.get("base64") else {
            return Observation::try_from(result.clone()).map_err(CaptureError::Observation);
        };
        let png = encoded
            .as_str()
            .and_then(|text| base64::engine::general_purpose::STANDARD.decode(text).ok())
            .ok_or_else(|| {
                CaptureError::Frame(FrameError::new(
                    FrameErrorKind::InvalidBase64,
                    "the capture's base64 field is not a base64 string",
                ))
            })?;
        let window = result.get("window").and_then(WindowInfo::deserialize_from);
        let mut summary = self.summarize_for_observation(&png, window, result)?;
        if let Some(handle) = result.get("handle").and_then(Value::as_i64) {
            summary = summary.with_handle(handle);
        }
        if let Some(file) = result.get("file").and_then(Value::as_str) {
            summary = summary.with_file(file);
        }
        Ok(Observation::Capture(summary))
    }

    #[cfg(feature = "blank-check")]
    fn summarize_for_observation(
        &self,
        png: &[u8],
        window: Option<WindowInfo>,
        _: &JsonObject,
    ) -> Result<CaptureSummary, CaptureError> {
        self.summarize_png(png, window).map_err(CaptureError::Frame)
    }

    /// Without the `blank-check` feature, the producer's own `blankCheck` is kept.
    #[cfg(not(feature = "blank-check"))]
    fn summarize_for_observation(
        &self,
        png: &[u8],
        window: Option<WindowInfo>,
        result: &JsonObject,
    ) -> Result<CaptureSummary, CaptureError> {
        use serde::Deserialize;
        let blank_check = result
            .get("blankCheck")
            .filter(|b| b.is_object())
            .and_then(|b| BlankCheck::deserialize(b).ok())
            .ok_or_else(|| {
                CaptureError::Frame(FrameError::new(
                    FrameErrorKind::Corrupt,
                    "the capture has no blankCheck and the blank-check feature is off",
                ))
            })?;
        self.summarize_png_with(png, window, blank_check)
            .map_err(CaptureError::Frame)
    }
}

/// Writes made by this process, across every [`SessionArtifacts`]: part of each temporary
/// file's name, so that no two writes share one.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// The part of a temporary file's name that no other write picks: this process's random hash
/// keys (std seeds them from the operating system's randomness) over this write's number and
/// the process id. Processes that share the directory (two hosts on one network file system,
/// or a process that reuses the id of one that stopped and left its file) do not meet on one
/// name; if they ever did, the write passes the name over.
fn temporary_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut hasher = KEYS
        .get_or_init(std::collections::hash_map::RandomState::new)
        .build_hasher();
    hasher.write_u64(WRITES.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Writes `bytes` to a file that must not exist yet; a file it created and could not fill is
/// removed again.
fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let written = file.write_all(bytes).and_then(|()| file.flush());
    if written.is_err() {
        drop(file);
        let _ = fs::remove_file(path);
    }
    written
}

/// Moves `temporary` to `path` unless `path` exists: a hard link fails rather than replace,
/// which `rename` would not. Where links are unsupported, `rename` after a check is the
/// fallback.
fn place(temporary: &Path, path: &Path) -> io::Result<()> {
    match fs::hard_link(temporary, path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(err),
        Err(_) if path.exists() => Err(io::ErrorKind::AlreadyExists.into()),
        Err(_) => fs::rename(temporary, path),
    }
}

/// Why a capture result could not become an observation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// The image bytes are not a usable PNG.
    #[error("the capture is not a usable PNG")]
    Frame(#[source] FrameError),
    /// The object breaks the no-base64 rule outside its `base64` field.
    #[error("the capture result cannot be kept as an observation")]
    Observation(#[source] ObservationError),
}

/// The error for a session id that is not safe as a directory name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid session id for an artifact directory: {reason}")]
pub struct InvalidSessionId {
    reason: &'static str,
}

fn check_session_id(id: &str) -> Result<(), InvalidSessionId> {
    let reason = if id.is_empty() {
        "it is empty"
    } else if id.len() > MAX_SESSION_ID_LEN {
        "it is longer than 128 bytes"
    } else if id == "." || id == ".." {
        "it names the current or parent directory"
    } else if id.contains(['/', '\\']) {
        "it contains a path separator"
    } else if id.contains('\0') {
        "it contains a NUL byte"
    } else if id.contains(':') {
        "it contains a drive or stream separator (:)"
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        "only ASCII letters, digits, '-', '_' and '.' are allowed"
    } else {
        return Ok(());
    };
    Err(InvalidSessionId { reason })
}

/// A UTC instant broken into calendar fields, for directory and file names.
struct Utc {
    year: i64,
    month: u32,
    day: u32,
    hour: u64,
    minute: u64,
    second: u64,
    milli: u32,
}

impl Utc {
    /// `yyyyMMdd-HHmmss`.
    fn seconds(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `yyyyMMdd-HHmmssfff`.
    fn millis(&self) -> String {
        format!("{}{:03}", self.seconds(), self.milli)
    }
}

/// Breaks a time into UTC calendar fields (civil-from-days, proleptic Gregorian); times before
/// 1970 are taken as 1970.
fn utc(time: SystemTime) -> Utc {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let of_day = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    Utc {
        year,
        month: u32::try_from(month).unwrap_or(1),
        day: u32::try_from(day).unwrap_or(1),
        hour: of_day / 3_600,
        minute: of_day % 3_600 / 60,
        second: of_day % 60,
        milli: since.subsec_millis(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(secs * 1_000 + millis)
    }

    #[test]
    fn temporary_names_do_not_repeat() {
        let suffixes: std::collections::HashSet<u64> =
            (0..10_000).map(|_| temporary_suffix()).collect();
        assert_eq!(suffixes.len(), 10_000);
    }

    #[test]
    fn utc_fields_match_known_dates() {
        assert_eq!(utc(at(0, 0)).millis(), "19700101-000000000");
        assert_eq!(utc(at(951_782_400, 7)).millis(), "20000229-000000007");
        assert_eq!(utc(at(1_782_900_902, 123)).millis(), "20260701-101502123");
        assert_eq!(utc(at(4_102_444_799, 999)).millis(), "20991231-235959999");
        assert_eq!(utc(at(4_107_542_399, 0)).seconds(), "21000228-235959");
        assert_eq!(
            utc(UNIX_EPOCH - Duration::from_secs(5)).seconds(),
            "19700101-000000"
        );
    }

    #[test]
    fn session_ids_that_are_plain_names_are_accepted() {
        for id in ["s-4f2a", "4f2a9c1e0b3d", "run_7.retry-2", "a"] {
            assert_eq!(check_session_id(id), Ok(()), "{id}");
        }
    }
}
