//! `companies create`, `companies enable-client`, `companies set-status` and `companies set-mfa`.

use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::{Clock, SystemClock};
use token_domain::{ClientId, CompanyStatus, MfaPolicy, PrincipalId};
use token_store::AuditQuery;

use super::output::str_field;
use super::target::{Target, HOME, UNKNOWN};

/// `companies create`: the geolocation defaults to the configured GEOLOCATION. Returns the
/// company at home and the one created elsewhere.
pub async fn create(t: &Target) -> (PrincipalId, PrincipalId) {
    let store = &t.store;
    let company = t.json(&["companies", "create", "--name", "Acme"]);
    let company_id = PrincipalId::parse(str_field(&company, "company_id")).unwrap();
    let stored = store
        .principals()
        .get_company(&company_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.name.as_str(), stored.geolocation.as_str()),
        ("Acme", HOME)
    );
    assert_eq!(stored.status, CompanyStatus::Active);
    let eu = t.json(&[
        "companies",
        "create",
        "--name",
        "Acme EU",
        "--geolocation",
        "https://eu.api.example.com/",
    ]);
    let eu_id = PrincipalId::parse(str_field(&eu, "company_id")).unwrap();
    let eu_company = store
        .principals()
        .get_company(&eu_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        eu_company.geolocation.as_str(),
        "https://eu.api.example.com"
    );
    t.fails(
        &[
            "companies",
            "create",
            "--name",
            "Y",
            "--geolocation",
            "nowhere",
        ],
        2,
    );
    (company_id, eu_id)
}

/// `companies enable-client`: only the named company, only for the named client.
pub async fn enable_client(
    t: &Target,
    company_id: PrincipalId,
    other_company: PrincipalId,
    client_id: ClientId,
) {
    let enabled_for = |company: PrincipalId| async move {
        t.store
            .principals()
            .is_company_enabled_for_client(&company, &client_id)
            .await
            .unwrap()
    };
    let (company, client) = (company_id.to_string(), client_id.to_string());
    assert!(!enabled_for(company_id).await);
    let enabled = t.json(&["companies", "enable-client", &company, &client]);
    assert_eq!(enabled["enabled"], true);
    assert!(enabled_for(company_id).await);
    assert!(!enabled_for(other_company).await);
    let reason = t.fails(&["companies", "enable-client", UNKNOWN, &client], 3);
    assert!(reason.contains("not found"), "{reason}");
    t.fails(&["companies", "enable-client", &company, UNKNOWN], 3);
    t.fails(&["companies", "enable-client", "acme", &client], 2);
}

/// `companies set-status`: every status, stored as named.
pub async fn set_status(t: &Target, company_id: PrincipalId) {
    let company = company_id.to_string();
    for (arg, status) in [
        ("maintenance", CompanyStatus::Maintenance),
        ("disabled", CompanyStatus::Disabled),
        ("active", CompanyStatus::Active),
    ] {
        let out = t.json(&["companies", "set-status", &company, arg]);
        assert_eq!(out["status"], arg);
        let stored = t
            .store
            .principals()
            .get_company(&company_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.status, status);
    }
    t.fails(&["companies", "set-status", &company, "paused"], 2);
    t.fails(&["companies", "set-status", UNKNOWN, "active"], 3);
}

/// `companies set-mfa`: optional by default, `required` and back, stored with the company (its
/// status untouched) and audited; anything else refused.
pub async fn set_mfa(t: &Target, company_id: PrincipalId) {
    let company = company_id.to_string();
    let stored = || async {
        t.store
            .principals()
            .get_company(&company_id)
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(
        stored().await.mfa_policy,
        MfaPolicy::Optional,
        "the default"
    );
    let status = stored().await.status;
    for (arg, policy) in [
        ("required", MfaPolicy::Required),
        ("optional", MfaPolicy::Optional),
        ("required", MfaPolicy::Required),
    ] {
        let out = t.json(&["companies", "set-mfa", &company, arg]);
        assert_eq!(out["mfa"], arg);
        assert_eq!(out["company_id"], company.as_str());
        let company = stored().await;
        assert_eq!(company.mfa_policy, policy);
        assert_eq!(company.status, status, "the status is kept");
    }
    let text = t.text(&["companies", "set-mfa", &company, "optional"]);
    assert!(text.contains("second factor optional"), "{text}");
    t.fails(&["companies", "set-mfa", &company, "sometimes"], 2);
    t.fails(&["companies", "set-mfa", UNKNOWN, "required"], 3);
    let events = t
        .store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Principal(company_id),
            since: None,
            now: SystemClock.now(),
        })
        .await
        .unwrap();
    let set: Vec<&AuditKind> = events
        .iter()
        .map(|event| &event.kind)
        .filter(|kind| matches!(kind, AuditKind::CompanyMfaSet { .. }))
        .collect();
    assert_eq!(set.len(), 4, "{events:?}");
    assert_eq!(
        set[0],
        &AuditKind::CompanyMfaSet {
            policy: MfaPolicy::Optional
        },
        "newest first"
    );
}
