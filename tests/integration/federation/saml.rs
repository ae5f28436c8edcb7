//! Signing in through a company's SAML 2.0 IdP (pysaml2) over HTTP: our signed
//! `AuthnRequest`, the IdP's signed (or signed and encrypted) response at our ACS, the code that
//! follows, an IdP-initiated sign-in on the account page, and single logout both ways. Every
//! forged response a naive SP would take is refused (`saml_refusals`).

use reqwest::{header, StatusCode};
use token_domain::audit::AuditKind;
use token_domain::clock::Clock;
use token_domain::Login;

use super::fixture::{see_other, DOMAIN};
use super::saml_fixture::{cookies_set, SamlFederated};
use crate::authorize::flow::{csrf, exchange, redirect_query, verify_with_jwks, Session};
use crate::support::saml_idp::SamlIdp;

/// The consent page the sign-in came back to, approved: the code's token answer.
async fn approve(
    f: &SamlFederated,
    session: &mut Session<'_>,
    consent: reqwest::Response,
) -> serde_json::Value {
    let status = consent.status();
    let redirect = if status == StatusCode::FOUND {
        redirect_query(&consent)
    } else {
        let html = consent.text().await.unwrap();
        let refusals = f.refusals().await;
        assert_eq!(
            status,
            StatusCode::OK,
            "the consent page: {refusals:?} {html}"
        );
        assert!(html.contains("would like to"), "the consent page: {html}");
        let answer = session
            .post(&[("csrf_token", &csrf(&html)), ("decision", "approve")])
            .await;
        redirect_query(&answer)
    };
    let (status, body) = exchange(
        &f.app,
        &f.client,
        &redirect["code"],
        &[("code_verifier", "")],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn id_token_claims(f: &SamlFederated, tokens: &serde_json::Value) -> serde_json::Value {
    let (_, claims) = verify_with_jwks(&f.app, tokens["id_token"].as_str().unwrap()).await;
    claims
}

async fn a_signed_assertion_signs_in_just_in_time_and_the_authorization_continues(
    f: SamlFederated,
) {
    let login = format!("ann@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let sso = f.leave_for_idp(&mut session, &login).await;
    let asked: std::collections::HashMap<_, _> = url::Url::parse(&sso)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(
        asked["SigAlg"], "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "signed, as the IdP's metadata wants"
    );
    assert!(asked["RelayState"].len() >= 32 && asked.contains_key("Signature"));
    // The IdP checks our signature with the certificate of our metadata, or answers 400.
    let post = f.idp.login(&sso, &login, false).await;
    let consent = f.come_back(&mut session, &post).await;
    let tokens = approve(&f, &mut session, consent).await;
    // Nothing the IdP sent, nor what it was asked with, is in the logs.
    crate::support::logs::assert_no_secret_logged(&[
        &post.saml_response,
        &post.relay_state,
        &SamlIdp::name_id_of(&login),
        &asked["SAMLRequest"],
    ]);
    let claims = id_token_claims(&f, &tokens).await;
    assert_eq!(claims["idp"], f.idp_id.to_string());
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
    assert!(claims["auth_time"].as_i64().unwrap() <= claims["iat"].as_i64().unwrap());
    let user = f.linked_user(&login).await.expect("the NameID is linked");
    let made = f
        .app
        .store
        .principals()
        .get_user(&user)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.company_id, Some(f.company.id));
    assert_eq!(
        made.login,
        Login::parse(&login).unwrap(),
        "login = the email"
    );
    let events = f.company_events().await;
    assert!(
        !events
            .iter()
            .any(|kind| matches!(kind, AuditKind::FederationRefused { .. })),
        "{events:?}"
    );
    // The same response again: its pending request is used, and as an IdP-initiated one
    // (this IdP may start sign-ins) it answers a request, so it is refused; nothing new.
    let again = f.post_acs(&post).await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST);
    assert!(again.text().await.unwrap().contains("Reference:"));
    assert_eq!(f.refusals().await, ["wrong_request"]);
}

/// Each way the IdP may protect its answer that we accept.
async fn signed_responses_and_encrypted_assertions_sign_in(f: SamlFederated) {
    for (mode, login) in [
        ("signed_response", "bo"),
        ("response_only", "cy"),
        ("encrypted", "di"),
        ("encrypted_cbc", "ed"),
    ] {
        let login = format!("{login}@{DOMAIN}");
        let mut session = Session::new(&f.app);
        let consent = f.sign_in(&mut session, &login, mode).await;
        approve(&f, &mut session, consent).await;
        assert!(f.linked_user(&login).await.is_some(), "{mode} signs in");
    }
    assert!(f.refusals().await.is_empty(), "{:?}", f.refusals().await);
}

/// `AuthnContextClassRef` is the ID token's `amr`: a multi-factor class `mfa`.
async fn a_multi_factor_context_is_mfa_in_the_id_token(f: SamlFederated) {
    let login = format!("fay@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let sso = f.leave_for_idp(&mut session, &login).await;
    let post = f.idp.login(&sso, &login, true).await;
    assert!(post.xml().contains("https://refeds.org/profile/mfa"));
    let consent = f.come_back(&mut session, &post).await;
    let tokens = approve(&f, &mut session, consent).await;
    let claims = id_token_claims(&f, &tokens).await;
    assert_eq!(claims["amr"], serde_json::json!(["mfa"]));
}

/// A sign-in the IdP starts lands on the account page, signed in; the same response again is a
/// replay.
async fn an_idp_initiated_sign_in_lands_on_the_account_page(f: SamlFederated) {
    let login = format!("gus@{DOMAIN}");
    let post = f.idp.idp_initiated(&f.sp_entity_id(), &login, false).await;
    assert!(!post.xml().contains("InResponseTo"));
    let answer = f.post_acs(&post).await;
    let resume = see_other(&answer);
    assert!(
        resume.starts_with(&f.app.url("/oauth2/v0/account?upstream=")),
        "{resume}"
    );
    let nonce = cookies_set(&answer);
    assert!(
        nonce
            .iter()
            .any(|cookie| cookie.starts_with("account_sign_in=")),
        "{nonce:?}"
    );
    let account = f
        .app
        .http
        .get(&resume)
        .header(header::COOKIE, nonce.join("; "))
        .send()
        .await
        .unwrap();
    let signed_in = cookies_set(&account);
    assert!(
        signed_in
            .iter()
            .any(|cookie| cookie.starts_with("__Host-session=")),
        "a session: {} {signed_in:?}",
        account.status()
    );
    let user = f.linked_user(&login).await.expect("linked");
    let live = f
        .app
        .store
        .sessions()
        .list_sessions(&user, f.app.clock.now())
        .await;
    assert_eq!(live.unwrap().len(), 1);
    // Without the nonce cookie (another browser): the sign-in form, no session.
    let elsewhere = f.app.http.get(&resume).send().await.unwrap();
    assert!(!cookies_set(&elsewhere)
        .iter()
        .any(|c| c.starts_with("__Host-session=")));

    let replayed = f.post_acs(&post).await;
    assert_eq!(replayed.status(), StatusCode::BAD_REQUEST);
    assert_eq!(f.refusals().await, ["replayed"]);
}

/// The IdP's signed `LogoutRequest` ends the sessions it started for that NameID (not another
/// user's) and is answered with our signed `LogoutResponse`; an unsigned one changes nothing.
async fn an_idp_initiated_logout_ends_its_sessions_and_answers_signed(f: SamlFederated) {
    let (hal, ida) = (format!("hal@{DOMAIN}"), format!("ida@{DOMAIN}"));
    for login in [&hal, &ida] {
        let mut session = Session::new(&f.app);
        let consent = f.sign_in(&mut session, login, "signed").await;
        approve(&f, &mut session, consent).await;
    }
    let (hal_id, ida_id) = (
        f.linked_user(&hal).await.unwrap(),
        f.linked_user(&ida).await.unwrap(),
    );
    let now = f.app.clock.now();
    let store = f.app.store.clone();
    let live = |user| {
        let store = store.clone();
        async move {
            store
                .sessions()
                .list_sessions(&user, now)
                .await
                .unwrap()
                .len()
        }
    };
    assert_eq!((live(hal_id).await, live(ida_id).await), (1, 1));

    let unsigned = f.idp.logout_url(&f.sp_entity_id(), &hal, false).await;
    let refused = f.app.http.get(&unsigned).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(live(hal_id).await, 1, "an unsigned request changes nothing");
    assert_eq!(f.refusals().await, ["unsigned"]);

    let elsewhere = "https://other.example/slo";
    let misaddressed = f
        .idp
        .logout_url_to(&f.sp_entity_id(), &hal, elsewhere)
        .await;
    let refused = f.app.http.get(&misaddressed).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        live(hal_id).await,
        1,
        "a request to another service changes nothing"
    );
    assert_eq!(f.refusals().await, ["unsigned", "misaddressed"]);

    let signed = f.idp.logout_url(&f.sp_entity_id(), &hal, true).await;
    let answer = f.app.http.get(&signed).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    let to_idp = answer.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        to_idp.starts_with(&format!("{}/slo?SAMLResponse=", f.idp.base)),
        "{to_idp}"
    );
    assert_eq!((live(hal_id).await, live(ida_id).await), (0, 1));
    let at_idp = f.app.http.get(&to_idp).send().await.unwrap();
    assert_eq!(at_idp.status(), StatusCode::OK);
    let records = f.idp.records().await;
    let response = records.last().unwrap();
    assert_eq!(response["kind"], "logout_response");
    assert_eq!(response["signature_valid"], true, "{records:?}");
    assert_eq!(
        response["status"],
        "urn:oasis:names:tc:SAML:2.0:status:Success"
    );
    assert_eq!(f.refusals().await.len(), 2);
}

/// A company that requires two factors counts a SAML sign-in as two only when its context class
/// is multi-factor, or the IdP is trusted to have asked.
async fn a_company_that_requires_two_factors_counts_the_idps_only_for_a_multi_factor_class(
    f: SamlFederated,
) {
    token_core::admin::set_company_mfa(
        f.app.ctx(),
        &f.company.id,
        token_domain::MfaPolicy::Required,
    )
    .await
    .unwrap();
    let page = |answer: reqwest::Response| async move {
        assert_eq!(answer.status(), StatusCode::OK);
        answer.text().await.unwrap()
    };
    let mut session = Session::new(&f.app);
    let one = page(
        f.sign_in(&mut session, &format!("oli@{DOMAIN}"), "signed")
            .await,
    )
    .await;
    assert!(one.contains("Set up an authenticator app"), "{one}");
    assert!(
        session.sso_cookie.is_none(),
        "no session before the second factor"
    );

    let login = format!("pam@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let sso = f.leave_for_idp(&mut session, &login).await;
    let post = f.idp.login(&sso, &login, true).await;
    let two = page(f.come_back(&mut session, &post).await).await;
    assert!(two.contains("would like to"), "{two}");
    assert!(session.sso_cookie.is_some(), "a session with both factors");

    let federation = f.app.store.federation();
    let mut idp = federation
        .get_identity_provider(&f.idp_id)
        .await
        .unwrap()
        .unwrap();
    idp.trust_mfa = true;
    assert!(federation.replace_identity_provider(&idp).await.unwrap());
    let mut session = Session::new(&f.app);
    let trusted = page(
        f.sign_in(&mut session, &format!("quinn@{DOMAIN}"), "signed")
            .await,
    )
    .await;
    assert!(trusted.contains("would like to"), "{trusted}");
}

/// The IdP's `LogoutRequest` over the HTTP-POST binding, enveloped-signed: the same; unsigned,
/// nothing.
async fn an_idp_initiated_logout_posted_ends_its_sessions_too(f: SamlFederated) {
    let login = format!("kai@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let consent = f.sign_in(&mut session, &login, "signed").await;
    approve(&f, &mut session, consent).await;
    let user = f.linked_user(&login).await.unwrap();
    let live = || async {
        let now = f.app.clock.now();
        f.app
            .store
            .sessions()
            .list_sessions(&user, now)
            .await
            .unwrap()
            .len()
    };
    assert_eq!(live().await, 1);
    let (url, form) = f.idp.logout_post(&f.sp_entity_id(), &login, false).await;
    let refused = f.app.http.post(&url).form(&form).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert_eq!(live().await, 1, "unsigned: nothing changed");
    let (url, form) = f.idp.logout_post(&f.sp_entity_id(), &login, true).await;
    let answer = f.app.http.post(&url).form(&form).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::FOUND);
    let to_idp = answer.headers()[header::LOCATION].to_str().unwrap();
    assert!(
        to_idp.starts_with(&format!("{}/slo?SAMLResponse=", f.idp.base)),
        "{to_idp}"
    );
    assert_eq!(live().await, 0);
    assert_eq!(f.refusals().await, ["unsigned"]);
}

/// Our sign-out (the account page's "everywhere") ends the session here, then sends a signed
/// `LogoutRequest` for its NameID and session to the IdP, whose answer ends on the signed-out
/// page.
async fn our_sign_out_sends_a_signed_logout_request_to_the_idp(f: SamlFederated) {
    let login = format!("joe@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let consent = f.sign_in(&mut session, &login, "signed").await;
    approve(&f, &mut session, consent).await;
    let user = f.linked_user(&login).await.unwrap();
    let cookie = session.sso_cookie.clone().expect("signed in");
    let page = f
        .app
        .http
        .get(f.app.url("/oauth2/v0/account"))
        .header(header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    let html = page.text().await.unwrap();
    assert!(html.contains("via Sign in with Acme"), "{html}");
    let sign_out = f
        .app
        .http
        .post(f.app.url("/oauth2/v0/account"))
        .header(header::COOKIE, &cookie)
        .form(&[
            ("csrf_token", csrf(&html).as_str()),
            ("action", "sign_out_everywhere"),
        ])
        .send()
        .await
        .unwrap();
    let to_idp = see_other(&sign_out);
    assert!(
        to_idp.starts_with(&format!("{}/slo?SAMLRequest=", f.idp.base)),
        "{to_idp}"
    );
    let live = f
        .app
        .store
        .sessions()
        .list_sessions(&user, f.app.clock.now())
        .await;
    assert!(live.unwrap().is_empty(), "the session here ended first");
    let back = f.app.http.get(&to_idp).send().await.unwrap();
    assert_eq!(back.status(), StatusCode::FOUND, "the IdP took our request");
    let records = f.idp.records().await;
    let request = &records[0];
    assert_eq!(request["kind"], "logout_request");
    assert_eq!(request["signature_valid"], true);
    assert_eq!(request["name_id"], SamlIdp::name_id_of(&login));
    let ours = back.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(ours.starts_with(&f.app.url(&format!("/federation/v0/saml/{}/slo?", f.idp_id))));
    let last = f.app.http.get(&ours).send().await.unwrap();
    assert_eq!(last.status(), StatusCode::OK, "the signed-out page");
    assert!(f.refusals().await.is_empty(), "{:?}", f.refusals().await);
}

/// Our metadata, as the IdP imports it: the entity id is its URL, the ACS and both logout
/// bindings, both certificates, signed requests.
async fn our_metadata_is_what_the_idp_imports(f: SamlFederated) {
    let answer = f.app.http.get(f.sp_entity_id()).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        answer.headers()[header::CONTENT_TYPE],
        "application/samlmetadata+xml"
    );
    let xml = answer.text().await.unwrap();
    assert!(xml.contains(&format!("entityID=\"{}\"", f.sp_entity_id())));
    assert!(xml.contains(&format!("Location=\"{}\"", f.acs())));
    assert!(xml.contains("AuthnRequestsSigned=\"true\""));
    assert!(xml.contains("use=\"signing\"") && xml.contains("use=\"encryption\""));
    assert_eq!(xml.matches("SingleLogoutService").count(), 2);
    assert!(!xml.contains("PRIVATE"), "never a key");
    let unknown = f
        .app
        .http
        .get(
            f.app
                .url("/federation/v0/saml/0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6/metadata"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
}

crate::on_both_stores!(using crate::federation::saml_fixture::saml_federated;
    a_signed_assertion_signs_in_just_in_time_and_the_authorization_continues,
    signed_responses_and_encrypted_assertions_sign_in,
    a_multi_factor_context_is_mfa_in_the_id_token,
    a_company_that_requires_two_factors_counts_the_idps_only_for_a_multi_factor_class,
    an_idp_initiated_sign_in_lands_on_the_account_page,
    an_idp_initiated_logout_ends_its_sessions_and_answers_signed,
    our_sign_out_sends_a_signed_logout_request_to_the_idp,
    an_idp_initiated_logout_posted_ends_its_sessions_too,
    our_metadata_is_what_the_idp_imports,
);
