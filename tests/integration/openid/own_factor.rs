//! A factor a user enrolled is required of them, as a company's policy requires one: the
//! `password` grant refuses a user with an authenticator app or a passkey (403, 180), the pages
//! ask for the factor after the password; and a user's access tokens say how and when they
//! signed in (`amr`, `auth_time`, RFC 9068 §2.2.1), through a refresh too. Both stores.

use crate::support::app::TestApp;
use reqwest::StatusCode;
use token_domain::clock::Clock;
use token_domain::{AuthMethod, PasskeyCredential, TotpFactor};

use super::*;
use crate::authorize::flow::{query, Session};

crate::on_both_stores!(
    an_enrolled_factor_refuses_the_password_grant_180_until_it_is_removed,
    a_users_access_tokens_carry_how_and_when_they_signed_in,
    a_user_whose_own_factor_is_a_passkey_is_sent_to_it_after_the_password,
);

fn authenticator_app(user: &token_domain::User, now: i64) -> TotpFactor {
    TotpFactor {
        principal_id: user.id,
        sealed_secret: "sealed-secret-bytes".into(),
        last_used_step: 0,
        recovery_codes: Vec::new(),
        enrolled_at: now,
    }
}

async fn add_passkey(app: &TestApp, user: &token_domain::User, now: i64) {
    let stored = app.store.passkeys().put_passkey(&passkey(user, now)).await;
    assert!(stored.unwrap(), "a new passkey");
}

fn passkey(user: &token_domain::User, now: i64) -> PasskeyCredential {
    PasskeyCredential {
        principal_id: user.id,
        credential_id: "credential-1".to_owned(),
        name: "Laptop".to_owned(),
        passkey: r#"{"cred":{"counter":0}}"#.to_owned(),
        created_at: now,
        last_used_at: None,
    }
}

async fn password_grant(app: &TestApp, client: &TestClient, password: &str) -> (StatusCode, Value) {
    app.password_grant(client, LOGIN, password, &[]).await
}

fn assert_180(answer: &(StatusCode, Value), what: &str) {
    assert_eq!(answer.0, StatusCode::FORBIDDEN, "{what}: {}", answer.1);
    assert_eq!(answer.1["error"], "access_denied", "{what}");
    assert_eq!(answer.1["code"], 180, "{what}");
}

async fn an_enrolled_factor_refuses_the_password_grant_180_until_it_is_removed(app: TestApp) {
    let client = app.create_client("read").await;
    let user = app.create_user(LOGIN, PASSWORD).await;
    let now = app.clock.now();
    assert_eq!(
        password_grant(&app, &client, PASSWORD).await.0,
        StatusCode::OK
    );

    let factors = app.store.second_factors();
    assert!(factors
        .put_totp_factor(&authenticator_app(&user, now))
        .await
        .unwrap());
    assert_180(
        &password_grant(&app, &client, PASSWORD).await,
        "an authenticator app",
    );
    let wrong = password_grant(&app, &client, "wrong").await;
    assert_eq!(
        wrong.1["code"], 5,
        "a wrong password learns nothing: {}",
        wrong.1
    );
    // Refused after a correct password, the attempt is taken back: refusals lock nothing.
    for _ in 0..5 {
        assert_180(&password_grant(&app, &client, PASSWORD).await, "again");
    }
    assert!(factors.delete_totp_factor(&user.id).await.unwrap());
    assert_eq!(
        password_grant(&app, &client, PASSWORD).await.0,
        StatusCode::OK,
        "the app removed, the password alone is enough again"
    );

    add_passkey(&app, &user, now).await;
    assert_180(&password_grant(&app, &client, PASSWORD).await, "a passkey");
    assert!(app
        .store
        .passkeys()
        .delete_passkey(&user.id, "credential-1")
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        password_grant(&app, &client, PASSWORD).await.0,
        StatusCode::OK
    );
}

async fn a_users_access_tokens_carry_how_and_when_they_signed_in(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user(LOGIN, PASSWORD).await;
    let signed_in_at = app.clock.now();
    let tokens = app.user_tokens(&client, LOGIN, PASSWORD).await;
    let claims = app
        .claims_of(tokens["access_token"].as_str().unwrap())
        .await;
    assert_eq!(claims.amr, AuthMethod::PASSWORD);
    assert_eq!(claims.auth_time, Some(signed_in_at));

    // A refresh an hour on: a new token, the same sign-in.
    app.clock.advance(3600);
    let (status, refreshed) = app
        .refresh(&client, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let claims = app
        .claims_of(refreshed["access_token"].as_str().unwrap())
        .await;
    assert_eq!(claims.amr, AuthMethod::PASSWORD);
    assert_eq!(claims.auth_time, Some(signed_in_at));
    assert!(claims.iat > signed_in_at);

    // An application's token is nobody's sign-in.
    let app_token = app.app_token(&client).await;
    let claims = app.claims_of(&app_token).await;
    assert!(claims.amr.is_empty() && claims.auth_time.is_none());
}

async fn a_user_whose_own_factor_is_a_passkey_is_sent_to_it_after_the_password(app: TestApp) {
    let client = oidc_client(&app, "partner").await;
    let user = app.create_user(LOGIN, PASSWORD).await;
    let now = app.clock.now();
    add_passkey(&app, &user, now).await;
    let mut browser = Session::new(&app);
    let answer = browser.sign_in_answer(&query(&client, &[]), PASSWORD).await;
    assert!(
        set_cookie_pair(&answer, "__Host-session").is_none(),
        "no session from the password alone"
    );
    let page = answer.text().await.unwrap();
    assert!(
        page.contains("A password alone is not enough for this account"),
        "{page}"
    );
}
