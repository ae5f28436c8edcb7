//! Budgets of the OpenID Connect endpoints, warm: userinfo and RP-initiated logout.

use super::counted::*;
use crate::support::app::json_of;
use reqwest::StatusCode;
use serde_json::Value;
use uuid::Uuid;

/// One transaction: the family and the connection marked revoked (two updates) and three audit
/// events (5 items under 1 KB at 2 each).
const LOGOUT_UNITS: f64 = 10.0;

/// A user with a family on an app that may sign users in: the password grant with `openid`.
async fn signed_in(c: &Counted) -> (crate::support::app::TestClient, Value) {
    let client = c.app.create_client("read profile").await;
    let login = format!("user-{}@example.com", Uuid::new_v4().simple());
    c.app.create_user(&login, PASSWORD).await;
    let (status, tokens) = c
        .app
        .password_grant(&client, &login, PASSWORD, &[("scope", "openid profile")])
        .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    (client, tokens)
}

/// Goal ≤ 2: the bearer check's two reads (the access token's `jti`, its family's revocation);
/// the user comes from the read cache once warm.
pub async fn userinfo(c: Counted) {
    let (_, tokens) = signed_in(&c).await;
    let access = tokens["access_token"].as_str().unwrap();
    let call = || async {
        let request = c
            .app
            .http
            .get(c.app.url("/oauth2/v0/userinfo"))
            .bearer_auth(access);
        let (status, claims) = json_of(request.send().await.unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{claims}");
    };
    call().await;
    let (_, calls) = c.calls_of("userinfo", call()).await;
    assert_within(&calls, 2, "userinfo");
    assert_eq!(calls.count("GetItem"), calls.total(), "reads only");
    assert_write_units(&calls, 0.0, "userinfo");
}

/// Goal ≤ 3 for a user with one family: the connection's families (Query), their revocation
/// (one write per family), nothing for the hint (verified with the key ring alone).
pub async fn logout(c: Counted) {
    let (_, tokens) = signed_in(&c).await;
    let hint = tokens["id_token"].as_str().unwrap();
    let request = c
        .app
        .http
        .get(c.app.url("/oauth2/v0/logout"))
        .query(&[("id_token_hint", hint)]);
    let (answer, calls) = c.calls_of("logout", request.send()).await;
    assert_eq!(answer.unwrap().status(), StatusCode::OK);
    assert_within(&calls, 3, "logout");
    assert_eq!(calls.count("Query"), 1, "the connection's families");
    assert_write_units(&calls, LOGOUT_UNITS, "logout");
}
