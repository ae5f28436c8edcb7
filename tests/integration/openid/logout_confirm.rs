//! RP-initiated logout without a valid `id_token_hint`: a browser with a session is asked first,
//! and only the confirmation page's own form, posted with the token bound to its session, signs
//! it out. A cross-site link (a GET), a cross-site form without the token, another session's
//! token or the token in a query string end nothing.

use crate::support::app::TestApp;
use reqwest::{header, StatusCode};
use token_domain::audit::{AuditKind, AuditSubject, SessionEndReason};
use token_domain::clock::Clock;
use token_domain::PrincipalId;

use super::*;
use crate::audit::events_of;
use crate::authorize::flow::csrf;

crate::on_both_stores!(only_the_confirmation_form_signs_a_browser_out_without_a_hint,);

const LOGOUT: &str = "/oauth2/v0/logout";

async fn live_sessions(app: &TestApp, user: PrincipalId) -> usize {
    app.store
        .sessions()
        .list_sessions(&user, app.clock.now())
        .await
        .unwrap()
        .len()
}

/// A `GET` (`form: None`) or form `POST` of the end-session endpoint with `cookie`.
async fn send(
    app: &TestApp,
    cookie: &str,
    query: &[(&str, &str)],
    form: Option<&[(&str, &str)]>,
) -> reqwest::Response {
    let request = match form {
        None => app.http.get(app.url(LOGOUT)).query(query),
        Some(form) => app
            .http
            .post(app.url(LOGOUT))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap()),
    };
    request.header(header::COOKIE, cookie).send().await.unwrap()
}

/// What a try is called, what it sends, and whether as a form post (else a `GET`).
type Try<'a> = (&'a str, Vec<(&'a str, &'a str)>, bool);

async fn only_the_confirmation_form_signs_a_browser_out_without_a_hint(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let mut browser = Session::new(&app);
    let redirect = browser.decide(&query(&client, &[]), "approve").await;
    let (_, tokens) = exchange(&app, &client, &redirect["code"], &[("code_verifier", "")]).await;
    let cookie = browser.sso_cookie.clone().expect("a session");
    let mut other = Session::new(&app);
    other.decide(&query(&client, &[]), "approve").await;
    let other_cookie = other.sso_cookie.clone().expect("another session");
    assert_eq!(live_sessions(&app, user.id).await, 2);

    let params = [
        ("client_id", client.id.as_str()),
        ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
        ("state", "s-1"),
    ];
    // The link: a page that asks, with the request's parameters in its form.
    let asked = send(&app, &cookie, &params, None).await;
    assert_eq!(asked.status(), StatusCode::OK);
    assert!(!asked.headers().contains_key(header::SET_COOKIE));
    assert!(!asked.headers().contains_key(header::LOCATION));
    let page = asked.text().await.unwrap();
    assert!(page.contains("Sign out?"), "{page}");
    assert!(page.contains(r#"name="state" value="s-1""#), "{page}");
    let token = csrf(&page);
    assert_eq!(live_sessions(&app, user.id).await, 2, "nothing ended");

    let other_token = csrf(
        &send(&app, &other_cookie, &[], None)
            .await
            .text()
            .await
            .unwrap(),
    );
    let refused: [Try; 4] = [
        ("a cross-site form (no token)", params.to_vec(), true),
        (
            "another session's token",
            [params.as_slice(), &[("csrf_token", other_token.as_str())]].concat(),
            true,
        ),
        (
            "a forged token",
            [params.as_slice(), &[("csrf_token", "AAAA")]].concat(),
            true,
        ),
        (
            "the right token in a query string",
            [params.as_slice(), &[("csrf_token", token.as_str())]].concat(),
            false,
        ),
    ];
    for (what, fields, post) in refused {
        let answer = if post {
            send(&app, &cookie, &[], Some(&fields)).await
        } else {
            send(&app, &cookie, &fields, None).await
        };
        assert_eq!(answer.status(), StatusCode::OK, "{what}");
        assert!(!answer.headers().contains_key(header::LOCATION), "{what}");
        assert!(answer.text().await.unwrap().contains("Sign out?"), "{what}");
        assert_eq!(live_sessions(&app, user.id).await, 2, "{what} ends nothing");
    }
    assert_eq!(
        app.refresh(&client, tokens["refresh_token"].as_str().unwrap())
            .await
            .0,
        StatusCode::OK,
        "no family revoked"
    );

    // The page's own form: signed out, back to the application with its state.
    let confirmed = [params.as_slice(), &[("csrf_token", token.as_str())]].concat();
    let answer = send(&app, &cookie, &[], Some(&confirmed)).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    assert_eq!(
        answer.headers()[header::LOCATION],
        format!("{POST_LOGOUT_REDIRECT_URI}?state=s-1")
    );
    let cleared = answer.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cleared.starts_with("__Host-session=;"), "{cleared}");
    assert_eq!(
        live_sessions(&app, user.id).await,
        1,
        "this browser's session only"
    );
    let ended = events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .any(|event| {
            matches!(
                event.kind,
                AuditKind::SessionEnded {
                    reason: SessionEndReason::Logout,
                    ..
                }
            )
        });
    assert!(ended, "audited");
    // The same token again, its session gone: nothing to end, the signed-out address.
    let again = send(&app, &cookie, &[], Some(&confirmed)).await;
    assert_eq!(again.status(), StatusCode::FOUND);
    assert_eq!(live_sessions(&app, user.id).await, 1);
}
