//! A guarantee call, once its transport has read it: the one order every transport keeps.

use std::sync::Arc;

use serde_json::Value;

use super::{Admission, AdmitOnce, Principal, ServeKeyed, Shared};
use crate::replay::{IdempotencyKey, Reply};

/// Runs a guarantee call that passed the transport, in the one order of every transport: its
/// key checked (a missing or malformed one refused, and counted, before anything else), then
/// the one entry into the sequence, which answers a settled key's replay before it asks the
/// admission. Returns the reply, and the admission when it was asked.
pub(super) async fn serve_keyed(
    shared: &Shared,
    name: &'static str,
    serve: &ServeKeyed,
    principal: Principal,
    key: Result<IdempotencyKey, crate::replay::InvalidKey>,
    arguments: Value,
) -> (Reply, Option<Admission>) {
    let key = match key {
        Ok(key) => key,
        Err(err) => {
            let refusal = err.refusal();
            crate::replay::telemetry::refused_before(name, principal.as_str(), &refusal);
            return (refusal.into(), None);
        }
    };
    let asked = Arc::new(std::sync::Mutex::new(None));
    let admit: AdmitOnce = {
        let (shared, principal, asked) = (shared.clone(), principal.clone(), Arc::clone(&asked));
        Box::new(move || {
            Box::pin(async move {
                let admission = shared.admit(name, &principal).await;
                let refused = admission.refusal().cloned();
                *asked
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(admission);
                refused.map_or(Ok(()), Err)
            })
        })
    };
    let reply = serve(principal, key, arguments, admit).await;
    let admission = asked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    (reply, admission)
}
