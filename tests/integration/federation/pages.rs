//! The other pages' sign-in through the company's IdP (device, account), and signing out of a
//! session an IdP started: here first, then at the IdP, then back to the client.

use reqwest::StatusCode;
use token_domain::clock::Clock;
use token_domain::Login;

use super::fixture::{see_other, Federated, DOMAIN};
use super::oidc::approve;
use crate::authorize::flow::{csrf, Session};

async fn logout_ends_the_session_here_then_at_the_idp_and_returns_to_the_client(f: Federated) {
    let returns_to = "https://app.example.com/signed-out";
    let mut client = f
        .app
        .store
        .clients()
        .get_client(&token_domain::ClientId::parse(&f.client.id).unwrap())
        .await
        .unwrap()
        .unwrap();
    client.post_logout_redirect_uris = vec![returns_to.to_owned()];
    f.app.store.clients().put_client(&client).await.unwrap();
    let login = format!("nia@{DOMAIN}");
    let mut session = Session::new(&f.app);
    let leaving = f.leave_for_idp(&mut session, &login).await;
    let mut at_idp = f.idp.browser();
    let callback = at_idp.sign_in(&see_other(&leaving), &login, false).await;
    let consent = f.come_back(&mut session, &callback).await;
    let tokens = approve(&f, &mut session, consent).await;
    let id_token = tokens["id_token"].as_str().unwrap();

    // RP-initiated logout: the session here ends, and the browser goes to the IdP's own.
    let cookie = session.sso_cookie.clone().expect("signed in");
    let logout = f
        .app
        .http
        .get(f.app.url("/oauth2/v0/logout"))
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", returns_to),
            ("state", "bye"),
        ])
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), StatusCode::FOUND);
    let to_idp = logout.headers()[reqwest::header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    let metadata = f.idp.metadata().await;
    let end_session = metadata["end_session_endpoint"].as_str().unwrap();
    assert!(to_idp.starts_with(end_session), "{to_idp}");
    let asked: std::collections::HashMap<_, _> = url::Url::parse(&to_idp)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(
        asked["post_logout_redirect_uri"],
        f.app.url("/federation/v0/oidc/logged-out")
    );
    assert!(
        asked["id_token_hint"].starts_with("eyJ"),
        "the IdP's own ID token"
    );
    assert_ne!(asked["id_token_hint"], id_token);
    let user = f
        .app
        .store
        .principals()
        .get_user_by_login(&Login::parse(&login).unwrap())
        .await
        .unwrap()
        .unwrap();
    let live = f
        .app
        .store
        .sessions()
        .list_sessions(&user.id, f.app.clock.now())
        .await;
    assert!(live.unwrap().is_empty(), "the session here ended first");

    // The IdP signs the browser out and sends it back; we send it on to the client.
    let back = at_idp.sign_out(&to_idp).await;
    assert!(
        back.starts_with(&f.app.url("/federation/v0/oidc/logged-out")),
        "{back}"
    );
    let last = f.app.http.get(&back).send().await.unwrap();
    assert_eq!(last.status(), StatusCode::FOUND);
    let landed = last.headers()[reqwest::header::LOCATION].to_str().unwrap();
    assert_eq!(landed, format!("{returns_to}?state=bye"));
    // A state we never sealed sends nobody anywhere: the signed-out page.
    let forged = f
        .app
        .http
        .get(
            f.app
                .url("/federation/v0/oidc/logged-out?state=https%3A%2F%2Fevil.example"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::OK);
}

/// The device page's sign-in goes to the IdP too, and comes back to the device's consent.
async fn the_device_page_signs_in_at_the_idp_and_approves_the_device(f: Federated) {
    use crate::device::page::{device_client, field, Page};
    let device = device_client(&f.app).await;
    let body = crate::device::codes(&f.app, &device, "openid read").await;
    let user_code = body["user_code"].as_str().unwrap();
    let mut page = Page::new(&f.app);
    let (status, sign_in) = page.enter(user_code).await;
    assert_eq!(status, StatusCode::OK, "{sign_in}");
    let login = format!("ria@{DOMAIN}");
    let leaving = page
        .post(&[
            ("csrf_token", &csrf(&sign_in)),
            ("action", "sign_in"),
            ("user_code", &field(&sign_in, "user_code")),
            ("login", &login),
            ("password", ""),
        ])
        .await;
    let authorization = see_other(&leaving);
    assert!(authorization.starts_with(&f.idp.issuer), "{authorization}");
    let callback = f.idp.sign_in(&authorization, &login, false).await;
    let answer = f.app.http.get(&callback).send().await.unwrap();
    let resume = see_other(&answer);
    let query = resume
        .strip_prefix(&f.app.url("/oauth2/v0/device"))
        .expect("back to the device page");
    assert!(query.contains("user_code="), "{query}");
    let consent = page.open(query).await;
    assert_eq!(consent.status(), StatusCode::OK);
    let html = consent.text().await.unwrap();
    assert!(html.contains("Allow access on your device?"), "{html}");
    let answer = page
        .post(&[
            ("csrf_token", &csrf(&html)),
            ("action", "approve"),
            ("user_code", &field(&html, "user_code")),
        ])
        .await;
    assert!(answer
        .text()
        .await
        .unwrap()
        .contains("Return to your device"));
    let (status, tokens) =
        crate::device::poll(&f.app, &device, body["device_code"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
}

/// The account page's sign-in goes to the IdP too, and comes back signed in to the overview.
async fn the_account_page_signs_in_at_the_idp(f: Federated) {
    let mut cookies = Vec::<String>::new();
    let keep = |response: &reqwest::Response, cookies: &mut Vec<String>| {
        for set in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            let name = pair.split('=').next().unwrap().to_owned();
            cookies.retain(|c| !c.starts_with(&format!("{name}=")));
            cookies.push(pair);
        }
    };
    let account = f.app.url("/oauth2/v0/account");
    let page = f.app.http.get(&account).send().await.unwrap();
    keep(&page, &mut cookies);
    let html = page.text().await.unwrap();
    let login = format!("sol@{DOMAIN}");
    let leaving = f
        .app
        .http
        .post(&account)
        .header(reqwest::header::COOKIE, cookies.join("; "))
        .form(&[
            ("csrf_token", csrf(&html).as_str()),
            ("action", "sign_in"),
            ("login", &login),
        ])
        .send()
        .await
        .unwrap();
    let mut at_idp = f.idp.browser();
    let callback = at_idp.sign_in(&see_other(&leaving), &login, false).await;
    let answer = f.app.http.get(&callback).send().await.unwrap();
    let resume = see_other(&answer);
    assert!(
        resume.starts_with(&format!("{account}?upstream=")),
        "{resume}"
    );
    let back = f
        .app
        .http
        .get(&resume)
        .header(reqwest::header::COOKIE, cookies.join("; "))
        .send()
        .await
        .unwrap();
    assert_eq!(
        see_other(&back),
        "/oauth2/v0/account",
        "signed in: the overview"
    );
    keep(&back, &mut cookies);
    let overview = f
        .app
        .http
        .get(&account)
        .header(reqwest::header::COOKIE, cookies.join("; "))
        .send()
        .await
        .unwrap();
    let html = overview.text().await.unwrap();
    assert!(
        html.contains("Your account") && html.contains("via Sign in with Acme"),
        "{html}"
    );

    // Signing out everywhere on the account page signs out at the IdP too, then the
    // signed-out page.
    let sign_out = f
        .app
        .http
        .post(&account)
        .header(reqwest::header::COOKIE, cookies.join("; "))
        .form(&[
            ("csrf_token", csrf(&html).as_str()),
            ("action", "sign_out_everywhere"),
        ])
        .send()
        .await
        .unwrap();
    let to_idp = see_other(&sign_out);
    let metadata = f.idp.metadata().await;
    assert!(
        to_idp.starts_with(metadata["end_session_endpoint"].as_str().unwrap()),
        "{to_idp}"
    );
    let ended = sign_out
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .any(|set| set.to_str().unwrap().starts_with("__Host-session=;"));
    assert!(ended, "the session cookie is removed");
    let back = at_idp.sign_out(&to_idp).await;
    let last = f.app.http.get(&back).send().await.unwrap();
    assert_eq!(last.status(), StatusCode::OK);
    assert!(last.text().await.unwrap().contains("You are signed out"));
}

crate::on_both_stores!(using crate::federation::fixture::federated;
    logout_ends_the_session_here_then_at_the_idp_and_returns_to_the_client,
    the_device_page_signs_in_at_the_idp_and_approves_the_device,
    the_account_page_signs_in_at_the_idp,
);
