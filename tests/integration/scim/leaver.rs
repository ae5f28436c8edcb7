//! What a leaver's deprovisioning ends, seen from the applications: the relying party whose
//! session the user had is told by a back-channel logout token, and an authorization code
//! issued before the deactivation stays dead after the user is active again.

use reqwest::StatusCode;
use serde_json::json;
use token_core::admin::NewClient;
use token_domain::Scopes;

use super::{provisioning_token, scim, PASSWORD};
use crate::authorize::flow::{exchange, query, Session, LOGIN, REDIRECT_URI};
use crate::support::app::{json_of, AppOptions, Backend, TestApp};
use crate::support::logout_receiver::LogoutReceiver;

pub(crate) struct Leaver {
    app: TestApp,
    receiver: LogoutReceiver,
}

/// An app whose own routes deliver back-channel logouts to the receiver.
pub(crate) async fn with_receiver(backend: Backend) -> Option<Leaver> {
    let receiver = LogoutReceiver::start(StatusCode::OK, None).await;
    let options = AppOptions {
        logout_allowed_hosts: vec![receiver.host_port.clone()],
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    Some(Leaver { app, receiver })
}

crate::on_both_stores!(using crate::scim::leaver::with_receiver;
    a_leavers_clients_are_told_and_its_open_codes_stay_dead);

async fn a_leavers_clients_are_told_and_its_open_codes_stay_dead(f: Leaver) {
    let app = &f.app;
    let company = app.create_company("Acme").await;
    let token = provisioning_token(app, &company).await;
    let body = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
        "userName": LOGIN,
        "password": PASSWORD,
        "active": true,
    });
    let (status, created) = json_of(
        scim(app, reqwest::Method::POST, "/Users", &token)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let mut new = NewClient::named("relying party", Scopes::parse("openid read").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.backchannel_logout_uri = Some(f.receiver.url("/backchannel-logout"));
    let rp = app.create_client_with(new).await;

    // A sign-in session with the relying party, and a code not redeemed yet.
    let mut browser = Session::new(app);
    let first = browser.decide(&query(&rp, &[]), "approve").await;
    let (status, tokens) = exchange(app, &rp, &first["code"], &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "a code redeems before: {tokens}");
    // Signed in and approved: the next authorization answers at once.
    let open = crate::authorize::flow::redirect_query(&browser.open(&query(&rp, &[])).await);
    let open_code = open["code"].clone();

    let patch = |active: bool| {
        json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "replace", "path": "active", "value": active}],
        })
    };
    let response = scim(app, reqwest::Method::PATCH, &format!("/Users/{id}"), &token)
        .json(&patch(false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let delivered = wait_for_delivery(&f).await;
    assert_eq!(delivered, 1, "the relying party got one logout token");
    let logout = &f.receiver.received()[0];
    let (_, claims) = crate::backchannel_logout::verified(
        app,
        logout.logout_token(),
        token_domain::ClientId::parse(&rp.id).unwrap(),
    )
    .await;
    assert_eq!(claims["sub"], id.as_str());

    // Active again: the code issued before stays dead.
    let response = scim(app, reqwest::Method::PATCH, &format!("/Users/{id}"), &token)
        .json(&patch(true))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let (status, refused) = exchange(app, &rp, &open_code, &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["code"], 103, "{refused}");
}

/// The receiver's deliveries, waited for up to 10 s (they run after the answer).
async fn wait_for_delivery(f: &Leaver) -> usize {
    for _ in 0..100 {
        let received = f.receiver.received().len();
        if received > 0 {
            return received;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    0
}
