//! The media types the crate answers with, and a response of one.

use ::http::header::{CONTENT_TYPE, HeaderValue};
use ::http::{Response, StatusCode};

/// `application/json`: the content type of an envelope.
pub const APPLICATION_JSON: &str = "application/json";

/// `application/problem+json`: the content type of a problem (RFC 9457).
pub const APPLICATION_PROBLEM_JSON: &str = "application/problem+json";

/// A response with `body` as `content_type`.
pub(crate) fn json_response(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response<Vec<u8>> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
