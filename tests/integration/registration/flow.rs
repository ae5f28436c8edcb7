//! A self-registered public client (`token_endpoint_auth_method=none`): the code flow with
//! PKCE and its client_id alone at the token endpoint; without PKCE the authorization request
//! ends in an error redirect with code 60; its consent, asked the first time (marked not
//! verified), is remembered, so `prompt=none` then answers with a code; DELETE revokes what it
//! was issued.

use super::*;
use crate::authorize::flow::{
    query, redirect_query, Session, LOGIN, PASSWORD, REDIRECT_URI, VERIFIER,
};
use token_core::flows::authorize::s256_challenge;
use token_domain::clock::Clock;

crate::on_both_stores!(with crate::registration::open();
    a_public_client_runs_the_code_flow_with_pkce_only,
    the_consent_page_links_the_policy_and_terms_and_loads_no_logo,
);

async fn a_public_client_runs_the_code_flow_with_pkce_only(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let (status, answer) = register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "client_name": "MCP tool",
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert!(answer.get("client_secret").is_none(), "{answer}");
    let client = registered_public_client(&answer);

    // Without PKCE: an error redirect with code 60.
    let response = Session::new(&app)
        .open(&query(&client, &[("scope", "openid profile")]))
        .await;
    let refused = redirect_query(&response);
    assert_eq!(refused["error_code"], "60", "{refused:?}");

    // With PKCE: a code, redeemed with the client_id alone.
    let challenge = s256_challenge(VERIFIER);
    let authorize = query(
        &client,
        &[
            ("scope", "openid profile"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    // Before any consent, `prompt=none` in a signed-in browser cannot show the page.
    let mut browser = Session::new(&app);
    let signed_in = browser.sign_in(&authorize, PASSWORD).await;
    assert!(signed_in.contains("not verified"), "{signed_in}");
    let silent: Vec<(&str, &str)> = authorize
        .iter()
        .copied()
        .chain([("prompt", "none")])
        .collect();
    let refused = redirect_query(&browser.open(&silent).await);
    assert_eq!(refused["error"], "consent_required", "{refused:?}");

    let mut session = Session::new(&app);
    let consent = session.sign_in(&authorize, PASSWORD).await;
    assert!(consent.contains("not verified"), "{consent}");
    assert!(
        consent.contains("app.example.com"),
        "the redirect's host is shown"
    );
    let mut approving = Session::new(&app);
    let approved = approving.decide(&authorize, "approve").await;
    let code = approved["code"].clone();
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    let (status, tokens) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access_token = tokens["access_token"].as_str().expect("an access token");
    let jti = crate::support::app::jti_of(access_token);
    let family_id = app
        .stored_access_token(&jti)
        .await
        .expect("the access token is stored")
        .family_id
        .expect("a user's token belongs to a family");

    // Approved once, the consent is remembered: `prompt=none` in the signed-in browser answers
    // with a code, which redeems, and a new sign-in skips the consent page.
    let silent_code = redirect_query(&approving.open(&silent).await);
    assert!(silent_code.contains_key("code"), "{silent_code:?}");
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client.id.as_str()),
        ("code", silent_code["code"].as_str()),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", VERIFIER),
    ];
    let (status, silent_tokens) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK, "{silent_tokens}");
    let again = Session::new(&app)
        .sign_in_answer(&authorize, PASSWORD)
        .await;
    assert_eq!(again.status(), StatusCode::FOUND, "no consent page again");
    assert!(redirect_query(&again).contains_key("code"));

    // A public client may not use other grants with its client_id alone.
    let refused = app
        .token(&[
            ("grant_type", "client_credentials"),
            ("client_id", client.id.as_str()),
        ])
        .await;
    crate::support::assertions::assert_token_error(&refused, 400, "invalid_grant", 60);

    // DELETE with the registration access token: the client is disabled and its family revoked.
    let deleted = app
        .http
        .delete(answer["registration_client_uri"].as_str().unwrap())
        .bearer_auth(answer["registration_access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let family = app
        .store
        .families()
        .get_family(&family_id, app.clock.now())
        .await
        .unwrap()
        .expect("the family is kept, revoked");
    assert!(family.revoked_at.is_some(), "DELETE revoked the family");
}

/// `policy_uri` and `tos_uri` are kept, echoed and linked from the consent
/// page; `logo_uri` is kept and echoed but never loaded (no image of an unverified client).
async fn the_consent_page_links_the_policy_and_terms_and_loads_no_logo(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let (status, answer) = register(
        &app,
        &json!({
            "redirect_uris": [REDIRECT_URI],
            "client_name": "Linked agent",
            "token_endpoint_auth_method": "none",
            "logo_uri": "https://agent.example/logo.png",
            "policy_uri": "https://agent.example/privacy",
            "tos_uri": "https://agent.example/terms",
        }),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["policy_uri"], "https://agent.example/privacy");
    assert_eq!(answer["tos_uri"], "https://agent.example/terms");
    assert_eq!(answer["logo_uri"], "https://agent.example/logo.png");
    let client = registered_public_client(&answer);
    let challenge = s256_challenge(VERIFIER);
    let authorize = query(
        &client,
        &[
            ("scope", "openid"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    );
    let consent = Session::new(&app).sign_in(&authorize, PASSWORD).await;
    assert!(consent.contains("not verified"), "{consent}");
    assert!(
        consent.contains(r#"href="https://agent.example/privacy""#),
        "{consent}"
    );
    assert!(
        consent.contains(r#"href="https://agent.example/terms""#),
        "{consent}"
    );
    assert!(!consent.contains("<img"), "no image: {consent}");
    assert!(
        !consent.contains("logo.png"),
        "the logo is not named: {consent}"
    );

    // Not https: refused, as every address the page shows.
    for member in ["policy_uri", "tos_uri"] {
        let (status, refused) = register(
            &app,
            &json!({"redirect_uris": [REDIRECT_URI], member: "http://agent.example/page"}),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{member}: {refused}");
        assert_eq!(refused["error"], "invalid_client_metadata");
    }
}
