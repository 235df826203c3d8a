//! `IntoResponse` for envelopes, faults and problems (feature `axum`).

use axum_core::body::Body;
use axum_core::response::{IntoResponse, Response};
use serde::Serialize;

use super::{Fault, Problem, envelope_response};
use crate::Envelope;

/// 200 with the envelope; an envelope whose result does not serialize is a server bug and
/// answers 500 with a problem.
impl<T: Serialize> IntoResponse for Envelope<T> {
    fn into_response(self) -> Response {
        match envelope_response(&self) {
            Ok(response) => response.map(Body::from),
            Err(err) => Problem::of_error(http::StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!("the tool's envelope does not serialize: {err}"))
                .into_response()
                .map(Body::from),
        }
    }
}

impl IntoResponse for Fault {
    fn into_response(self) -> Response {
        Fault::into_response(self).map(Body::from)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        Problem::into_response(self).map(Body::from)
    }
}

/// The REST profile's response with its default settings: 200, 202 with `Retry-After`, or a
/// 422 policy-deny problem; fields that do not serialize are a server bug and answer 500.
impl<T: Serialize> IntoResponse for crate::guarantee::GuaranteeResult<T> {
    fn into_response(self) -> Response {
        match super::RestProfile::default().response(&self) {
            Ok(response) => response.map(Body::from),
            Err(err) => Problem::of_error(http::StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!("the guarantee result does not serialize: {err}"))
                .into_response()
                .map(Body::from),
        }
    }
}
