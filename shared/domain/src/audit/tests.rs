//! Audit events' JSON form, their names and subjects.

use std::net::IpAddr;

use super::*;

fn event() -> AuditEvent {
    AuditEvent::new(
        AuditId::new(Uuid::nil()),
        1_795_000_000,
        AuditKind::FamilyRevoked {
            reason: RevocationReason::ReuseDetected,
        },
        RequestFacts {
            source_address: Some(IpAddr::from([192, 0, 2, 1])),
            user_agent: UserAgent::from_header(b"curl/8.5.0"),
            correlation_id: CorrelationId::parse("abc-123"),
        },
    )
    .client(ClientId::new(Uuid::from_u128(1)))
    .principal(PrincipalType::User, PrincipalId::new(Uuid::from_u128(2)))
    .family(FamilyId::new(Uuid::from_u128(3)))
}

#[test]
fn an_access_token_revocation_written_without_a_reason_reads_as_the_endpoints() {
    let kind: AuditKind = serde_json::from_value(serde_json::json!({
        "event": "access_token.revoked",
        "jti": Uuid::from_u128(7).to_string(),
    }))
    .unwrap();
    assert_eq!(
        kind,
        AuditKind::AccessTokenRevoked {
            jti: TokenId::new(Uuid::from_u128(7)),
            reason: RevocationReason::RevocationEndpoint,
        }
    );
}

#[test]
fn serialises_flat_with_its_name_and_reads_back() {
    let event = event();
    let json: serde_json::Value = serde_json::from_str(&event.to_json()).unwrap();
    assert_eq!(json["event"], "family.revoked");
    assert_eq!(json["reason"], "reuse_detected");
    assert_eq!(json["time"], "2026-11-18T11:06:40Z");
    assert_eq!(json["principal_type"], "user");
    assert_eq!(json["source_address"], "192.0.2.1");
    assert_eq!(json["user_agent"], "curl/8.5.0");
    assert_eq!(json["correlation_id"], "abc-123");
    assert_eq!(event.kind.name(), "family.revoked");
    let back: AuditEvent = serde_json::from_str(&event.to_json()).unwrap();
    assert_eq!(back, event);
    let unit = AuditEvent::new(
        AuditId::new(Uuid::nil()),
        0,
        AuditKind::LoginLocked,
        RequestFacts::default(),
    );
    let back: AuditEvent = serde_json::from_str(&unit.to_json()).unwrap();
    assert_eq!(back, unit);
    assert_eq!(unit.subjects(), vec![AuditSubject::Deployment]);
    assert_eq!(event.subjects().len(), 3);
}

#[test]
fn logout_outcomes_name_the_session_and_never_a_token() {
    let sid = SessionId::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap();
    let failed = AuditKind::LogoutFailed {
        sid: sid.clone(),
        attempts: 3,
        reason: LogoutFailure::Rejected,
        status: Some(500),
    };
    let json = serde_json::to_value(&failed).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "event": "logout.failed", "sid": "AbCdEfGhIjKlMnOpQrStUv", "attempts": 3,
            "reason": "rejected", "status": 500,
        })
    );
    assert_eq!(failed.name(), "logout.failed");
    assert_eq!(serde_json::from_value::<AuditKind>(json).unwrap(), failed);
    let delivered = AuditKind::LogoutDelivered { sid, attempts: 1 };
    assert_eq!(delivered.name(), "logout.delivered");
    assert_eq!(
        serde_json::to_value(&delivered).unwrap()["event"],
        "logout.delivered"
    );
}

#[test]
fn key_ids_are_base64url_only() {
    assert_eq!(KeyId::parse("a.b"), None);
    assert_eq!(KeyId::parse(""), None);
    assert!(KeyId::parse("Ab-_09").is_some());
}

#[test]
fn a_refresh_is_stored_under_its_family_only_and_every_other_event_under_each_subject() {
    let family = FamilyId::new(Uuid::from_u128(3));
    let mut refreshed = event();
    refreshed.kind = AuditKind::FamilyRefreshed { generation: 2 };
    assert_eq!(refreshed.stored_under(), vec![AuditSubject::Family(family)]);
    assert_eq!(refreshed.subjects().len(), 3, "still about all three");
    assert!(refreshed.is_about(&AuditSubject::Client(ClientId::new(Uuid::from_u128(1)))));
    assert!(!refreshed.is_about(&AuditSubject::Client(ClientId::new(Uuid::from_u128(9)))));

    let revoked = event();
    assert_eq!(revoked.stored_under(), revoked.subjects());
    let mut without_family = event();
    without_family.kind = AuditKind::FamilyRefreshed { generation: 2 };
    without_family.family_id = None;
    assert_eq!(
        without_family.stored_under(),
        without_family.subjects(),
        "nothing to derive it from: stored under each subject"
    );
}

#[test]
fn an_administrators_changes_to_a_user_name_what_changed() {
    let status = AuditKind::UserStatusSet {
        status: UserStatus::LogonDenied,
    };
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(
        json,
        serde_json::json!({ "event": "user.status_set", "status": "logon-denied" })
    );
    assert_eq!(status.name(), "user.status_set");
    assert_eq!(serde_json::from_value::<AuditKind>(json).unwrap(), status);
    for (factor, spelt) in [
        (RemovedFactor::Passkey, "passkey"),
        (RemovedFactor::AuthenticatorApp, "authenticator_app"),
    ] {
        let removed = AuditKind::SecondFactorRemovedByAdministrator { factor };
        let json = serde_json::to_value(&removed).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "event": "second_factor.removed_by_administrator", "factor": spelt,
            })
        );
        assert_eq!(removed.name(), "second_factor.removed_by_administrator");
        assert_eq!(serde_json::from_value::<AuditKind>(json).unwrap(), removed);
    }
}

#[test]
fn an_administrators_federation_changes_name_what_changed_and_no_value() {
    let idp_id = IdpId::new(Uuid::from_u128(5));
    let cases = [
        (
            AuditKind::CompanySsoSet {
                policy: SsoPolicy::Required,
            },
            serde_json::json!({ "event": "company.sso_set", "policy": "required" }),
        ),
        (
            AuditKind::CompanyIdpAdded { idp_id },
            serde_json::json!({ "event": "company.idp_added", "idp_id": idp_id }),
        ),
        (
            AuditKind::CompanyIdpRefreshed { idp_id },
            serde_json::json!({ "event": "company.idp_refreshed", "idp_id": idp_id }),
        ),
        (
            AuditKind::CompanyIdpRemoved {
                idp_id,
                links_removed: 2,
            },
            serde_json::json!({
                "event": "company.idp_removed", "idp_id": idp_id, "links_removed": 2,
            }),
        ),
        (
            AuditKind::UserLocalSignInSet {
                local_sign_in: true,
            },
            serde_json::json!({ "event": "user.local_sign_in_set", "local_sign_in": true }),
        ),
        (
            AuditKind::UserExternalIdSet { cleared: false },
            serde_json::json!({ "event": "user.external_id_set", "cleared": false }),
        ),
        (
            AuditKind::FederationUnlinked { idp_id },
            serde_json::json!({ "event": "federation.unlinked", "idp_id": idp_id }),
        ),
    ];
    for (kind, json) in cases {
        assert_eq!(serde_json::to_value(&kind).unwrap(), json);
        assert_eq!(Some(kind.name()), json["event"].as_str());
        assert_eq!(serde_json::from_value::<AuditKind>(json).unwrap(), kind);
    }
}
