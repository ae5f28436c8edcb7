//! `POST /v0/token`, one case per grant: `client_credentials`, `password` (a user, and a
//! company with `credtype=authtoken`), `refresh_token`, `authorization_code` and `otp`.

use crate::support::app::TestClient;
use crate::support::logs::assert_no_secret_logged;
use reqwest::RequestBuilder;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use token_domain::{ChannelHandle, ClientId, RefreshRotation};

use super::{ok_json, user_with_email, FaultyApp, Outage};
use crate::authorize::flow::{approved_code, code_client, LOGIN, PASSWORD, REDIRECT_URI, VERIFIER};
use crate::refresh_rotation::{field, user_family};

in_every_outage!(
    client_credentials,
    user_password,
    company_auth_token_grant,
    refresh_token,
    authorization_code,
    otp,
);

// Only the family's transaction fails, after the writes before it landed. A rotation is no
// transaction: its failures after its decisive write are refresh_faults' cases.
outage_tests!(
    dynamodb_transactions_refused = TransactionsRefused:
    user_password,
    company_auth_token_grant,
    authorization_code,
    otp,
);

fn token_request(app: &FaultyApp, client: &TestClient, form: &[(&str, &str)]) -> RequestBuilder {
    let mut all = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    all.extend_from_slice(form);
    app.http.post(app.url("/v0/token")).form(&all)
}

/// Sends the request that failed again, now that the store is back: tokens.
async fn retried(app: &FaultyApp, request: RequestBuilder, grant: &str) -> serde_json::Value {
    let body = ok_json(
        crate::support::app::json_of(request.send().await.unwrap()).await,
        grant,
    );
    assert!(body["access_token"].is_string(), "{grant}: {body}");
    assert_eq!(body["geolocation"], app.address, "{grant}: {body}");
    body
}

async fn client_credentials(app: FaultyApp) {
    let client = app.create_client("read").await;
    let request = || token_request(&app, &client, &[("grant_type", "client_credentials")]);
    app.refused("client_credentials", request()).await;
    let body = retried(&app, request(), "client_credentials").await;
    assert_eq!(body["principal_type"], "application");
    assert_no_secret_logged(&[&client.secret]);
}

/// The attempt counted before the password is compared is not left counted by the failure: with
/// `LOCKOUT_THRESHOLD=1` a leftover count would lock the retry out (code 14).
async fn user_password(app: FaultyApp) {
    let client = app.create_client("read").await;
    app.create_user("pat", PASSWORD).await;
    let form = [
        ("grant_type", "password"),
        ("username", "pat"),
        ("password", PASSWORD),
    ];
    app.refused("password", token_request(&app, &client, &form))
        .await;
    let body = retried(&app, token_request(&app, &client, &form), "password").await;
    assert_eq!(body["principal_type"], "user");
    assert!(body["refresh_token"].is_string(), "{body}");
    assert_no_secret_logged(&[&client.secret, PASSWORD]);
}

/// The company's auth token (reusable for 24 hours) still works after the failure.
async fn company_auth_token_grant(app: FaultyApp) {
    let world = super::other_endpoints::CompanyWorld::new(&app).await;
    let auth_token = world.auth_token(&app).await;
    let form = [
        ("grant_type", "password"),
        ("credtype", "authtoken"),
        ("username", world.company_id.as_str()),
        ("password", auth_token.as_str()),
    ];
    app.refused(
        "password credtype=authtoken",
        token_request(&app, &world.crm, &form),
    )
    .await;
    let body = retried(
        &app,
        token_request(&app, &world.crm, &form),
        "company grant",
    )
    .await;
    assert_eq!(body["principal_type"], "company");
    assert_no_secret_logged(&[&world.crm.secret, &auth_token, &world.admin_token]);
}

/// The presented token is not rotated by the failure; the retry rotates it once, and a second
/// retry gets the same successor.
async fn refresh_token(app: FaultyApp) {
    let (client, first) = user_family(&app, RefreshRotation::Rotate, "read").await;
    let rt1 = field(&first, "refresh_token");
    let form = [("grant_type", "refresh_token"), ("refresh_token", rt1)];
    app.refused("refresh_token", token_request(&app, &client, &form))
        .await;
    let record = app.stored_refresh_token(rt1).await;
    assert_eq!(record.rotated_at, None, "not rotated by the failed call");
    let family = app.stored_family(&record.family_id).await;
    assert_eq!((family.generation, family.revoked_at), (0, None));

    let second = retried(&app, token_request(&app, &client, &form), "refresh").await;
    let again = retried(&app, token_request(&app, &client, &form), "refresh").await;
    assert_eq!(
        second["refresh_token"], again["refresh_token"],
        "one successor"
    );
    assert_no_secret_logged(&[&client.secret, rt1, field(&second, "refresh_token")]);
}

/// The code is not redeemed by the failure, so the retry redeems it.
async fn authorization_code(app: FaultyApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let code = approved_code(&app, &client).await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    app.refused("authorization_code", token_request(&app, &client, &form))
        .await;
    let stored = app
        .store
        .authorization_codes()
        .get_authorization_code(&TokenHash::of(&code), app.clock.now())
        .await
        .unwrap()
        .expect("the code is still stored");
    assert_eq!(stored.redeemed_at, None, "not redeemed by the failed call");
    assert_eq!(stored.family_id, None);

    let body = retried(
        &app,
        token_request(&app, &client, &form),
        "authorization_code",
    )
    .await;
    assert!(body["id_token"].is_string(), "{body}");
    assert_no_secret_logged(&[&client.secret, &code, PASSWORD]);
}

/// The one-time password is not consumed by the failure (nor charged a try, unless that write
/// landed before the family's failed).
async fn otp(app: FaultyApp) {
    let client = app.create_client("read").await;
    let address = "otp.user@example.com";
    user_with_email(&app, "otp-user", address).await;
    let channel = [("channel_type", "email"), ("channel_handle", address)];
    let sent = super::other_endpoints::otp_request_to(&app, &client, address)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let password = app.mailed_passwords().pop().expect("a password was mailed");
    let key = ChannelHandle::parse(address).unwrap().key();
    let client_id = ClientId::parse(&client.id).unwrap();
    let open = |app: &FaultyApp| {
        let key = key.clone();
        let store = app.store.clone();
        let now = app.clock.now();
        async move {
            store
                .otp()
                .find_open_otp(&key, &client_id, now)
                .await
                .unwrap()
        }
    };
    let before = open(&app).await.expect("the password is open");

    let mut form = vec![("grant_type", "otp"), ("otp", password.as_str())];
    form.extend_from_slice(&channel);
    app.refused("otp", token_request(&app, &client, &form))
        .await;
    let after = open(&app).await.expect("still open after the failed call");
    // Only a try, a single write before the family's transaction, may have landed.
    let spent = u32::from(app.outage == Outage::TransactionsRefused);
    assert_eq!(after.tries_left, before.tries_left - spent, "tries spent");
    assert!(!after.consumed);

    let body = retried(&app, token_request(&app, &client, &form), "otp").await;
    assert_eq!(body["principal_type"], "user");
    assert!(open(&app).await.is_none(), "consumed by the retry");
    assert_no_secret_logged(&[&client.secret, &password]);
}
