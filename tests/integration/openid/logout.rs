//! RP-initiated logout at `GET`/`POST /oauth2/v0/logout`: the hinted user's families with that
//! client end, and the browser goes back only to a registered address.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use reqwest::{header, StatusCode};
use serde_json::Value;
use token_core::flows::logout::HINT_MAX_AGE_SECONDS;

use super::*;

crate::on_both_stores!(
    logout_revokes_the_users_families_with_that_client,
    logout_without_an_address_shows_the_signed_out_page,
    logout_refusals_never_redirect_and_revoke_nothing,
    logout_reaches_only_the_families_its_recent_hint_has_seen,
);

const PATH: &str = "/oauth2/v0/logout";

async fn logout(app: &TestApp, params: &[(&str, &str)]) -> reqwest::Response {
    app.http
        .get(app.url(PATH))
        .query(params)
        .send()
        .await
        .unwrap()
}

async fn still_refreshes(app: &TestApp, client: &TestClient, tokens: &Value) -> bool {
    refresh(app, client, tokens).await.0 == StatusCode::OK
}

async fn logout_revokes_the_users_families_with_that_client(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    app.create_user("bob@example.com", PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let other = oidc_client(&app, "another party").await;
    let first = code_flow_tokens(&app, &client, &[]).await;
    let second = password_tokens(&app, &client, "openid read").await;
    let elsewhere = password_tokens(&app, &other, "openid read").await;
    let (_, bobs) = app
        .password_grant(&client, "bob@example.com", PASSWORD, &[("scope", "openid")])
        .await;

    let hint = first["id_token"].as_str().unwrap();
    let answer = logout(
        &app,
        &[
            ("id_token_hint", hint),
            ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
            ("state", "bye now"),
        ],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(
        answer.headers()[header::LOCATION],
        format!("{POST_LOGOUT_REDIRECT_URI}?state=bye+now")
    );
    for tokens in [&first, &second] {
        assert_token_error(
            &refresh(&app, &client, tokens).await,
            400,
            "invalid_grant",
            108,
        );
    }
    assert!(
        still_refreshes(&app, &other, &elsewhere).await,
        "another client's family"
    );
    assert!(
        still_refreshes(&app, &client, &bobs).await,
        "another user's family"
    );

    // The same as a form post, with the client named too.
    let third = password_tokens(&app, &client, "openid read").await;
    let answer = app
        .post_form(
            PATH,
            &[
                ("id_token_hint", third["id_token"].as_str().unwrap()),
                ("client_id", &client.id),
                ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
            ],
        )
        .await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(answer.headers()[header::LOCATION], POST_LOGOUT_REDIRECT_URI);
    assert!(!still_refreshes(&app, &client, &third).await);
}

async fn logout_without_an_address_shows_the_signed_out_page(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let tokens = password_tokens(&app, &client, "openid read").await;
    let answer = logout(
        &app,
        &[("id_token_hint", tokens["id_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(!answer.headers().contains_key(header::LOCATION));
    assert_eq!(answer.headers()[header::X_FRAME_OPTIONS], "DENY");
    assert!(answer.text().await.unwrap().contains("You are signed out"));
    assert!(!still_refreshes(&app, &client, &tokens).await);
}

async fn logout_refusals_never_redirect_and_revoke_nothing(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let other = oidc_client(&app, "another party").await;
    let tokens = password_tokens(&app, &client, "openid read").await;
    let hint = tokens["id_token"].as_str().unwrap();

    // An address the client did not register: a page, never a redirect to it.
    for address in [
        "https://evil.example/out",
        "https://app.example.com/signed-out/",
    ] {
        let answer = logout(
            &app,
            &[
                ("id_token_hint", hint),
                ("post_logout_redirect_uri", address),
            ],
        )
        .await;
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{address}");
        assert!(!answer.headers().contains_key(header::LOCATION));
        let html = answer.text().await.unwrap();
        assert!(html.contains("not registered"), "{html}");
    }
    // No client to match the address against.
    let answer = logout(
        &app,
        &[("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI)],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);

    // Hints that do not verify are no hints: with no session in this browser nothing is
    // asked or ended, and no family is revoked.
    let access_token = tokens["access_token"].as_str().unwrap();
    let mut tampered: Vec<String> = hint.split('.').map(str::to_owned).collect();
    tampered[1] = tampered[1].chars().rev().collect();
    let tampered = tampered.join(".");
    for bad in [access_token, tampered.as_str(), "garbage"] {
        let answer = logout(&app, &[("id_token_hint", bad)]).await;
        assert_eq!(answer.status(), StatusCode::OK, "{bad}");
        assert!(!answer.headers().contains_key(header::LOCATION));
        assert!(!answer.headers().contains_key(header::SET_COOKIE));
    }
    // A hint for another client than the one named: refused.
    let answer = logout(
        &app,
        &[("id_token_hint", hint), ("client_id", other.id.as_str())],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    assert!(!answer.headers().contains_key(header::LOCATION));
    assert!(answer
        .text()
        .await
        .unwrap()
        .contains("could not be accepted"));

    assert!(
        still_refreshes(&app, &client, &tokens).await,
        "nothing was revoked"
    );
}

async fn logout_reaches_only_the_families_its_recent_hint_has_seen(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let before = password_tokens(&app, &client, "openid read").await;
    let hinted = password_tokens(&app, &client, "openid read").await;
    app.clock.advance(60);
    let after = password_tokens(&app, &client, "openid read").await;

    let hint = hinted["id_token"].as_str().unwrap();
    let answer = logout(&app, &[("id_token_hint", hint)]).await;
    assert_eq!(answer.status(), StatusCode::OK);
    for tokens in [&before, &hinted] {
        assert!(
            !still_refreshes(&app, &client, tokens).await,
            "a family started by the hint's issue is revoked"
        );
    }
    assert!(
        still_refreshes(&app, &client, &after).await,
        "a sign-in after the hint was issued is not the hint's to end"
    );

    // A hint past its maximum age ends nothing, but still names the client whose registered
    // address the browser may go back to.
    let old = password_tokens(&app, &client, "openid read").await;
    app.clock.advance(HINT_MAX_AGE_SECONDS + 1);
    let answer = logout(
        &app,
        &[
            ("id_token_hint", old["id_token"].as_str().unwrap()),
            ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
        ],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(answer.headers()[header::LOCATION], POST_LOGOUT_REDIRECT_URI);
    assert!(
        still_refreshes(&app, &client, &old).await,
        "an old hint revokes nothing"
    );
}
