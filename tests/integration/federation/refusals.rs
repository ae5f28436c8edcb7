//! What the callback refuses: every ID token rule (forged by the IdP's fault proxy), the
//! user's cancel at the IdP, no account, an unverified email, a replayed or foreign callback.
//! Each is an error page with a reference, a `federation.refused` event with its reason, and
//! no session, link or user.

use reqwest::StatusCode;
use token_domain::audit::AuditKind;
use token_domain::{Login, UpstreamSubject};

use super::fixture::{see_other, update_idp, Federated, DOMAIN};
use crate::authorize::flow::Session;

/// The error page of a refused callback: its message, and the event's reference in it.
async fn assert_refused(f: &Federated, answer: reqwest::Response, reason: &str, says: &str) {
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let html = answer.text().await.unwrap();
    assert!(html.contains(says), "{says:?} in {html}");
    assert!(
        !html.contains("eyJ"),
        "nothing upstream on the page: {html}"
    );
    let events = f.company_events().await;
    let Some(AuditKind::FederationRefused {
        reason: logged,
        idp,
    }) = events.last()
    else {
        panic!("federation.refused last: {events:?}");
    };
    assert_eq!(logged, reason);
    assert_eq!(idp.as_ref(), Some(&f.idp_id));
    let events = crate::audit::events_of(
        &f.app,
        token_domain::audit::AuditSubject::Principal(f.company.id),
    )
    .await;
    let reference = events[0].id.to_string();
    assert!(
        html.contains(&reference),
        "the reference {reference} in {html}"
    );
}

/// No user and no link for `login` came of it.
async fn assert_nobody(f: &Federated, login: &str) {
    let user = f
        .app
        .store
        .principals()
        .get_user_by_login(&Login::parse(login).unwrap())
        .await
        .unwrap();
    assert!(user.is_none(), "no user was made");
    let subject = UpstreamSubject::new(&f.idp.issuer, login).unwrap();
    let link = f
        .app
        .store
        .federation()
        .get_federation_link(&f.idp_id, &subject)
        .await;
    assert!(link.unwrap().is_none(), "no link was made");
}

async fn every_id_token_rule_refuses_a_forged_token(f: Federated) {
    for (mode, reason) in [
        ("iss", "issuer"),
        ("aud", "audience"),
        ("exp", "expired"),
        ("nonce", "nonce"),
        ("alg_none", "algorithm"),
        ("hs256", "algorithm"),
        ("unknown_key", "signature"),
    ] {
        f.idp.forge(mode).await;
        let login = format!("forged.{mode}@{DOMAIN}");
        let mut session = Session::new(&f.app);
        let answer = f.sign_in(&mut session, &login).await;
        assert_refused(&f, answer, reason, "could not be accepted").await;
        assert_nobody(&f, &login).await;
        assert!(session.sso_cookie.is_none(), "{mode}: no session");
    }
    // Once the IdP answers honestly again, the same sign-in works.
    f.idp.forge("none").await;
    let mut session = Session::new(&f.app);
    let answer = f.sign_in(&mut session, &format!("honest@{DOMAIN}")).await;
    assert_eq!(answer.status(), StatusCode::OK, "the consent page");
}

async fn a_cancel_at_the_idp_is_an_error_page(f: Federated) {
    let login = format!("gil@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let leaving = f.leave_for_idp(&mut session, &login).await;
    let callback = f.idp.sign_in(&see_other(&leaving), &login, true).await;
    let answer = f.come_back(&mut session, &callback).await;
    assert_refused(&f, answer, "idp_refused", "did not sign you in").await;
    assert_nobody(&f, &login).await;
}

async fn without_jit_and_a_match_there_is_no_account(f: Federated) {
    update_idp(&f.app, &f.idp_id, |idp| idp.jit = false).await;
    let login = format!("hal@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let answer = f.sign_in(&mut session, &login).await;
    assert_refused(&f, answer, "no_account", "no account for you here").await;
    assert_nobody(&f, &login).await;
}

async fn an_unverified_email_links_no_one(f: Federated) {
    update_idp(&f.app, &f.idp_id, |idp| idp.jit = false).await;
    let email = format!("ivy@{DOMAIN}");
    f.app
        .create_user_with("ivy", "ivy's own password", |new| {
            new.company_id = Some(f.company.id);
            new.email = Some(email.clone());
        })
        .await;
    let login = format!("unverified.{email}");
    let mut session = Session::new(&f.app);
    let answer = f.sign_in(&mut session, &login).await;
    assert_refused(&f, answer, "no_account", "no account for you here").await;
}

async fn a_callback_counts_once_and_only_in_its_own_browser(f: Federated) {
    let login = format!("joe@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let leaving = f.leave_for_idp(&mut session, &login).await;
    let callback = f.idp.sign_in(&see_other(&leaving), &login, false).await;
    // Another browser (no pending request of this sign-in) follows the callback: nothing
    // continues there, the sign-in page is shown again.
    let mut stranger = Session::new(&f.app);
    let answer = f.come_back(&mut stranger, &callback).await;
    assert_eq!(
        answer.status(),
        StatusCode::BAD_REQUEST,
        "no pending request here"
    );
    assert!(stranger.sso_cookie.is_none());
    // The callback was spent: its own browser cannot use it any more either.
    let again = f.come_back(&mut session, &callback).await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST);
    let html = again.text().await.unwrap();
    assert!(html.contains("expired or was already completed"), "{html}");
    assert!(html.contains("Reference: "), "{html}");
    assert!(session.sso_cookie.is_none());
}

crate::on_both_stores!(using crate::federation::fixture::federated;
    every_id_token_rule_refuses_a_forged_token,
    a_cancel_at_the_idp_is_an_error_page,
    without_jit_and_a_match_there_is_no_account,
    an_unverified_email_links_no_one,
    a_callback_counts_once_and_only_in_its_own_browser,
);
