//! [`CaptureSummary`]: a capture as `lastObservation` keeps it, without its image bytes.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::WindowInfo;
use crate::Rule;
use crate::breach::{self, Breach};
use crate::object::FieldName;
use crate::object::{ObjectOf, fields, read_once, required};
use crate::strict::Integral;

/// The `kind` that marks a capture summary.
pub(crate) const CAPTURE_SUMMARY_KIND: &str = "capture-summary";

/// The blank-frame verdict of a capture: `{ blank, dominantFraction, dominantIsDark }`.
///
/// ```
/// use agent_tool_result::observation::BlankCheck;
///
/// let check = BlankCheck::from_fraction(0.995, true)?;
/// assert!(check.blank());
/// assert!(BlankCheck::from_fraction(1.5, false).is_err());
/// # Ok::<(), agent_tool_result::observation::InvalidFraction>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[cfg_attr(
    feature = "schemars",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[serde(rename_all = "camelCase")]
pub struct BlankCheck {
    /// Whether the frame counts as blank.
    blank: bool,
    /// The share of pixels, in [0, 1], taken by the single most common colour.
    #[cfg_attr(feature = "schemars", schemars(range(min = 0.0, max = 1.0)))]
    dominant_fraction: f64,
    /// Whether that most common colour is dark (the classic all-black failed capture).
    dominant_is_dark: bool,
}

impl BlankCheck {
    /// The fraction at or above which a frame is blank when the verdict is derived.
    pub const BLANK_THRESHOLD: f64 = 0.99;

    /// A verdict derived from the dominant colour's share: blank at or above
    /// [`BlankCheck::BLANK_THRESHOLD`].
    ///
    /// # Errors
    ///
    /// [`InvalidFraction`] when `dominant_fraction` is not in [0, 1].
    pub fn from_fraction(
        dominant_fraction: f64,
        dominant_is_dark: bool,
    ) -> Result<Self, InvalidFraction> {
        BlankCheck::new(
            dominant_fraction >= BlankCheck::BLANK_THRESHOLD,
            dominant_fraction,
            dominant_is_dark,
        )
    }

    /// A verdict with an explicit `blank` (a producer may use its own threshold).
    ///
    /// # Errors
    ///
    /// [`InvalidFraction`] when `dominant_fraction` is not in [0, 1].
    pub fn new(
        blank: bool,
        dominant_fraction: f64,
        dominant_is_dark: bool,
    ) -> Result<Self, InvalidFraction> {
        if (0.0..=1.0).contains(&dominant_fraction) {
            Ok(BlankCheck {
                blank,
                dominant_fraction,
                dominant_is_dark,
            })
        } else {
            Err(InvalidFraction(dominant_fraction))
        }
    }

    /// Whether the frame counts as blank.
    #[must_use]
    pub fn blank(&self) -> bool {
        self.blank
    }

    /// The share of pixels taken by the most common colour.
    #[must_use]
    pub fn dominant_fraction(&self) -> f64 {
        self.dominant_fraction
    }

    /// Whether the most common colour is dark.
    #[must_use]
    pub fn dominant_is_dark(&self) -> bool {
        self.dominant_is_dark
    }
}

/// The error for a `dominantFraction` outside [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("dominantFraction must be in [0, 1], not {0}")]
pub struct InvalidFraction(f64);

fields! {
    /// A blank check's fields.
    pub(crate) enum BlankCheckField for "a blank check" requires ["blank", "dominantFraction", "dominantIsDark"] {
        Blank = "blank",
        DominantFraction = "dominantFraction",
        DominantIsDark = "dominantIsDark",
    }
}

/// Reads only an object with exactly the three fields, the fraction within [0, 1].
impl<'de> Deserialize<'de> for BlankCheck {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BlankCheckVisitor;

        impl<'de> Visitor<'de> for BlankCheckVisitor {
            type Value = BlankCheck;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a blank check object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BlankCheck, A::Error> {
                let (mut blank, mut fraction, mut dark) = (None, None, None);
                while let Some(field) = map.next_key::<BlankCheckField>()? {
                    match field {
                        BlankCheckField::Blank => {
                            read_once(&mut map, &mut blank, "blank", PhantomData)?;
                        }
                        BlankCheckField::DominantFraction => {
                            read_once(&mut map, &mut fraction, "dominantFraction", PhantomData)?;
                        }
                        BlankCheckField::DominantIsDark => {
                            read_once(&mut map, &mut dark, "dominantIsDark", PhantomData)?;
                        }
                    }
                }
                let object = BlankCheckField::OBJECT;
                let blank = required(blank, object, "blank")?;
                let fraction: f64 = required(fraction, object, "dominantFraction")?;
                let dark = required(dark, object, "dominantIsDark")?;
                BlankCheck::new(blank, fraction, dark).map_err(|err| {
                    breach::raise_at(Rule::FieldType, "/dominantFraction".to_owned(), err)
                })
            }
        }

        deserializer.deserialize_map(BlankCheckVisitor)
    }
}

/// Where a capture's PNG went: written to `artifact`, or not written, with `artifactError`
/// saying why. A summary has exactly one.
///
/// Neither text may be empty (the schema says `minLength: 1`), so both constructors check.
///
/// ```
/// use agent_tool_result::observation::ArtifactOutcome;
///
/// let written = ArtifactOutcome::written("sessions/s-1/capture-1.png")?;
/// assert_eq!(written.path(), Some("sessions/s-1/capture-1.png"));
/// assert_eq!(written.error(), None);
/// assert!(ArtifactOutcome::failed("").is_err());
/// # Ok::<(), agent_tool_result::observation::EmptyArtifactText>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArtifactOutcome {
    written: bool,
    text: String,
}

impl ArtifactOutcome {
    /// The PNG was written to `path` (`artifact` on the wire).
    ///
    /// # Errors
    ///
    /// [`EmptyArtifactText`] when `path` is empty.
    pub fn written(path: impl Into<String>) -> Result<Self, EmptyArtifactText> {
        ArtifactOutcome::new(true, path.into())
    }

    /// The PNG could not be written, for `reason` (`artifactError` on the wire).
    ///
    /// # Errors
    ///
    /// [`EmptyArtifactText`] when `reason` is empty.
    pub fn failed(reason: impl Into<String>) -> Result<Self, EmptyArtifactText> {
        ArtifactOutcome::new(false, reason.into())
    }

    /// The outcome of writing a capture to `written`: its path, or why it failed, which
    /// names the directory, so neither text is ever empty.
    pub(crate) fn of_write(
        written: std::io::Result<std::path::PathBuf>,
        dir: &std::path::Path,
    ) -> Self {
        let (ok, text) = match written {
            Ok(path) => (true, path.to_string_lossy().into_owned()),
            Err(err) => (
                false,
                format!("could not write the capture under {}: {err}", dir.display()),
            ),
        };
        ArtifactOutcome::new(ok, text).unwrap_or_else(|_| ArtifactOutcome {
            written: false,
            text: format!(
                "the capture was written to an unnamed path under {}",
                dir.display()
            ),
        })
    }

    fn new(written: bool, text: String) -> Result<Self, EmptyArtifactText> {
        if text.is_empty() {
            Err(EmptyArtifactText { written })
        } else {
            Ok(ArtifactOutcome { written, text })
        }
    }

    /// Where the PNG was written, if it was.
    #[must_use]
    pub fn path(&self) -> Option<&str> {
        self.written.then_some(self.text.as_str())
    }

    /// Why the PNG was not written, if it was not.
    #[must_use]
    pub fn error(&self) -> Option<&str> {
        (!self.written).then_some(self.text.as_str())
    }

    /// The wire field this outcome is written as: `artifact` or `artifactError`.
    fn field(&self) -> &'static str {
        if self.written {
            "artifact"
        } else {
            "artifactError"
        }
    }
}

/// The error for an empty artifact path or artifact error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a capture summary's {} must not be empty", self.field())]
pub struct EmptyArtifactText {
    written: bool,
}

impl EmptyArtifactText {
    /// The wire field that was empty.
    fn field(self) -> &'static str {
        ArtifactOutcome {
            written: self.written,
            text: String::new(),
        }
        .field()
    }
}

/// A capture summarized for `lastObservation`:
/// `{ kind: "capture-summary", window?, handle?, width, height, encoding: "png", bytes,
/// blankCheck, file?, artifact | artifactError }`, in that key order. `file` is where the
/// capture tool itself saved the image when asked to (the reference producer carries it over).
///
/// Build one with [`SessionArtifacts::summarize_png`](crate::artifact::SessionArtifacts::summarize_png),
/// which writes the PNG and fills every field, or by hand:
///
/// ```
/// use agent_tool_result::observation::{ArtifactOutcome, BlankCheck, CaptureSummary};
///
/// let summary = CaptureSummary::new(
///     800,
///     600,
///     48_213,
///     BlankCheck::from_fraction(0.1043, false)?,
///     ArtifactOutcome::failed("read-only file system")?,
/// );
/// assert_eq!(
///     serde_json::to_string(&summary)?,
///     r#"{"kind":"capture-summary","width":800,"height":600,"encoding":"png","bytes":48213,"blankCheck":{"blank":false,"dominantFraction":0.1043,"dominantIsDark":false},"artifactError":"read-only file system"}"#,
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSummary {
    window: Option<WindowInfo>,
    handle: Option<i64>,
    width: u32,
    height: u32,
    bytes: u64,
    blank_check: BlankCheck,
    file: Option<String>,
    artifact: ArtifactOutcome,
}

impl CaptureSummary {
    /// A summary of a `width` x `height` PNG of `bytes` bytes.
    #[must_use]
    pub fn new(
        width: u32,
        height: u32,
        bytes: u64,
        blank_check: BlankCheck,
        artifact: ArtifactOutcome,
    ) -> Self {
        CaptureSummary {
            window: None,
            handle: None,
            width,
            height,
            bytes,
            blank_check,
            file: None,
            artifact,
        }
    }

    /// Sets the captured window.
    #[must_use]
    pub fn with_window(mut self, window: WindowInfo) -> Self {
        self.window = Some(window);
        self
    }

    /// Sets the captured window's handle, when the full window is not known.
    #[must_use]
    pub fn with_handle(mut self, handle: i64) -> Self {
        self.handle = Some(handle);
        self
    }

    /// Sets the file the capture tool saved the image to, when it was asked to.
    #[must_use]
    pub fn with_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    /// The file the capture tool saved the image to, if any.
    #[must_use]
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The captured window, if known.
    #[must_use]
    pub fn window(&self) -> Option<&WindowInfo> {
        self.window.as_ref()
    }

    /// The captured window's handle, if given apart from the window.
    #[must_use]
    pub fn handle(&self) -> Option<i64> {
        self.handle
    }

    /// Width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Size of the PNG in bytes.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The blank-frame verdict.
    #[must_use]
    pub fn blank_check(&self) -> &BlankCheck {
        &self.blank_check
    }

    /// Where the PNG went.
    #[must_use]
    pub fn artifact(&self) -> &ArtifactOutcome {
        &self.artifact
    }
}

impl Serialize for CaptureSummary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = 7
            + usize::from(self.window.is_some())
            + usize::from(self.handle.is_some())
            + usize::from(self.file.is_some());
        let mut out = serializer.serialize_struct("CaptureSummary", len)?;
        out.serialize_field("kind", CAPTURE_SUMMARY_KIND)?;
        match &self.window {
            Some(window) => out.serialize_field("window", window)?,
            None => out.skip_field("window")?,
        }
        match &self.handle {
            Some(handle) => out.serialize_field("handle", handle)?,
            None => out.skip_field("handle")?,
        }
        out.serialize_field("width", &self.width)?;
        out.serialize_field("height", &self.height)?;
        out.serialize_field("encoding", "png")?;
        out.serialize_field("bytes", &self.bytes)?;
        out.serialize_field("blankCheck", &self.blank_check)?;
        match &self.file {
            Some(file) => out.serialize_field("file", file)?,
            None => out.skip_field("file")?,
        }
        out.serialize_field(self.artifact.field(), &self.artifact.text)?;
        out.end()
    }
}

fields! {
    /// A capture summary's fields.
    pub(crate) enum CaptureField for "a capture summary" requires ["kind", "width", "height", "encoding", "bytes", "blankCheck"] {
        Kind = "kind",
        Window = "window",
        Handle = "handle",
        Width = "width",
        Height = "height",
        Encoding = "encoding",
        Bytes = "bytes",
        BlankCheck = "blankCheck",
        File = "file",
        Artifact = "artifact",
        ArtifactError = "artifactError",
    }
}

impl<'de> Deserialize<'de> for CaptureSummary {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(CaptureVisitor)
    }
}

struct CaptureVisitor;

impl<'de> Visitor<'de> for CaptureVisitor {
    type Value = CaptureSummary;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a capture summary object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CaptureSummary, A::Error> {
        let (mut kind, mut encoding): (Option<String>, Option<String>) = (None, None);
        let (mut window, mut handle, mut blank_check) = (None, None, None);
        let (mut width, mut height, mut bytes) = (None, None, None);
        let (mut artifact, mut artifact_error): (Option<String>, Option<String>) = (None, None);
        let mut file: Option<String> = None;
        while let Some(field) = map.next_key::<CaptureField>()? {
            match field {
                CaptureField::Kind => read_once(&mut map, &mut kind, "kind", PhantomData)?,
                CaptureField::Window => {
                    let seed = ObjectOf {
                        field: "window",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut window, "window", seed)?;
                }
                CaptureField::Handle => {
                    read_once(&mut map, &mut handle, "handle", Integral::new())?;
                }
                CaptureField::Width => read_once(&mut map, &mut width, "width", Integral::new())?,
                CaptureField::Height => {
                    read_once(&mut map, &mut height, "height", Integral::new())?;
                }
                CaptureField::Encoding => {
                    read_once(&mut map, &mut encoding, "encoding", PhantomData)?;
                }
                CaptureField::Bytes => read_once(&mut map, &mut bytes, "bytes", Integral::new())?,
                CaptureField::BlankCheck => {
                    let seed = ObjectOf {
                        field: "blankCheck",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut blank_check, "blankCheck", seed)?;
                }
                CaptureField::File => read_once(&mut map, &mut file, "file", PhantomData)?,
                CaptureField::Artifact => {
                    read_once(&mut map, &mut artifact, "artifact", PhantomData)?;
                }
                CaptureField::ArtifactError => {
                    read_once(&mut map, &mut artifact_error, "artifactError", PhantomData)?;
                }
            }
        }
        let object = CaptureField::OBJECT;
        let kind = required(kind, object, "kind")?;
        if kind != CAPTURE_SUMMARY_KIND {
            return Err(breach::raise_at(
                Rule::FieldType,
                "/kind".to_owned(),
                format_args!("a capture summary's kind is `{CAPTURE_SUMMARY_KIND}`, not `{kind}`"),
            ));
        }
        let encoding = required(encoding, object, "encoding")?;
        if encoding != "png" {
            return Err(breach::raise_at(
                Rule::FieldType,
                "/encoding".to_owned(),
                format_args!("a capture summary's encoding is `png`, not `{encoding}`"),
            ));
        }
        let artifact = match (artifact, artifact_error) {
            (Some(_), Some(_)) => return Err(breach::raise(Breach::BothArtifactFields)),
            (None, None) => return Err(breach::raise(Breach::NoArtifactField)),
            (Some(path), None) => ArtifactOutcome::written(path).map_err(empty)?,
            (None, Some(reason)) => ArtifactOutcome::failed(reason).map_err(empty)?,
        };
        Ok(CaptureSummary {
            window,
            handle,
            width: required(width, object, "width")?,
            height: required(height, object, "height")?,
            bytes: required(bytes, object, "bytes")?,
            blank_check: required(blank_check, object, "blankCheck")?,
            file,
            artifact,
        })
    }
}

fn empty<E: de::Error>(err: EmptyArtifactText) -> E {
    breach::raise_at(Rule::FieldType, format!("/{}", err.field()), err)
}

#[cfg(feature = "schemars")]
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
impl schemars::JsonSchema for CaptureSummary {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CaptureSummary".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let window = generator.subschema_for::<WindowInfo>();
        let blank_check = generator.subschema_for::<BlankCheck>();
        let u32_max = u32::MAX;
        schemars::json_schema!({
            "description": "A capture summarized for lastObservation; its PNG is in the session's artifacts.",
            "type": "object",
            "required": ["kind", "width", "height", "encoding", "bytes", "blankCheck"],
            "additionalProperties": false,
            "properties": {
                "kind": { "const": CAPTURE_SUMMARY_KIND },
                "window": window,
                "handle": { "type": "integer", "format": "int64" },
                "width": { "type": "integer", "minimum": 0, "maximum": u32_max },
                "height": { "type": "integer", "minimum": 0, "maximum": u32_max },
                "encoding": { "const": "png" },
                "bytes": { "type": "integer", "minimum": 0, "maximum": u64::MAX },
                "blankCheck": blank_check,
                "file": { "type": "string" },
                "artifact": { "type": "string", "minLength": 1 },
                "artifactError": { "type": "string", "minLength": 1 },
            },
            "oneOf": [{ "required": ["artifact"] }, { "required": ["artifactError"] }],
        })
    }
}
