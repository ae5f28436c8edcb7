//! The scheduled rotation (the key rotation function, invoked by an EventBridge schedule): one
//! [`rotation::rotate`] with the configuration every binary reads. A rotation that is not due
//! (the `next` key too recent: a retried or doubled invocation) is a success that changes
//! nothing.

use serde_json::{json, Value};

use super::ring::Plan;
use super::{rotation, KeyError, KeyRingDocument, SigningBackend};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;

/// Rotates the ring; returns what was done, for the function's log and answer.
pub async fn rotate_now(config: &Config) -> Result<Value, KeyError> {
    let legacy =
        KeyRingDocument::load(config.signing.secret_arn.as_deref(), &config.data_dir).await?;
    let store = crate::store::open_signing_key_ring(&config.store_location()).await?;
    let backend = SigningBackend::connect(&config.signing).await;
    let factory = backend.factory(&legacy.server_secret()?);
    let done = rotation::rotate(store.as_ref(), &factory, &legacy, SystemClock.now()).await?;
    let outcome = match &done.plan {
        Plan::AddNext => json!({ "outcome": "next key published" }),
        Plan::Promote => json!({ "outcome": "rotated" }),
        Plan::NotDue {
            next_kid,
            eligible_at,
        } => json!({ "outcome": "not due", "next": next_kid, "eligible_at": eligible_at }),
    };
    tracing::info!(%outcome, version = ?done.version, "signing key rotation");
    if !matches!(done.plan, Plan::NotDue { .. }) {
        let active = done.ring.active().ok().map(|k| k.kid.as_str());
        crate::audit::key_rotated(config, active, done.ring.next_key().map(|k| k.kid.as_str()))
            .await;
    }
    Ok(json!({
        "result": outcome,
        "version": done.version,
        "active": done.ring.active().ok().map(|k| k.kid.clone()),
        "next": done.ring.next_key().map(|k| k.kid.clone()),
    }))
}
