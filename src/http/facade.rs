//! The envelope façade: a call that reached the tool answers 200 with the bare envelope as
//! `application/json`, whatever its `ok`; only faults of the transport answer otherwise (see
//! [`Fault`](super::Fault)).

use ::http::{Response, StatusCode};
use serde::Serialize;

use super::media::{APPLICATION_JSON, json_response};
use crate::Envelope;

/// The 200 response for a call that reached the tool: the bare envelope as
/// `application/json`, whatever its `ok`.
///
/// # Errors
///
/// When the envelope does not serialize (its result is not a JSON object).
///
/// ```
/// use agent_tool_result::http::envelope_response;
/// use agent_tool_result::{Classified, Envelope, ToolError};
///
/// // A failure the tool reached is still a 200: the envelope says what went wrong.
/// let failed: Envelope = Envelope::failure(ToolError::new(Classified::ELEMENT_NOT_FOUND, "none"));
/// let response = envelope_response(&failed)?;
/// assert_eq!(response.status(), 200);
/// assert_eq!(response.headers()["content-type"], "application/json");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn envelope_response<T: Serialize>(
    envelope: &Envelope<T>,
) -> Result<Response<Vec<u8>>, serde_json::Error> {
    let body = envelope.to_json_vec()?;
    Ok(json_response(StatusCode::OK, APPLICATION_JSON, body))
}
