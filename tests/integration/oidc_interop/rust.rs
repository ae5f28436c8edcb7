//! The Rust relying parties: the `openidconnect` crate (discovery with the logout metadata, the
//! code flow with PKCE, ID token and `at_hash` verification, userinfo, refresh, RP-initiated
//! logout) and the `oauth2` crate (the code flow with PKCE, introspection; its revocation
//! request insists on https), each through the real pages with [`UserAgent`].

use std::collections::HashMap;

use crate::support::app::TestApp;
use crate::support::relying_party::{RelyingParty, LOGIN, PASSWORD};
use crate::support::user_agent::{Arrival, UserAgent};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, IntrospectionUrl, RevocationUrl, StandardRevocableToken, TokenIntrospectionResponse,
    TokenUrl,
};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient};
use openidconnect::{
    AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl,
    LogoutRequest, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PostLogoutRedirectUrl,
    ProviderMetadataWithLogout, RedirectUrl, Scope, TokenResponse,
};
use serde_json::Value;
use url::Url;

crate::on_both_stores!(
    openidconnect_crate_signs_in_reads_userinfo_refreshes_and_logs_out,
    oauth2_crate_signs_in_introspects_and_revokes,
);

/// Walks the pages for `url`; the callback's query once the browser is sent back.
async fn sign_in(rp: &RelyingParty, url: Url) -> HashMap<String, String> {
    let mut agent = UserAgent::new(&rp.redirect_uri);
    match agent.navigate(url, LOGIN, PASSWORD, "approve").await {
        Arrival::Redirect { location, pages } => {
            assert_eq!(pages, ["sign-in", "consent"]);
            assert!(
                location.as_str().starts_with(&rp.redirect_uri),
                "{location}"
            );
            location.query_pairs().into_owned().collect()
        }
        Arrival::Page { status, html } => panic!("stopped on a {status} page: {html}"),
    }
}

async fn openidconnect_crate_signs_in_reads_userinfo_refreshes_and_logs_out(app: TestApp) {
    let rp = RelyingParty::register(&app).await;
    let http = &app.http;
    let metadata = ProviderMetadataWithLogout::discover_async(
        IssuerUrl::new(app.address.clone()).unwrap(),
        http,
    )
    .await
    .expect("discovery");
    let end_session = metadata.additional_metadata().end_session_endpoint.clone();
    let client = CoreClient::from_provider_metadata(
        metadata,
        ClientId::new(rp.client.id.clone()),
        Some(ClientSecret::new(rp.client.secret.clone())),
    )
    .set_redirect_uri(RedirectUrl::new(rp.redirect_uri.clone()).unwrap());

    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state, nonce) = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("profile".into()))
        .add_scope(Scope::new("email".into()))
        .set_pkce_challenge(challenge)
        .url();
    let callback = sign_in(&rp, url).await;
    assert_eq!(&callback["state"], state.secret());
    assert_eq!(callback["iss"], app.address, "RFC 9207");

    let tokens = client
        .exchange_code(AuthorizationCode::new(callback["code"].clone()))
        .unwrap()
        .set_pkce_verifier(verifier)
        .request_async(http)
        .await
        .expect("code exchange");
    let id_token = tokens.id_token().expect("an ID token");
    let verifier = client.id_token_verifier();
    let claims = id_token
        .claims(&verifier, &nonce)
        .expect("a valid ID token");
    assert_eq!(claims.subject().as_str(), rp.user.id.to_string());
    let expected_hash = AccessTokenHash::from_token(
        tokens.access_token(),
        id_token.signing_alg().unwrap(),
        id_token.signing_key(&verifier).unwrap(),
    )
    .unwrap();
    assert_eq!(claims.access_token_hash(), Some(&expected_hash));
    assert!(claims.auth_time().is_some(), "the sign-in's time");
    let scopes: Vec<&str> = tokens
        .scopes()
        .unwrap()
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert!(scopes.contains(&"openid"), "{scopes:?}");

    let info: openidconnect::core::CoreUserInfoClaims = client
        .user_info(
            tokens.access_token().clone(),
            Some(claims.subject().clone()),
        )
        .unwrap()
        .request_async(http)
        .await
        .expect("userinfo");
    assert_eq!(info.email().map(|e| e.as_str()), Some(LOGIN));
    assert_eq!(info.email_verified(), Some(true));
    assert_eq!(info.preferred_username().map(|u| u.as_str()), Some(LOGIN));

    let refreshed = client
        .exchange_refresh_token(tokens.refresh_token().unwrap())
        .unwrap()
        .request_async(http)
        .await
        .expect("refresh");
    let refreshed_claims = refreshed
        .id_token()
        .expect("an ID token on refresh")
        .claims(&verifier, |_: Option<&Nonce>| Ok(()))
        .expect("a valid refreshed ID token");
    assert_eq!(refreshed_claims.subject(), claims.subject());

    let logout = LogoutRequest::from(end_session.expect("an end_session_endpoint"))
        .set_id_token_hint(id_token)
        .set_post_logout_redirect_uri(
            PostLogoutRedirectUrl::new(rp.post_logout_redirect_uri.clone()).unwrap(),
        )
        .set_state(CsrfToken::new("signed-out".into()))
        .http_get_url();
    let answer = http.get(logout).send().await.unwrap();
    assert_eq!(answer.status(), 302);
    let location = answer.headers()["location"].to_str().unwrap();
    assert_eq!(
        location,
        format!("{}?state=signed-out", rp.post_logout_redirect_uri)
    );
    let after = client
        .exchange_refresh_token(refreshed.refresh_token().unwrap())
        .unwrap()
        .request_async(http)
        .await;
    assert!(after.is_err(), "the family is revoked by the logout");
}

async fn oauth2_crate_signs_in_introspects_and_revokes(app: TestApp) {
    let rp = RelyingParty::register(&app).await;
    let http = &app.http;
    let metadata: Value = http
        .get(app.url("/.well-known/oauth-authorization-server"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let endpoint = |name: &str| metadata[name].as_str().unwrap().to_owned();
    let client = BasicClient::new(oauth2::ClientId::new(rp.client.id.clone()))
        .set_client_secret(oauth2::ClientSecret::new(rp.client.secret.clone()))
        .set_auth_uri(AuthUrl::new(endpoint("authorization_endpoint")).unwrap())
        .set_token_uri(TokenUrl::new(endpoint("token_endpoint")).unwrap())
        .set_introspection_url(IntrospectionUrl::new(endpoint("introspection_endpoint")).unwrap())
        .set_revocation_url(RevocationUrl::new(endpoint("revocation_endpoint")).unwrap())
        .set_redirect_uri(oauth2::RedirectUrl::new(rp.redirect_uri.clone()).unwrap());

    let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(oauth2::CsrfToken::new_random)
        .add_scope(oauth2::Scope::new("openid".into()))
        .add_scope(oauth2::Scope::new("payroll".into()))
        .set_pkce_challenge(challenge)
        .url();
    let callback = sign_in(&rp, url).await;
    assert_eq!(&callback["state"], state.secret());
    let tokens = client
        .exchange_code(oauth2::AuthorizationCode::new(callback["code"].clone()))
        .set_pkce_verifier(verifier)
        .request_async(http)
        .await
        .expect("code exchange");

    let access = client
        .introspect(tokens.access_token())
        .request_async(http)
        .await
        .expect("introspection");
    assert!(access.active());
    assert_eq!(access.sub(), Some(rp.user.id.to_string().as_str()));
    let refresh_token = tokens.refresh_token().unwrap().clone();
    // The crate revokes over https only (RFC 7009 §2 requires TLS), and the test server speaks
    // plain HTTP on loopback: the library's refusal is checked, and the same RFC 7009 request
    // is sent by hand.
    let revocation =
        client.revoke_token(StandardRevocableToken::RefreshToken(refresh_token.clone()));
    assert!(revocation.is_err(), "the oauth2 crate insists on https");
    let revoked = http
        .post(endpoint("revocation_endpoint"))
        .basic_auth(&rp.client.id, Some(&rp.client.secret))
        .form(&[
            ("token", refresh_token.secret().as_str()),
            ("token_type_hint", "refresh_token"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let access = client
        .introspect(tokens.access_token())
        .request_async(http)
        .await
        .expect("introspection");
    assert!(!access.active(), "the family's access token is revoked too");
    let refused = client
        .exchange_refresh_token(&refresh_token)
        .request_async(http)
        .await;
    assert!(refused.is_err(), "a revoked family does not refresh");
}
