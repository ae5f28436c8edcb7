//! The tokens a sign-in through a company's IdP leads to: their ID tokens name the IdP (`idp`)
//! and say how the user signed in there (`amr`, `auth_time`), at the code's exchange, at every
//! refresh of that family and on single sign-on; a password sign-in's name none. Removing the
//! IdP ends the sessions it started, and only those.

use reqwest::StatusCode;
use serde_json::Value;
use token_domain::audit::{AuditKind, AuditSubject, SessionEndReason};
use token_domain::clock::Clock;
use token_domain::{Login, PrincipalId, UpstreamSubject};

use super::fixture::{add_idp, Federated, DOMAIN};
use crate::authorize::flow::{
    approved_code, csrf, exchange, query, redirect_query, verify_with_jwks, Session, LOGIN,
    PASSWORD,
};

/// The page the sign-in came back to (consent, or the code at once), approved: the code's
/// token answer.
async fn approve(f: &Federated, session: &mut Session<'_>, came_back: reqwest::Response) -> Value {
    let redirect = if came_back.status() == StatusCode::FOUND {
        redirect_query(&came_back)
    } else {
        assert_eq!(came_back.status(), StatusCode::OK, "the consent page");
        let html = came_back.text().await.unwrap();
        let answer = session
            .post(&[("csrf_token", &csrf(&html)), ("decision", "approve")])
            .await;
        redirect_query(&answer)
    };
    let code = &redirect["code"];
    let (status, body) = exchange(&f.app, &f.client, code, &[("code_verifier", "")]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The claims of a token answer's ID token, its signature checked with the published keys.
async fn id_token_claims(f: &Federated, tokens: &Value) -> Value {
    let token = tokens["id_token"].as_str().expect("an ID token");
    verify_with_jwks(&f.app, token).await.1
}

/// A refresh of the family `tokens` started: the new token answer.
async fn refreshed(f: &Federated, tokens: &Value) -> Value {
    let refresh_token = tokens["refresh_token"].as_str().expect("a refresh token");
    let (status, body) = f
        .app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &f.client.id),
            ("client_secret", &f.client.secret),
            ("refresh_token", refresh_token),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn user_of(f: &Federated, login: &str) -> PrincipalId {
    f.app
        .store
        .principals()
        .get_user_by_login(&Login::parse(login).unwrap())
        .await
        .unwrap()
        .expect("the user")
        .id
}

#[track_caller]
fn assert_signed_in_at_the_idp(claims: &Value, f: &Federated, amr: &[&str]) {
    assert_eq!(claims["idp"], f.idp_id.to_string(), "{claims}");
    assert_eq!(claims["amr"], serde_json::json!(amr), "{claims}");
    let (auth_time, iat) = (claims["auth_time"].as_i64(), claims["iat"].as_i64());
    assert!(auth_time.is_some() && auth_time <= iat, "{claims}");
}

async fn id_tokens_name_the_idp_at_the_exchange_every_refresh_and_single_sign_on(f: Federated) {
    let login = format!("ann@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let came_back = f.sign_in(&mut session, &login).await;
    let tokens = approve(&f, &mut session, came_back).await;
    let claims = id_token_claims(&f, &tokens).await;
    assert_signed_in_at_the_idp(&claims, &f, &["pwd"]);
    // `auth_time` is the IdP's, as the session recorded it.
    let user = user_of(&f, &login).await;
    let sessions = f.app.store.sessions();
    let live = sessions.list_sessions(&user, f.app.clock.now()).await;
    let live = live.unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(claims["auth_time"], live[0].authenticated_at);
    assert_eq!(claims["sid"], live[0].sid.to_string());

    // Every refresh of the family keeps them.
    let once = refreshed(&f, &tokens).await;
    let again = refreshed(&f, &once).await;
    for answer in [&once, &again] {
        let refreshed_claims = id_token_claims(&f, answer).await;
        assert_signed_in_at_the_idp(&refreshed_claims, &f, &["pwd"]);
        assert_eq!(refreshed_claims["auth_time"], claims["auth_time"]);
    }

    // Single sign-on: a later authorization in the session names the IdP too.
    let sso = session.open(&query(&f.client, &[])).await;
    assert_eq!(sso.status(), StatusCode::FOUND, "a code at once");
    let tokens = approve(&f, &mut session, sso).await;
    let sso_claims = id_token_claims(&f, &tokens).await;
    assert_signed_in_at_the_idp(&sso_claims, &f, &["pwd"]);
    assert_eq!(sso_claims["auth_time"], claims["auth_time"]);
}

async fn the_amr_is_the_idps_and_a_password_sign_in_names_no_idp(f: Federated) {
    // The IdP reports a second factor for a login containing `mfa`.
    let login = format!("mfa.bo@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let came_back = f.sign_in(&mut session, &login).await;
    let tokens = approve(&f, &mut session, came_back).await;
    let claims = id_token_claims(&f, &tokens).await;
    assert_signed_in_at_the_idp(&claims, &f, &["pwd", "mfa"]);

    // A password sign-in here, on the same deployment: no `idp`.
    f.app.create_user(LOGIN, PASSWORD).await;
    let code = approved_code(&f.app, &f.client).await;
    let (status, tokens) = exchange(&f.app, &f.client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let claims = id_token_claims(&f, &tokens).await;
    assert!(claims.get("idp").is_none(), "{claims}");
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]), "{claims}");
    let claims = id_token_claims(&f, &refreshed(&f, &tokens).await).await;
    assert!(claims.get("idp").is_none(), "{claims}");
}

async fn removing_the_idp_ends_the_sessions_it_started_and_only_those(f: Federated) {
    let login = format!("ann@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let came_back = f.sign_in(&mut session, &login).await;
    approve(&f, &mut session, came_back).await;
    let user = user_of(&f, &login).await;
    // Another IdP of the company, whose session stays.
    let other_domain = "eu.acme.example";
    let other_idp = add_idp(&f.app, &f.idp, &f.company, "Acme EU", &[other_domain]).await;
    let other_login = format!("bo@{other_domain}");
    let mut other_session = Session::new(&f.app);
    let came_back = f.sign_in(&mut other_session, &other_login).await;
    approve(&f, &mut other_session, came_back).await;
    let other_user = user_of(&f, &other_login).await;

    let removed = token_core::admin::remove_idp(&f.app.services, &f.idp_id)
        .await
        .unwrap();
    assert_eq!(removed.links_removed, 1);
    assert_eq!(removed.sessions_ended, 1);
    assert_eq!(removed.idp.map(|idp| idp.id), Some(f.idp_id));

    let now = f.app.clock.now();
    let sessions = f.app.store.sessions();
    assert_eq!(sessions.list_sessions(&user, now).await.unwrap(), vec![]);
    let subject = UpstreamSubject::new(&f.idp.issuer, &login).unwrap();
    let federation = f.app.store.federation();
    let link = federation.get_federation_link(&f.idp_id, &subject).await;
    assert_eq!(link.unwrap(), None, "the link is gone");
    assert_eq!(federation.list_user_links(&user).await.unwrap(), vec![]);
    let ended = crate::audit::events_of(&f.app, AuditSubject::Principal(user)).await;
    assert!(
        ended.iter().any(|event| matches!(
            event.kind,
            AuditKind::SessionEnded {
                reason: SessionEndReason::Administrator,
                ..
            }
        )),
        "the session's end is audited"
    );
    // The browser's session cookie no longer signs anyone in.
    let again = session.open(&query(&f.client, &[])).await;
    assert_eq!(again.status(), StatusCode::OK, "the sign-in page again");

    let kept = sessions.list_sessions(&other_user, now).await.unwrap();
    assert_eq!(kept.len(), 1, "the other IdP's session stays");
    let upstream = kept[0].upstream.as_ref().unwrap();
    assert_eq!(upstream.idp, other_idp);
    let other_links = federation.list_user_links(&other_user).await.unwrap();
    assert_eq!(other_links.len(), 1, "and its link");

    // Removing it again finds nothing left.
    assert!(token_core::admin::remove_idp(&f.app.services, &f.idp_id)
        .await
        .is_err());
}

crate::on_both_stores!(using crate::federation::fixture::federated;
    id_tokens_name_the_idp_at_the_exchange_every_refresh_and_single_sign_on,
    the_amr_is_the_idps_and_a_password_sign_in_names_no_idp,
    removing_the_idp_ends_the_sessions_it_started_and_only_those,
);
