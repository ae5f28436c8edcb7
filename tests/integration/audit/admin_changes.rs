//! What an administrator changes (the operations behind `tokenctl`) is recorded, one event per
//! change, under the client or principal it changed.

use crate::support::app::TestApp;
use token_core::admin;
use token_domain::{ClientId, CompanyStatus, ConsumerKey, RefreshRotation};
use uuid::Uuid;

use super::{client_subject, events_of, json, names, principal_subject};

crate::on_both_stores!(every_admin_change_is_recorded);

async fn every_admin_change_is_recorded(app: TestApp) {
    let ctx = app.ctx();
    let created = app.create_client("read").await;
    let id = ClientId::parse(&created.id).unwrap();
    app.clock.advance(1);
    admin::set_refresh_rotation(ctx, &id, RefreshRotation::Sliding)
        .await
        .unwrap();
    app.clock.advance(1);
    let key = ConsumerKey::parse(&format!("old-{}", Uuid::new_v4().simple())).unwrap();
    admin::link_legacy_app(ctx, key, &id).await.unwrap();
    app.clock.advance(1);
    let company = app.create_company("Audited Co").await;
    app.clock.advance(1);
    admin::enable_company_for_client(ctx, &company.id, &id)
        .await
        .unwrap();
    app.clock.advance(1);
    admin::set_company_status(ctx, &company.id, CompanyStatus::Maintenance)
        .await
        .unwrap();
    app.clock.advance(1);
    let added = admin::add_client_secret(ctx, &id, None).await.unwrap();
    app.clock.advance(1);
    admin::revoke_client_secret(ctx, &id, &added.secret_id)
        .await
        .unwrap();
    app.clock.advance(1);
    admin::disable_client(ctx, &id).await.unwrap();
    app.clock.advance(1);
    let user = app
        .create_user(&format!("admin-made-{}", Uuid::new_v4().simple()), "pw")
        .await;
    app.clock.advance(1);
    let address = format!("{}@example.com", Uuid::new_v4().simple());
    admin::set_user_email(ctx, &user.id, &address)
        .await
        .unwrap();

    let of_client = events_of(&app, client_subject(&created.id)).await;
    assert_eq!(
        names(&of_client),
        [
            "client.disabled",
            "client.secret_revoked",
            "client.secret_added",
            "company.client_enabled",
            "legacy_app.linked",
            "client.refresh_rotation_set",
            "client.created",
        ]
    );
    assert_eq!(json(&of_client[5])["rotation"], "sliding");
    // The secret's id names it in both events; the secret itself is never recorded.
    for event in &of_client[1..=2] {
        assert_eq!(
            json(event)["secret_id"],
            added.secret_id.to_string(),
            "{event:?}"
        );
        assert!(!json(event)
            .to_string()
            .contains(added.client_secret.expose()));
    }
    let of_company = events_of(&app, principal_subject(company.id)).await;
    assert_eq!(
        names(&of_company),
        [
            "company.status_set",
            "company.client_enabled",
            "company.created"
        ]
    );
    assert_eq!(json(&of_company[0])["status"], "maintenance");
    assert_eq!(json(&of_company[0])["principal_type"], "company");
    let of_user = events_of(&app, principal_subject(user.id)).await;
    assert_eq!(names(&of_user), ["user.email_set", "user.created"]);
    assert!(
        !json(&of_user[0]).to_string().contains(&address),
        "the address itself is never recorded"
    );
    // No request caused these: no request facts.
    assert!(json(&of_user[0]).get("source_address").is_none());
}
