//! [`Content`]: MCP content blocks.

use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;

/// One content block of a [`CallToolResult`](super::CallToolResult).
///
/// Text and image blocks are modelled; every other type (`audio`, `resource_link`, `resource`, and
/// any later one) is kept exactly as it was read.
///
/// ```
/// use agent_tool_result::mcp::{CallToolResult, Content};
/// use agent_tool_result::Envelope;
///
/// let envelope: Envelope = Envelope::success(serde_json::json!({ "saved": true }));
/// let result = CallToolResult::from_envelope(&envelope)?.with_image(&[0x89, b'P', b'N', b'G'], "image/png");
/// let kinds: Vec<&str> = result
///     .content()
///     .iter()
///     .map(|block| match block {
///         Content::Text(_) => "text",
///         Content::Image(_) => "image",
///         _ => "other",
///     })
///     .collect();
/// assert_eq!(kinds, ["text", "image"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// `{ "type": "text", "text": ... }`
    Text(TextContent),
    /// `{ "type": "image", "data": <base64>, "mimeType": ... }`
    Image(ImageContent),
    /// Any other block, untouched.
    Other(JsonObject),
}

/// A text block. Fields other than `type` and `text` (`annotations`, `_meta`) are kept.
///
/// ```
/// use agent_tool_result::mcp::TextContent;
///
/// assert_eq!(TextContent::new("{\"ok\":true}").text(), "{\"ok\":true}");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TextContent {
    text: String,
    rest: JsonObject,
}

impl TextContent {
    /// A text block with `text`.
    #[must_use]
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            rest: JsonObject::new(),
        }
    }

    /// The text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// An image block: base64 `data` and its `mimeType`. Other fields are kept.
///
/// ```
/// use agent_tool_result::mcp::ImageContent;
///
/// let image = ImageContent::encode(&[0x89, b'P', b'N', b'G'], "image/png");
/// assert_eq!(image.data(), "iVBORw==");
/// assert_eq!(image.decode()?, [0x89, b'P', b'N', b'G']);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ImageContent {
    data: String,
    mime_type: String,
    rest: JsonObject,
}

impl ImageContent {
    /// An image block of `bytes`, encoded to base64 here, once.
    #[must_use]
    pub fn encode(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        ImageContent {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
            rest: JsonObject::new(),
        }
    }

    /// The base64 data, as on the wire.
    #[must_use]
    pub fn data(&self) -> &str {
        &self.data
    }

    /// The MIME type, such as `image/png`.
    #[must_use]
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// The image bytes.
    ///
    /// # Errors
    ///
    /// [`InvalidImageData`] when `data` is not valid base64 (checked already when a result
    /// is read, so only a block built by hand can fail).
    pub fn decode(&self) -> Result<Vec<u8>, InvalidImageData> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|err| InvalidImageData(Box::new(err)))
    }
}

/// The error for an image block whose `data` is not valid base64; the decoder's own error is
/// its `source()`.
#[derive(Debug, thiserror::Error)]
#[error("an image block's data is not valid base64")]
pub struct InvalidImageData(#[source] Box<dyn std::error::Error + Send + Sync>);

impl Content {
    /// Roughly how many bytes the block takes on the wire, to size buffers.
    pub(crate) fn len_hint(&self) -> usize {
        match self {
            Content::Text(text) => text.text.len() + 32,
            Content::Image(image) => image.data.len() + image.mime_type.len() + 48,
            Content::Other(_) => 64,
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Content::Text(text) => {
                let mut out = serializer.serialize_map(Some(2 + text.rest.len()))?;
                out.serialize_entry("type", "text")?;
                out.serialize_entry("text", &text.text)?;
                for (key, value) in &text.rest {
                    out.serialize_entry(key, value)?;
                }
                out.end()
            }
            Content::Image(image) => {
                let mut out = serializer.serialize_map(Some(3 + image.rest.len()))?;
                out.serialize_entry("type", "image")?;
                out.serialize_entry("data", &image.data)?;
                out.serialize_entry("mimeType", &image.mime_type)?;
                for (key, value) in &image.rest {
                    out.serialize_entry(key, value)?;
                }
                out.end()
            }
            Content::Other(block) => block.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut block = JsonObject::deserialize(deserializer)?;
        let string = |block: &mut JsonObject, key: &str| match block.remove(key) {
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(D::Error::custom(format_args!(
                "a content block's {key} must be a string"
            ))),
            None => Err(D::Error::custom(format_args!(
                "the content block lacks {key}"
            ))),
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                block.remove("type");
                let text = string(&mut block, "text")?;
                Ok(Content::Text(TextContent { text, rest: block }))
            }
            Some("image") => {
                block.remove("type");
                let data = string(&mut block, "data")?;
                let mime_type = string(&mut block, "mimeType")?;
                if base64::engine::general_purpose::STANDARD
                    .decode(data.as_bytes())
                    .is_err()
                {
                    return Err(D::Error::custom(
                        "an image block's data is not valid base64",
                    ));
                }
                Ok(Content::Image(ImageContent {
                    data,
                    mime_type,
                    rest: block,
                }))
            }
            Some(_) => Ok(Content::Other(block)),
            None => Err(D::Error::custom("a content block needs a string type")),
        }
    }
}
