//! Authenticator apps from the account page over HTTP on both stores: enrolment (the secret read
//! from the page, codes computed here), a wrong first code, the recovery codes shown once and
//! stored as digests, the secret stored sealed, a replayed code refused, removal with a
//! recovery code, and each step audited.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{TotpSecret, RECOVERY_CODE_COUNT};

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::csrf;

crate::on_both_stores!(an_authenticator_app_is_enrolled_and_removed_from_the_account_page,);

const PATH: &str = "/oauth2/v0/account";

async fn post(app: &TestApp, cookie: &str, form: &[(&str, &str)]) -> reqwest::Response {
    app.http
        .post(app.url(PATH))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

/// The value of the page's element or field that follows `marker`, up to `end`.
fn between(html: &str, marker: &str, end: char) -> String {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"))
        + marker.len();
    html[start..].split(end).next().unwrap().to_owned()
}

/// A signed-in account page: the session cookie and the page's CSRF token.
async fn signed_in(app: &TestApp) -> (String, String) {
    let page = app.http.get(app.url(PATH)).send().await.unwrap();
    let nonce = page
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|value| {
            value
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned()
        })
        .find(|pair| pair.starts_with("account_sign_in="))
        .unwrap();
    let token = csrf(&page.text().await.unwrap());
    let form = [
        ("csrf_token", token.as_str()),
        ("action", "sign_in"),
        ("login", LOGIN),
        ("password", PASSWORD),
    ];
    let answer = post(app, &nonce, &form).await;
    let session = answer
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .map(|value| {
            value
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned()
        })
        .find(|pair| pair.starts_with("__Host-session="))
        .expect("signed in");
    let overview = app
        .http
        .get(app.url(PATH))
        .header(header::COOKIE, &session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = csrf(&overview);
    (session, token)
}

async fn an_authenticator_app_is_enrolled_and_removed_from_the_account_page(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let (session, token) = signed_in(&app).await;
    let page = post(
        &app,
        &session,
        &[("csrf_token", &token), ("action", "totp_start")],
    )
    .await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("<svg"), "the QR code");
    let typed = between(&html, r#"<code id="totp-secret">"#, '<');
    let secret = TotpSecret::from_base32(&typed).expect("a base32 key");
    let sealed = between(&html, r#"name="enrolment" value=""#, '"');
    let factors = app.store.second_factors();
    assert_eq!(
        factors.get_totp_factor(&user.id).await.unwrap(),
        None,
        "nothing stored yet"
    );

    let now = app.clock.now();
    let right = secret.code_at(now);
    let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
    let confirm = |code: String, sealed: String| {
        let (app, session, token) = (&app, session.clone(), token.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "totp_confirm"),
                ("enrolment", sealed.as_str()),
                ("code", code.as_str()),
            ];
            post(app, &session, &form).await
        }
    };
    let again = confirm(wrong, sealed.clone()).await.text().await.unwrap();
    assert!(again.contains("That code was not right"), "{again}");
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);
    let forged = confirm(right.clone(), format!("{sealed}x")).await;
    assert_eq!(
        forged.status(),
        StatusCode::SEE_OTHER,
        "not a sealed enrolment"
    );
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let done = confirm(right.clone(), sealed).await;
    assert_eq!(done.status(), StatusCode::OK);
    let html = done.text().await.unwrap();
    let codes: Vec<String> = html
        .split("<li><code>")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap().to_owned())
        .collect();
    assert_eq!(codes.len(), RECOVERY_CODE_COUNT, "{html}");
    let stored = factors
        .get_totp_factor(&user.id)
        .await
        .unwrap()
        .expect("enrolled");
    assert_eq!(
        stored.last_used_step,
        now / 30,
        "the confirming code's step is used"
    );
    assert_eq!(stored.recovery_codes.len(), RECOVERY_CODE_COUNT);
    let body = serde_json::to_string(&stored).unwrap();
    assert!(!body.contains(&typed), "the secret is sealed");
    assert!(!body.contains(&codes[0]), "recovery codes are digests");

    let overview = app
        .http
        .get(app.url(PATH))
        .header(header::COOKIE, &session)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(overview.contains("Remove the authenticator app"));
    let remove = |code: String| {
        let (app, session, token) = (&app, session.clone(), token.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "totp_remove"),
                ("code", code.as_str()),
            ];
            post(app, &session, &form).await
        }
    };
    let replayed = remove(right).await;
    assert_eq!(
        replayed.status(),
        StatusCode::BAD_REQUEST,
        "a code is good once"
    );
    assert!(factors.get_totp_factor(&user.id).await.unwrap().is_some());
    let removed = remove(codes[3].to_uppercase()).await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(factors.get_totp_factor(&user.id).await.unwrap(), None);

    let kinds: Vec<AuditKind> = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .map(|event| event.kind)
        .filter(|kind| kind.name().starts_with("second_factor."))
        .collect();
    assert_eq!(
        kinds,
        [
            AuditKind::SecondFactorRemoved,
            AuditKind::SecondFactorFailed,
            AuditKind::SecondFactorEnrolled,
        ],
        "newest first"
    );
}
