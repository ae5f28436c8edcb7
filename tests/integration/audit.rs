//! Audit events (docs/decisions.md, Audit events), on both stores: each kind after the flow that
//! causes it, with its client, principal, family and request facts, read back from the store as
//! `tokenctl audit` reads them and from the `audit` log target; no secret in either; and the
//! family's `family.started` lands with the family or not at all (the fault proxy, a locked
//! SQLite file). `tokenctl audit` itself is tested in the `tokenctl` suite.

mod access_tokens;
mod admin_changes;
mod authentication;
mod best_effort;
mod exchange;
mod families;
mod grants;
mod same_write;

use crate::support::app::TestApp;
use crate::support::logs::{assert_no_secret_logged, captured_lines_with};
use serde_json::Value;
use token_domain::audit::{AuditEvent, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{ClientId, FamilyId, PrincipalId};
use token_store::AuditQuery;

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

/// The `family_id` of a token response (`refresh_token`, found by its hash).
pub async fn family_of(app: &TestApp, tokens: &Value) -> String {
    let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
    family_of_refresh_token(app, refresh).await
}

pub async fn family_of_refresh_token(app: &TestApp, refresh: &str) -> String {
    app.stored_refresh_token(refresh)
        .await
        .family_id
        .to_string()
}

/// The `User-Agent` of the requests whose events are checked with [`assert_recorded`].
pub const USER_AGENT: &str = "audit-suite/1.0 (+https://example.com)";

/// `request` with [`USER_AGENT`] and `correlation_id`.
pub fn traced(request: reqwest::RequestBuilder, correlation_id: &str) -> reqwest::RequestBuilder {
    request
        .header("x-correlation-id", correlation_id)
        .header("user-agent", USER_AGENT)
}

/// What one event of a family must say, and the request it must carry.
pub struct Expected<'a> {
    pub event: &'static str,
    pub client_id: &'a str,
    pub principal_type: &'static str,
    pub principal_id: String,
    pub family_id: &'a str,
    /// Of the [`traced`] request that caused it.
    pub correlation_id: &'a str,
}

/// The family's one `expected.event`, as stored (under the family, its client and its
/// principal, as `tokenctl audit` reads it) and as logged to the `audit` target: its JSON.
pub async fn assert_recorded(app: &TestApp, expected: &Expected<'_>) -> Value {
    let events = events_of(app, family_subject(expected.family_id)).await;
    let found: Vec<&AuditEvent> = events
        .iter()
        .filter(|event| event.kind.name() == expected.event)
        .collect();
    assert_eq!(found.len(), 1, "one {}: {events:?}", expected.event);
    let event = json(found[0]);
    assert_eq!(event["event"], expected.event);
    assert_eq!(event["client_id"], expected.client_id, "{event}");
    assert_eq!(event["principal_type"], expected.principal_type, "{event}");
    assert_eq!(event["principal_id"], expected.principal_id, "{event}");
    assert_eq!(event["family_id"], expected.family_id, "{event}");
    assert_eq!(event["source_address"], "127.0.0.1", "{event}");
    assert_eq!(event["user_agent"], USER_AGENT, "{event}");
    assert_eq!(event["correlation_id"], expected.correlation_id, "{event}");
    let principal = PrincipalId::parse(&expected.principal_id).unwrap();
    for subject in [
        client_subject(expected.client_id),
        principal_subject(principal),
    ] {
        assert!(
            events_of(app, subject).await.contains(found[0]),
            "{} filed under {subject:?}",
            expected.event
        );
    }
    let logged: Vec<String> = captured_lines_with(expected.correlation_id)
        .into_iter()
        .filter(|line| {
            line.contains("\"target\":\"audit\"")
                && line.contains(expected.event)
                && line.contains(expected.family_id)
        })
        .collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    event
}

/// No event filed under `subjects`, and no captured log line, holds any of `secrets`.
pub async fn assert_no_secret_recorded(app: &TestApp, subjects: &[AuditSubject], secrets: &[&str]) {
    let mut stored = String::new();
    for subject in subjects {
        for event in events_of(app, *subject).await {
            stored.push_str(&event.to_json());
        }
    }
    assert!(!stored.is_empty(), "events to scan");
    for (i, secret) in secrets.iter().enumerate() {
        assert!(!stored.contains(secret), "secret #{i} is in an audit event");
    }
    assert_no_secret_logged(secrets);
}
