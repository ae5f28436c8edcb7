//! Recording audit events (docs/decisions.md, Audit events): made here with the time, a
//! time-ordered id and the current request's facts; stored with the fact they record where the
//! fact is a store write (the caller passes them to that write, then [`logged`] them), otherwise
//! [`record`]ed on their own, best effort.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::audit::{
    AuditEvent, AuditId, AuditKind, AuthenticationFailure, KeyId, RequestFacts,
};
use crate::domain::ClientId;
use crate::random::RandomExt;
use crate::store::StoreLocation;

/// The log target of audit events.
pub const TARGET: &str = "audit";

/// The counter of events that could not be stored.
pub const WRITE_FAILURES: &str = "audit_write_failures_total";

/// Every failed authentication of a known client, by reason (the events are sampled; this is not).
pub const AUTHENTICATION_FAILURES: &str = "client_authentication_failures_total";

/// How often one instance records `client.authentication_failed` for one client at most.
const AUTHENTICATION_FAILURE_SAMPLE_SECONDS: UnixTime = 60;

/// When each client's last `client.authentication_failed` was recorded by this instance.
static LAST_AUTHENTICATION_FAILURE: LazyLock<Mutex<HashMap<ClientId, UnixTime>>> =
    LazyLock::new(Mutex::default);

/// A known client's failed authentication: counted every time, recorded as an event at most
/// once a minute per client and instance, so that whoever knows a client id cannot turn each
/// wrong guess into a store write, while the trail still says that, when and from where it
/// happened.
pub async fn authentication_failed(ctx: &Context, client: ClientId, reason: AuthenticationFailure) {
    metrics::counter!(AUTHENTICATION_FAILURES, "reason" => reason.as_str()).increment(1);
    let now = ctx.clock.now();
    {
        let mut last = LAST_AUTHENTICATION_FAILURE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last
            .get(&client)
            .is_some_and(|at| now - at < AUTHENTICATION_FAILURE_SAMPLE_SECONDS && *at <= now)
        {
            return;
        }
        // Bounded: an instance sees few clients; many ids means a flood, and forgetting
        // only lets an event through sooner.
        if last.len() >= 10_000 {
            last.clear();
        }
        last.insert(client, now);
    }
    let kind = AuditKind::ClientAuthenticationFailed { reason };
    record(ctx, event(ctx, kind).client(client)).await;
}

/// A new event of `kind`, now, from the request this task serves (if any).
pub fn event(ctx: &Context, kind: AuditKind) -> AuditEvent {
    AuditEvent::new(
        AuditId::new(
            ctx.random
                .time_ordered_uuid(id_millis(ctx.clock.now_millis())),
        ),
        ctx.clock.now(),
        kind,
        RequestFacts::current(),
    )
}

/// The time in an event's id: now, or a millisecond after the previous event's of this process
/// if that is later, so that events one process records in the same millisecond (a reuse and
/// the revocation it causes; any two under a test's clock) still read back in the order they
/// happened. Stores order by the event's time (seconds), then by the id.
fn id_millis(now_millis: u64) -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let previous = LAST
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
            Some(now_millis.max(last + 1))
        })
        .unwrap_or_default();
    now_millis.max(previous + 1)
}

/// Writes stored events to the `audit` log target: one line each, its `audit` field the
/// event's JSON, as stored.
pub fn logged(events: &[AuditEvent]) {
    for event in events {
        tracing::info!(
            target: TARGET,
            event = event.kind.name(),
            audit = %event.to_json(),
            "audit event"
        );
    }
}

/// Logs and stores `event` on its own, for a fact that is not a store write or whose write
/// cannot carry it. Never fails the caller: a store failure is logged and counted in
/// [`WRITE_FAILURES`], and the log line remains.
pub async fn record(ctx: &Context, event: AuditEvent) {
    logged(std::slice::from_ref(&event));
    if let Err(error) = ctx.store.audit().put_audit_event(&event).await {
        metrics::counter!(WRITE_FAILURES).increment(1);
        tracing::warn!(
            %error,
            event = event.kind.name(),
            audit_id = %event.id,
            "audit event not stored"
        );
    }
}

/// Records a rotation step of the signing key ring (`tokenctl keys rotate`, the scheduled
/// rotation), which keeps the ring apart from the other aggregates: the store is opened for
/// the event alone. Best effort, as [`record`].
pub async fn key_rotated(store: &StoreLocation, active: Option<&str>, next: Option<&str>) {
    let kind = AuditKind::KeyRotated {
        active: active.and_then(KeyId::parse),
        next: next.and_then(KeyId::parse),
    };
    record_key_event(store, kind).await;
}

/// `key.revoked`: `kid` left the ring at once; `active` signs from now on.
pub async fn key_revoked(store: &StoreLocation, kid: &str, active: Option<&str>) {
    let Some(kid) = KeyId::parse(kid) else { return };
    let kind = AuditKind::KeyRevoked {
        kid,
        active: active.and_then(KeyId::parse),
    };
    record_key_event(store, kind).await;
}

async fn record_key_event(store: &StoreLocation, kind: AuditKind) {
    match crate::store::open_cold(store).await {
        Ok(store) => {
            let ctx = Context::new(store);
            record(&ctx, event(&ctx, kind)).await;
        }
        Err(error) => {
            metrics::counter!(WRITE_FAILURES).increment(1);
            tracing::warn!(%error, event = kind.name(), "audit event not stored");
        }
    }
}
