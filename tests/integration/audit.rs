//! Audit events (docs/decisions.md, Audit events), on both stores: each kind after the flow that
//! causes it, with its client, principal, family and request facts, read back from the store as
//! `tokenctl audit` reads them and from the `audit` log target; no secret in either; and the
//! family's `family.started` lands with the family or not at all (the fault proxy, a locked
//! SQLite file). `tokenctl audit` itself is tested in the `tokenctl` suite.

mod admin_changes;
mod best_effort;
mod families;
mod same_write;

use integration_tests::app::TestApp;
use serde_json::Value;
use token_service::clock::Clock;
use token_service::domain::audit::{AuditEvent, AuditSubject};
use token_service::domain::{ClientId, FamilyId, PrincipalId};
use token_service::store::AuditQuery;

/// The events filed under `subject`, newest first, as `tokenctl audit` reads them.
pub async fn events_of(app: &TestApp, subject: AuditSubject) -> Vec<AuditEvent> {
    app.store
        .audit()
        .audit_events(AuditQuery {
            subject,
            since: None,
            now: app.clock.now(),
        })
        .await
        .expect("audit_events")
}

pub fn family_subject(id: &str) -> AuditSubject {
    AuditSubject::Family(FamilyId::parse(id).unwrap())
}

pub fn client_subject(id: &str) -> AuditSubject {
    AuditSubject::Client(ClientId::parse(id).unwrap())
}

pub fn principal_subject(id: PrincipalId) -> AuditSubject {
    AuditSubject::Principal(id)
}

/// The events' names, in the order given.
pub fn names(events: &[AuditEvent]) -> Vec<&'static str> {
    events.iter().map(|event| event.kind.name()).collect()
}

/// The event's JSON, as stored and as `tokenctl audit --json` prints it.
pub fn json(event: &AuditEvent) -> Value {
    serde_json::to_value(event).unwrap()
}

/// The `family_id` of a token response's access token (its `jti` record names it).
pub async fn family_of(app: &TestApp, tokens: &Value) -> String {
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    let record = app
        .store
        .families()
        .get_refresh_token(
            &token_service::secrets::TokenHash::of(refresh),
            app.clock.now(),
        )
        .await
        .unwrap()
        .expect("the refresh token is stored");
    record.family_id.to_string()
}
