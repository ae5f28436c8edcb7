//! Signing in through a company's OpenID Provider over HTTP: discovery by the login's domain,
//! the IdP's own login page, the callback, and the authorization that continues, with the user
//! found by link, `externalId`, verified email or made just in time, never another company's.

use reqwest::StatusCode;
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::{Login, UpstreamSubject};

use super::fixture::{add_idp, see_other, Federated, DOMAIN};
use crate::authorize::flow::{csrf, exchange, redirect_query, Session};

/// The consent page the sign-in came back to, approved: the code's token answer.
pub(crate) async fn approve(
    f: &Federated,
    session: &mut Session<'_>,
    consent: reqwest::Response,
) -> serde_json::Value {
    let status = consent.status();
    // The user approved the app before: the code at once.
    let redirect = if status == StatusCode::FOUND {
        redirect_query(&consent)
    } else {
        let html = consent.text().await.unwrap();
        let events = f.company_events().await;
        assert_eq!(status, StatusCode::OK, "the consent page: {events:?}");
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

/// A whole sign-in of `login` at the IdP in a browser of its own, approved: the user its subject
/// is linked to.
async fn sign_in_and_link(f: &Federated, login: &str) -> token_domain::PrincipalId {
    let mut session = Session::new(&f.app);
    let consent = f.sign_in(&mut session, login).await;
    approve(f, &mut session, consent).await;
    linked_user(f, &f.idp_id, login)
        .await
        .expect("the subject is linked")
}

/// The user `login`'s subject at the IdP is linked to through `idp`, if any.
async fn linked_user(
    f: &Federated,
    idp: &token_domain::IdpId,
    login: &str,
) -> Option<token_domain::PrincipalId> {
    let subject = UpstreamSubject::new(&f.idp.issuer, login).unwrap();
    let link = f.app.store.federation().get_federation_link(idp, &subject);
    link.await.unwrap().map(|link| link.user_id)
}

async fn a_login_of_the_companys_domain_signs_in_at_its_idp_just_in_time(f: Federated) {
    let login = format!("ann@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let leaving = f.leave_for_idp(&mut session, &login).await;
    let authorization = url::Url::parse(&see_other(&leaving)).unwrap();
    let asked: std::collections::HashMap<_, _> = authorization.query_pairs().into_owned().collect();
    assert_eq!(asked["client_id"], crate::support::oidc_idp::CLIENT_ID);
    assert_eq!(asked["code_challenge_method"], "S256");
    assert_eq!(asked["login_hint"], login);
    assert!(asked["state"].len() >= 43 && asked["nonce"].len() >= 43);
    assert_eq!(
        asked["redirect_uri"],
        f.app.url("/federation/v0/oidc/callback")
    );

    let callback = f.idp.sign_in(authorization.as_str(), &login, false).await;
    let consent = f.come_back(&mut session, &callback).await;
    let tokens = approve(&f, &mut session, consent).await;
    // Nothing the IdP sent, nor what it was asked with, is in the logs.
    let answered: std::collections::HashMap<_, _> = url::Url::parse(&callback)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    crate::support::logs::assert_no_secret_logged(&[
        &answered["code"],
        &answered["state"],
        &asked["nonce"],
        crate::support::oidc_idp::CLIENT_SECRET,
    ]);
    assert_eq!(tokens["principal_type"], "user");

    // A new user of the company, linked to the IdP's subject.
    let user = f
        .app
        .store
        .principals()
        .get_user_by_login(&Login::parse(&login).unwrap())
        .await
        .unwrap()
        .expect("a user made just in time");
    assert_eq!(user.company_id, Some(f.company.id));
    assert_eq!(user.email.as_deref(), Some(login.as_str()));
    let subject = UpstreamSubject::new(&f.idp.issuer, &login).unwrap();
    let link = f
        .app
        .store
        .federation()
        .get_federation_link(&f.idp_id, &subject)
        .await
        .unwrap()
        .expect("the subject is linked");
    assert_eq!(link.user_id, user.id);
    // The session says the IdP started it.
    let sessions = f
        .app
        .store
        .sessions()
        .list_sessions(&user.id, f.app.clock.now())
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1);
    let upstream = sessions[0].upstream.as_ref().expect("started by the IdP");
    assert_eq!(upstream.idp, f.idp_id);
    let sealed = upstream.id_token.as_ref().unwrap();
    assert!(
        !sealed.as_str().starts_with("eyJ"),
        "the IdP's ID token is sealed"
    );

    let events = crate::audit::events_of(&f.app, AuditSubject::Principal(user.id)).await;
    let kinds: Vec<&str> = events.iter().map(|event| event.kind.name()).collect();
    for kind in [
        "user.created",
        "federation.linked",
        "federation.signed_in",
        "session.started",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }

    // Single sign-on: the next authorization asks nothing, at the IdP or here.
    let again = session
        .open(&crate::authorize::flow::query(&f.client, &[]))
        .await;
    assert_eq!(again.status(), StatusCode::FOUND, "a code at once");
}

async fn the_password_step_follows_any_other_login_alike(f: Federated) {
    f.app.create_user("carol", "a password of carol's").await;
    let mut pages = Vec::new();
    for login in ["carol", "nobody@elsewhere.example", "nobody"] {
        let mut session = Session::new(&f.app);
        let answer = f.leave_for_idp(&mut session, login).await;
        assert_eq!(
            answer.status(),
            StatusCode::OK,
            "{login}: the password step"
        );
        let html = answer.text().await.unwrap();
        assert!(html.contains(&format!("value=\"{login}\"")), "{html}");
        assert!(
            !html.contains("is not correct"),
            "no password was checked: {html}"
        );
        pages.push(html.replace(&csrf(&html), "").replace(login, "LOGIN"));
    }
    // Whether the login exists, the page is the same.
    assert_eq!(pages[0], pages[2]);
}

async fn linking_by_email_reaches_the_companys_user_never_another_companys(f: Federated) {
    // The company's own user, with the email the IdP reports.
    let login = format!("bea@{DOMAIN}");
    let bea = f
        .app
        .create_user_with("bea", "bea's own password", |new| {
            new.company_id = Some(f.company.id);
            new.email = Some(login.clone());
        })
        .await;
    let linked = sign_in_and_link(&f, &login).await;
    assert_eq!(linked, bea.id, "linked to the company's user");

    // Another company's user holds an email the IdP reports: never reached.
    let other = f.app.create_company("Other").await;
    let dan_login = format!("dan@{DOMAIN}");
    let dan = f
        .app
        .create_user_with("dan", "dan's own password", |new| {
            new.company_id = Some(other.id);
            new.email = Some(dan_login.clone());
        })
        .await;
    let linked = sign_in_and_link(&f, &dan_login).await;
    assert_ne!(linked, dan.id, "another company's user is never linked");
    let made = f
        .app
        .store
        .principals()
        .get_user(&linked)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(made.company_id, Some(f.company.id));
    assert_eq!(made.email, None, "the address stays the other user's");
}

async fn a_link_decides_whatever_the_email_says_later(f: Federated) {
    let login = format!("eve@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let consent = f.sign_in(&mut session, &login).await;
    approve(&f, &mut session, consent).await;
    let subject = UpstreamSubject::new(&f.idp.issuer, &login).unwrap();
    let first = f
        .app
        .store
        .federation()
        .get_federation_link(&f.idp_id, &subject)
        .await;
    let first = first.unwrap().unwrap().user_id;
    // The same subject again, in another browser: the same user, no second user made.
    let mut session = Session::new(&f.app);
    let consent = f.sign_in(&mut session, &login).await;
    approve(&f, &mut session, consent).await;
    let events = crate::audit::events_of(&f.app, AuditSubject::Principal(first)).await;
    let created = events
        .iter()
        .filter(|event| matches!(event.kind, AuditKind::UserCreated))
        .count();
    assert_eq!(created, 1);
    let signed_in = events
        .iter()
        .filter(|event| matches!(event.kind, AuditKind::FederationSignedIn { .. }))
        .count();
    assert_eq!(signed_in, 2);
}

async fn several_idps_for_a_domain_are_a_button_each(f: Federated) {
    // A domain is claimed once per company: a second company claims it too.
    let contractors = f.app.create_company("Acme Contractors").await;
    let second = add_idp(&f.app, &f.idp, &contractors, "Acme contractors", &[DOMAIN]).await;
    let login = format!("fay@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let answer = f.leave_for_idp(&mut session, &login).await;
    assert_eq!(answer.status(), StatusCode::OK, "a choice, not a redirect");
    let html = answer.text().await.unwrap();
    assert!(html.contains(">Sign in with Acme</button>"), "{html}");
    assert!(html.contains(">Acme contractors</button>"), "{html}");
    let chosen = second.to_string();
    let answer = session
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("login", &login),
            ("idp", &chosen),
        ])
        .await;
    let authorization = see_other(&answer);
    assert!(authorization.starts_with(&f.idp.issuer), "{authorization}");
    let callback = f.idp.sign_in(&authorization, &login, false).await;
    let consent = f.come_back(&mut session, &callback).await;
    approve(&f, &mut session, consent).await;
    let subject = UpstreamSubject::new(&f.idp.issuer, &login).unwrap();
    let via_second = f
        .app
        .store
        .federation()
        .get_federation_link(&second, &subject)
        .await;
    let user = via_second
        .unwrap()
        .expect("linked through the IdP chosen")
        .user_id;
    let user = f
        .app
        .store
        .principals()
        .get_user(&user)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        user.company_id,
        Some(contractors.id),
        "a user of that IdP's company"
    );
}

/// The authorize page's sign-in form, posted with a login and password.
async fn password_sign_in(
    f: &Federated,
    session: &mut Session<'_>,
    login: &str,
    password: &str,
) -> reqwest::Response {
    let page = session
        .open(&crate::authorize::flow::query(&f.client, &[]))
        .await;
    let html = page.text().await.unwrap();
    let token = csrf(&html);
    let form = [
        ("csrf_token", token.as_str()),
        ("login", login),
        ("password", password),
    ];
    session.post(&form).await
}

async fn a_company_that_requires_its_idp_sends_a_right_password_there(f: Federated) {
    let mut company = f.company.clone();
    company.sso_policy = token_domain::SsoPolicy::Required;
    f.app
        .store
        .principals()
        .put_company(&company)
        .await
        .unwrap();
    let in_company = |new: &mut token_core::admin::NewUser| new.company_id = Some(f.company.id);
    f.app
        .create_user_with("lee", "lee's own password", in_company)
        .await;
    let keeper = f
        .app
        .create_user_with("keeper", "break glass", in_company)
        .await;
    let mut keeper = keeper;
    keeper.local_sign_in = true;
    f.app.store.principals().put_user(&keeper).await.unwrap();

    // A wrong password is refused as for anyone: nothing tells the policy.
    let mut session = Session::new(&f.app);
    let wrong = password_sign_in(&f, &mut session, "lee", "not it").await;
    assert_eq!(wrong.status(), StatusCode::OK);
    assert!(wrong.text().await.unwrap().contains("is not correct"));
    // The right one starts no session here: the browser goes to the company's IdP.
    let mut session = Session::new(&f.app);
    let right = password_sign_in(&f, &mut session, "lee", "lee's own password").await;
    assert!(see_other(&right).starts_with(&f.idp.issuer));
    assert!(session.sso_cookie.is_none());
    // A break-glass user signs in with the password.
    let mut session = Session::new(&f.app);
    let kept = password_sign_in(&f, &mut session, "keeper", "break glass").await;
    assert_eq!(kept.status(), StatusCode::OK);
    assert!(kept.text().await.unwrap().contains("would like to"));
    assert!(session.sso_cookie.is_some());
}

async fn idp_hint_goes_straight_to_the_idp(f: Federated) {
    let hint = f.idp_id.to_string();
    let mut session = Session::new(&f.app);
    let query = crate::authorize::flow::query(&f.client, &[("idp_hint", hint.as_str())]);
    let leaving = session.open(&query).await;
    let authorization = see_other(&leaving);
    assert!(authorization.starts_with(&f.idp.issuer), "{authorization}");
    assert!(
        session.cookie.is_some(),
        "the pending request waits in the cookie"
    );
    let login = format!("max@{DOMAIN}");
    let callback = f.idp.sign_in(&authorization, &login, false).await;
    let consent = f.come_back(&mut session, &callback).await;
    approve(&f, &mut session, consent).await;

    let unknown = uuid::Uuid::new_v4().to_string();
    let query = crate::authorize::flow::query(&f.client, &[("idp_hint", unknown.as_str())]);
    let page = Session::new(&f.app).open(&query).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("is not known here"));
}

async fn a_company_that_requires_two_factors_counts_the_idps_only_when_it_said_mfa(f: Federated) {
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
    // The IdP reported one factor: the user sets up a second one here before anything else.
    let mut session = Session::new(&f.app);
    let one = page(f.sign_in(&mut session, &format!("oli@{DOMAIN}")).await).await;
    assert!(one.contains("Set up an authenticator app"), "{one}");
    assert!(
        session.sso_cookie.is_none(),
        "no session before the second factor"
    );
    // The IdP reported `mfa`: two factors, the consent page at once.
    let mut session = Session::new(&f.app);
    let two = page(f.sign_in(&mut session, &format!("pam.mfa@{DOMAIN}")).await).await;
    assert!(two.contains("would like to"), "{two}");
    let started = session.sso_cookie.is_some();
    assert!(started, "a session with both factors");
    // An IdP trusted to have asked for two: the consent page at once too.
    super::fixture::update_idp(&f.app, &f.idp_id, |idp| idp.trust_mfa = true).await;
    let mut session = Session::new(&f.app);
    let trusted = page(f.sign_in(&mut session, &format!("quinn@{DOMAIN}")).await).await;
    assert!(trusted.contains("would like to"), "{trusted}");
}

async fn an_external_id_links_before_any_email(f: Federated) {
    super::fixture::update_idp(&f.app, &f.idp_id, |idp| {
        idp.link_by = token_domain::LinkBy::None;
        idp.jit = false;
    })
    .await;
    // The IdP's subject is the login typed there; the directory knows the user by it.
    let subject = format!("uma@{DOMAIN}");
    let uma = f
        .app
        .create_user_with("uma", "uma's own password", |new| {
            new.company_id = Some(f.company.id);
        })
        .await;
    let set = f
        .app
        .store
        .principals()
        .set_user_external_id(&uma.id, Some(&subject));
    assert!(matches!(
        set.await.unwrap(),
        token_store::ExternalIdUpdate::Updated
    ));
    assert_eq!(sign_in_and_link(&f, &subject).await, uma.id);
}

async fn a_changed_upstream_email_never_moves_a_link(f: Federated) {
    let sub = format!("vic@{DOMAIN}");
    let vic = sign_in_and_link(&f, &sub).await;
    // The company's other user holds the address the IdP reports from now on.
    let moved_to = format!("wes@{DOMAIN}");
    let wes = f
        .app
        .create_user_with("wes", "wes's own password", |new| {
            new.company_id = Some(f.company.id);
            new.email = Some(moved_to.clone());
        })
        .await;
    f.idp.set_email(&sub, &moved_to).await;
    let again = sign_in_and_link(&f, &sub).await;
    assert_eq!(again, vic, "the link decides");
    assert_ne!(again, wes.id);
}

crate::on_both_stores!(using crate::federation::fixture::federated;
    a_login_of_the_companys_domain_signs_in_at_its_idp_just_in_time,
    the_password_step_follows_any_other_login_alike,
    linking_by_email_reaches_the_companys_user_never_another_companys,
    a_link_decides_whatever_the_email_says_later,
    several_idps_for_a_domain_are_a_button_each,
    an_external_id_links_before_any_email,
    a_changed_upstream_email_never_moves_a_link,
    a_company_that_requires_its_idp_sends_a_right_password_there,
    idp_hint_goes_straight_to_the_idp,
    a_company_that_requires_two_factors_counts_the_idps_only_when_it_said_mfa,
);
