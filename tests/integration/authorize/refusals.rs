//! What the authorize endpoint refuses (RFC 6749 §4.1.2.1): an untrusted client or address is a
//! page, never a redirect; request errors redirect with catalogue codes; sign-in refusals are
//! sentences; the forms need their CSRF token and cookie.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_core::admin::{self, NewClient};
use token_domain::{ClientId, GrantType, Scopes, UserStatus};

use super::flow::*;

crate::on_both_stores!(
    untrusted_client_or_address_is_a_page_never_a_redirect,
    request_errors_redirect_with_catalogue_codes,
    sign_in_refusals_are_sentences_and_deny_redirects,
    forms_need_their_csrf_token_and_cookie,
    redirect_uri_near_misses_are_refused_at_both_ends,
);

/// Addresses that differ from the registered `REDIRECT_URI` in one detail each: the match is
/// exact, or an attacker's look-alike could receive the code.
const NEAR_MISSES: [&str; 5] = [
    "https://app.example.com/callback/",
    "https://app.example.com/callback?x=1",
    "https://user@app.example.com/callback",
    "http://app.example.com/callback",
    "https://app.example.com:8443/callback",
];

#[track_caller]
fn assert_refused_page(
    status: StatusCode,
    headers: &reqwest::header::HeaderMap,
    html: &str,
    says: &str,
) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{html}");
    assert!(headers.get(header::LOCATION).is_none(), "never redirected");
    assert!(headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
    assert!(html.contains(says), "{html}");
}

async fn untrusted_client_or_address_is_a_page_never_a_redirect(app: TestApp) {
    let client = code_client(&app).await;
    let unknown = ClientId::new(uuid::Uuid::new_v4()).to_string();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            query(&client, &[])
                .into_iter()
                .filter(|(n, _)| *n != "client_id")
                .collect(),
            "names no application",
        ),
        (query(&client, &[("client_id", &unknown)]), "is not known"),
        (
            query(&client, &[])
                .into_iter()
                .filter(|(n, _)| *n != "redirect_uri")
                .collect(),
            "does not say where to return",
        ),
        (
            // Every other parameter wrong too: the unregistered address still wins.
            query(
                &client,
                &[
                    ("redirect_uri", "https://evil.example/callback"),
                    ("display", "bogus"),
                ],
            ),
            "not registered for this application",
        ),
    ];
    for (query, says) in cases {
        let response = Session::new(&app).open(&query).await;
        let (status, headers) = (response.status(), response.headers().clone());
        let html = response.text().await.unwrap();
        assert_refused_page(status, &headers, &html, says);
        assert!(!html.contains("evil.example"));
    }
}

/// Extra authorize parameters, and the redirect's `error_code`, `error`, `error_description`.
type RedirectCase<'a> = (Vec<(&'a str, &'a str)>, &'a str, &'a str, &'a str);

async fn request_errors_redirect_with_catalogue_codes(app: TestApp) {
    let client = code_client(&app).await;
    let cases: Vec<RedirectCase> = vec![
        (
            vec![("response_type", "code id_token")],
            "117",
            "invalid_request",
            "nonce is mandatory for this response_type",
        ),
        (
            vec![("display", "desktop")],
            "118",
            "invalid_request",
            "display is invalid",
        ),
        (
            vec![("prompt", "select_account")],
            "119",
            "invalid_request",
            "prompt is invalid",
        ),
        (
            vec![("scope", "openid offline_access")],
            "119",
            "invalid_request",
            "prompt must be set to consent for offline_access",
        ),
        (
            vec![("scope", "openid admin")],
            "54",
            "invalid_scope",
            "requested scope exceeds granted scope",
        ),
        (
            vec![
                (
                    "code_challenge",
                    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                ),
                ("code_challenge_method", "plain"),
            ],
            "60",
            "invalid_request",
            "these are not the grants you are looking for",
        ),
        (
            vec![("response_type", "token")],
            "60",
            "unsupported_response_type",
            "these are not the grants you are looking for",
        ),
        (
            vec![("response_type", "")],
            "60",
            "invalid_request",
            "these are not the grants you are looking for",
        ),
    ];
    for (extra, code, error, description) in cases {
        let response = Session::new(&app).open(&query(&client, &extra)).await;
        let redirect = redirect_query(&response);
        assert_eq!(redirect["error_code"], code, "{extra:?}");
        assert_eq!(redirect["error"], error, "{extra:?}");
        assert_eq!(redirect["error_description"], description, "{extra:?}");
        assert_eq!(redirect["state"], STATE);
        assert_eq!(redirect["iss"], app.address, "RFC 9207: {extra:?}");
        assert!(!redirect.contains_key("code"));
    }
    // prompt=none is a valid prompt: OpenID Connect's `login_required`, no catalogue code.
    let redirect = redirect_query(
        &Session::new(&app)
            .open(&query(&client, &[("prompt", "none")]))
            .await,
    );
    assert_eq!(redirect["error"], "login_required");
    assert_eq!(
        redirect["error_description"],
        "prompt=none: the user is not signed in"
    );
    assert!(!redirect.contains_key("error_code"), "{redirect:?}");
    assert_eq!(redirect["state"], STATE);
    assert_eq!(redirect["iss"], app.address);
    // offline_access with prompt=consent is fine.
    let response = Session::new(&app)
        .open(&query(
            &client,
            &[("scope", "openid offline_access"), ("prompt", "consent")],
        ))
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // A client without the grant (60), a disabled client (59).
    let mut new = NewClient::named("no code flow", Scopes::parse("openid read").unwrap());
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.grants.remove(&GrantType::AuthorizationCode);
    let without = app.create_client_with(new).await;
    let redirect = redirect_query(&Session::new(&app).open(&query(&without, &[])).await);
    assert_eq!(redirect["error_code"], "60");
    assert_eq!(redirect["error"], "unauthorized_client");
    assert_eq!(redirect["iss"], app.address);
    admin::disable_client(app.ctx(), &ClientId::parse(&client.id).unwrap())
        .await
        .unwrap();
    let redirect = redirect_query(&Session::new(&app).open(&query(&client, &[])).await);
    assert_eq!(redirect["error_code"], "59");
    assert_eq!(redirect["error"], "access_denied");
    assert_eq!(redirect["iss"], app.address);
}

async fn sign_in_refusals_are_sentences_and_deny_redirects(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    app.create_user_with("dora@example.com", PASSWORD, |u| {
        u.status = UserStatus::Disabled
    })
    .await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);

    let page = Session::new(&app).sign_in(&query, "wrong password").await;
    assert!(
        page.contains("The login or password is not correct."),
        "{page}"
    );
    assert!(
        page.contains(r#"value="ann@example.com""#),
        "the login is kept"
    );
    assert!(!page.contains("invalid_grant") && !page.contains("Allow access"));

    let mut session = Session::new(&app);
    let html = session.open(&query).await.text().await.unwrap();
    let answer = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", "dora@example.com"),
            ("password", PASSWORD),
        ])
        .await;
    let page = answer.text().await.unwrap();
    assert!(page.contains("This account is disabled."), "{page}");

    let redirect = Session::new(&app).decide(&query, "deny").await;
    assert_eq!(redirect["error"], "access_denied");
    assert_eq!(redirect["error_code"], "12");
    assert_eq!(redirect["state"], STATE);
    assert!(!redirect.contains_key("code"));
}

async fn forms_need_their_csrf_token_and_cookie(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let query = query(&client, &[]);
    let mut session = Session::new(&app);
    let html = session.open(&query).await.text().await.unwrap();
    let token = csrf(&html);
    // The sign-in token does not answer the consent form, and a forged one nothing.
    for form in [
        vec![("csrf_token", token.as_str()), ("decision", "approve")],
        vec![
            ("csrf_token", "forged"),
            ("login", LOGIN),
            ("password", PASSWORD),
        ],
    ] {
        let response = session.post(&form).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert!(response.headers().get(header::LOCATION).is_none());
    }
    // Without the cookie the form means nothing either.
    let response = Session::new(&app)
        .post(&[
            ("csrf_token", token.as_str()),
            ("login", LOGIN),
            ("password", PASSWORD),
        ])
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

/// Each near miss is the untrusted-address page at the authorize endpoint (never a redirect to
/// it), and code 104 at the token endpoint for a code issued to the registered address.
async fn redirect_uri_near_misses_are_refused_at_both_ends(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    for near_miss in NEAR_MISSES {
        let response = Session::new(&app)
            .open(&query(&client, &[("redirect_uri", near_miss)]))
            .await;
        let (status, headers) = (response.status(), response.headers().clone());
        let html = response.text().await.unwrap();
        assert_refused_page(
            status,
            &headers,
            &html,
            "not registered for this application",
        );
    }
    let code = approved_code(&app, &client).await;
    for near_miss in NEAR_MISSES {
        let answer = exchange(&app, &client, &code, &[("redirect_uri", near_miss)]).await;
        assert_eq!(
            answer.0,
            StatusCode::BAD_REQUEST,
            "{near_miss}: {}",
            answer.1
        );
        assert_eq!(answer.1["code"], 104, "{near_miss}: {}", answer.1);
    }
    let (status, body) = exchange(&app, &client, &code, &[]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the registered address still redeems: {body}"
    );
}
