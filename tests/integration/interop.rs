//! Interoperability: a widely used OAuth client library against our endpoint, and our access
//! tokens verified against the served JWK Set without our JWT library. Plus the promise that
//! logs never carry credentials.

use crate::support::app::{Backend, TestApp};
use crate::support::assertions::{assert_signed_by_jwks, catalogue_rows};
use crate::support::logs::captured_logs;
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthType, ClientId, ClientSecret, RefreshToken, RequestTokenError, ResourceOwnerPassword,
    ResourceOwnerUsername, Scope, TokenResponse, TokenUrl,
};
use serde_json::Value;

const PASSWORD: &str = "interop password 1";

crate::on_both_stores!(
    oauth2_crate_runs_every_grant,
    access_tokens_verify_against_the_jwk_set
);

async fn oauth2_crate_runs_every_grant(app: TestApp) {
    let client = app.create_client("read write").await;
    app.create_user("olivia", PASSWORD).await;
    let token_url = TokenUrl::new(app.url("/v0/token")).unwrap();
    for auth_type in [AuthType::BasicAuth, AuthType::RequestBody] {
        let oauth = BasicClient::new(ClientId::new(client.id.clone()))
            .set_client_secret(ClientSecret::new(client.secret.clone()))
            .set_auth_type(auth_type.clone())
            .set_token_uri(token_url.clone());

        let app_token = oauth
            .exchange_client_credentials()
            .add_scope(Scope::new("read".into()))
            .request_async(&app.http)
            .await
            .unwrap_or_else(|e| panic!("client_credentials with {auth_type:?}: {e:?}"));
        assert_eq!(app_token.expires_in().unwrap().as_secs(), 3600);
        assert!(app_token.refresh_token().is_none());

        let user_tokens = oauth
            .exchange_password(
                &ResourceOwnerUsername::new("olivia".into()),
                &ResourceOwnerPassword::new(PASSWORD.into()),
            )
            .request_async(&app.http)
            .await
            .unwrap_or_else(|e| panic!("password with {auth_type:?}: {e:?}"));
        let refresh = user_tokens
            .refresh_token()
            .expect("a refresh token")
            .clone();

        let refreshed = oauth
            .exchange_refresh_token(&refresh)
            .request_async(&app.http)
            .await
            .unwrap_or_else(|e| panic!("refresh_token with {auth_type:?}: {e:?}"));
        assert_ne!(
            refreshed.refresh_token().unwrap().secret(),
            refresh.secret(),
            "rotated"
        );

        // The library surfaces our catalogued error for the rotated token, replayed once the retry
        // window (docs/decisions.md, Refresh tokens) is over.
        app.clock.advance(app.services.policy.refresh_grace_seconds);
        let replay = oauth
            .exchange_refresh_token(&RefreshToken::new(refresh.secret().clone()))
            .request_async(&app.http)
            .await;
        // The library keeps RFC 6749's fields; the description is code 108's, the catalogue's
        // only "bad or expired refresh token".
        match replay.expect_err("a rotated token is refused") {
            RequestTokenError::ServerResponse(refusal) => {
                assert_eq!(*refusal.error(), BasicErrorResponseType::InvalidGrant);
                assert_eq!(
                    refusal.error_description().map(String::as_str),
                    Some(catalogue_rows(108)[0].1),
                    "{refusal:?}"
                );
            }
            other => panic!("not the server's refusal: {other:?}"),
        }
    }
}

async fn access_tokens_verify_against_the_jwk_set(app: TestApp) {
    let client = app.create_client("read").await;
    app.create_user("peggy", PASSWORD).await;
    let tokens = app.user_tokens(&client, "peggy", PASSWORD).await;
    let token = tokens["access_token"].as_str().unwrap();

    let jwks_response = app
        .http
        .get(app.url("/v0/token/jwks"))
        .send()
        .await
        .unwrap();
    assert_eq!(jwks_response.status(), 200);
    let jwks: Value = jwks_response.json().await.unwrap();
    let signed = assert_signed_by_jwks(token, &jwks);
    assert_eq!(signed.header["typ"], "at+jwt");
    assert_eq!(signed.header["alg"], "ES256");
    let jwk = &signed.jwk;
    assert_eq!(jwk["kty"], "EC");
    assert_eq!(jwk["crv"], "P-256");
    assert!(jwk.get("d").is_none(), "no private part");

    let claims = signed.claims;
    for claim in [
        "iss",
        "sub",
        "client_id",
        "aud",
        "scope",
        "iat",
        "exp",
        "jti",
        "principal_type",
        "geolocation",
    ] {
        assert!(claims.get(claim).is_some(), "claim {claim} in {claims}");
    }
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );
    assert_eq!(claims["iss"], app.address.as_str());
    assert_eq!(claims["sub"], tokens["id"]);
    assert_eq!(claims["client_id"], client.id.as_str());
    assert_eq!(claims["principal_type"], "user");
    // A version-7 UUID, its time the token's issue time: the store appends jtis in order.
    let jti = uuid::Uuid::parse_str(claims["jti"].as_str().unwrap()).unwrap();
    assert_eq!(jti.get_version_num(), 7, "jti {jti}");
    let (jti_seconds, _) = jti.get_timestamp().unwrap().to_unix();
    assert_eq!(jti_seconds as i64, claims["iat"].as_i64().unwrap());
}

#[tokio::test]
async fn logs_carry_request_facts_but_no_credentials() {
    let app = TestApp::spawn(Backend::Sqlite).await.unwrap();
    let client = app.create_client("read").await;
    app.create_user("quentin", PASSWORD).await;
    let tokens = app.user_tokens(&client, "quentin", PASSWORD).await;
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("refresh_token", refresh),
    ];
    let (_, refreshed) = app.token(&form).await;
    // A replay after the retry window, so the revocation path logs too.
    app.clock.advance(app.services.policy.refresh_grace_seconds);
    app.token(&form).await;

    let logs = captured_logs();
    let ours: Vec<&str> = logs.lines().filter(|l| l.contains(&client.id)).collect();
    assert!(
        ours.iter()
            .any(|l| l.contains("request completed") && l.contains("\"grant_type\":\"password\"")),
        "one line per request with the grant type: {ours:?}"
    );
    assert!(
        ours.iter()
            .any(|l| l.contains("\"code\":108") && l.contains("\"status\":400")),
        "the outcome code is logged: {ours:?}"
    );
    // Every line of the request (the reuse warning too) carries its correlation id (the audit
    // event of the client's creation was recorded outside any request); the one completion line
    // per request carries the latency.
    assert!(ours
        .iter()
        .filter(|l| !l.contains("client.created"))
        .all(|l| l.contains("correlation_id")));
    assert!(ours
        .iter()
        .filter(|l| l.contains("request completed"))
        .all(|l| l.contains("latency_ms")));
    assert!(
        ours.iter().any(|l| l.contains("family revoked")),
        "the reuse is logged: {ours:?}"
    );
    for secret in [
        PASSWORD,
        client.secret.as_str(),
        refresh,
        tokens["access_token"].as_str().unwrap(),
        refreshed["refresh_token"].as_str().unwrap(),
        refreshed["access_token"].as_str().unwrap(),
    ] {
        assert!(!logs.contains(secret), "a credential leaked into the logs");
    }
}
