//! Every response a naive SAML SP would take and ours refuses, each forged by the real IdP
//! (`tests/idp/saml_idp.py`'s modes): an error page with a reference, a `federation.refused`
//! event with its reason, and no link, user or session made.

use reqwest::StatusCode;
use token_domain::{IdpProtocol, Login};

use super::fixture::DOMAIN;
use super::saml_fixture::SamlFederated;
use crate::authorize::flow::Session;
use crate::support::saml_idp::SamlIdp;

#[track_caller]
fn assert_refused_page(status: StatusCode, html: &str, what: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {html}");
    assert!(html.contains("Reference:"), "{what}: {html}");
    assert!(
        !html.contains("SAMLResponse") && !html.contains("Assertion"),
        "{what}: no document"
    );
}

async fn each_forged_response_is_refused_and_changes_nothing(f: SamlFederated) {
    let cases = [
        ("unsigned", "unsigned"),
        ("sha1", "weak_algorithm"),
        ("tampered", "bad_signature"),
        ("wrapped", "signature_wrapping"),
        ("wrapped_same_id", "signature_wrapping"),
        ("two_assertions", "signature_wrapping"),
        ("expired", "expired"),
        ("not_yet_valid", "not_yet_valid"),
        ("wrong_audience", "wrong_audience"),
        ("wrong_destination", "wrong_destination"),
        ("wrong_recipient", "wrong_recipient"),
        ("dtd", "dtd"),
        ("idp_failure", "idp_refused"),
    ];
    for (index, (mode, reason)) in cases.iter().enumerate() {
        let login = format!("u{index}@{DOMAIN}");
        let mut session = Session::new(&f.app);
        let answer = f.sign_in(&mut session, &login, mode).await;
        let status = answer.status();
        assert_refused_page(status, &answer.text().await.unwrap(), mode);
        let refusals = f.refusals().await;
        assert_eq!(
            refusals.last().map(String::as_str),
            Some(*reason),
            "{mode}: {refusals:?}"
        );
        assert_eq!(f.linked_user(&login).await, None, "{mode}: nobody linked");
        let mallory = format!("mallory@{DOMAIN}");
        assert_eq!(f.linked_user(&mallory).await, None, "{mode}: never mallory");
        let parsed = Login::parse(&login).unwrap();
        let made = f.app.store.principals().get_user_by_login(&parsed);
        assert!(made.await.unwrap().is_none(), "{mode}: no user made");
    }
    assert_eq!(f.refusals().await.len(), cases.len());
}

/// A comment inside the NameID and email (`ann@acme.example<!---->.evil.example`), which
/// exclusive canonicalisation leaves out of what is signed: we read the whole text, so the
/// sign-in is of `….evil.example`, never of the company's `ann`.
async fn a_comment_in_the_name_id_never_reaches_the_user_it_cuts_to(f: SamlFederated) {
    let login = format!("ann@{DOMAIN}");
    let ann = f
        .app
        .create_user_with("ann", "ann's own password", |new| {
            new.company_id = Some(f.company.id);
            new.email = Some(login.clone());
        })
        .await;
    let mut session = Session::new(&f.app);
    let answer = f.sign_in(&mut session, &login, "comment").await;
    assert_eq!(answer.status(), StatusCode::OK, "the whole text signs in");
    assert_eq!(f.linked_user(&login).await, None, "not ann's subject");
    let whole = format!("{}.evil.example", SamlIdp::name_id_of(&login));
    let linked = f
        .linked_subject(&whole)
        .await
        .expect("the whole NameID is linked");
    assert_ne!(linked, ann.id, "never the user the comment cuts to");
    let made = f
        .app
        .store
        .principals()
        .get_user(&linked)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        made.email.as_deref(),
        Some(format!("{login}.evil.example").as_str())
    );
}

/// A response to another of our requests (another browser's `RelayState`), a cancel at the
/// IdP, and an unsolicited response from an IdP not allowed to start sign-ins.
async fn a_response_for_another_request_a_cancel_and_an_unsolicited_one_are_refused(
    f: SamlFederated,
) {
    let (kim, lea) = (format!("kim@{DOMAIN}"), format!("lea@{DOMAIN}"));
    let mut first = Session::new(&f.app);
    let first_sso = f.leave_for_idp(&mut first, &kim).await;
    let mut second = Session::new(&f.app);
    let second_sso = f.leave_for_idp(&mut second, &lea).await;
    let mut post = f.idp.login(&second_sso, &lea, false).await;
    let first_relay = url::Url::parse(&first_sso)
        .unwrap()
        .query_pairs()
        .find(|(name, _)| name == "RelayState")
        .unwrap()
        .1
        .into_owned();
    post.relay_state = first_relay;
    let answer = f.post_acs(&post).await;
    assert_refused_page(
        answer.status(),
        &answer.text().await.unwrap(),
        "another request",
    );
    assert_eq!(f.refusals().await, ["wrong_request"]);
    assert_eq!(f.linked_user(&lea).await, None);

    let mut third = Session::new(&f.app);
    let sso = f.leave_for_idp(&mut third, &kim).await;
    let cancelled = f.idp.cancel(&sso).await;
    let answer = f.post_acs(&cancelled).await;
    assert_refused_page(answer.status(), &answer.text().await.unwrap(), "cancel");
    assert_eq!(f.refusals().await.last().unwrap(), "idp_refused");

    let federation = f.app.store.federation();
    let mut idp = federation
        .get_identity_provider(&f.idp_id)
        .await
        .unwrap()
        .unwrap();
    if let IdpProtocol::Saml(connection) = &mut idp.protocol {
        connection.allow_idp_initiated = false;
    }
    assert!(federation.replace_identity_provider(&idp).await.unwrap());
    let unsolicited = f.idp.idp_initiated(&f.sp_entity_id(), &kim, false).await;
    let answer = f.post_acs(&unsolicited).await;
    assert_refused_page(
        answer.status(),
        &answer.text().await.unwrap(),
        "unsolicited",
    );
    assert_eq!(f.refusals().await.last().unwrap(), "unsolicited");
    assert_eq!(f.linked_user(&kim).await, None);
}

crate::on_both_stores!(using crate::federation::saml_fixture::saml_federated;
    each_forged_response_is_refused_and_changes_nothing,
    a_comment_in_the_name_id_never_reaches_the_user_it_cuts_to,
    a_response_for_another_request_a_cancel_and_an_unsolicited_one_are_refused,
);
