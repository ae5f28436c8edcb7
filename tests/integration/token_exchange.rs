//! Token exchange (RFC 8693) on both stores: a client exchanges a user's
//! access token issued to itself, or one meant for one of its resources, for a token for
//! another resource, optionally with an actor (`act`, nested); the answer has no refresh token
//! and lives no longer than the subject; every refusal (164, 165, 166, 54, 160, 60); revoking
//! the subject's family makes the exchanged token inactive. `dpop`: bound subject and actor
//! tokens need a proof by their key.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::audit::{client_subject, events_of, json as audit_json};
use crate::resources::{claims, introspect, API, FILES};
use crate::support::app::{TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use token_core::admin::NewClient;
use token_domain::{GrantType, Resource, Scopes};

mod dpop;
mod revocation;
mod widening;

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS: &str = "urn:ietf:params:oauth:token-type:access_token";
const LOGIN: &str = "exchange@example.com";
const PASSWORD: &str = "token exchange password 1";

crate::on_both_stores!(
    a_client_exchanges_its_own_token_for_another_resource,
    a_resource_server_exchanges_a_token_meant_for_it,
    an_actor_token_adds_a_nested_act,
    refusals_are_catalogued,
    revoking_the_subject_family_revokes_the_exchanged_token,
    an_id_token_is_exchanged_for_an_openid_token,
    openid_client_exchanges_a_token_with_and_without_an_actor,
);

async fn exchange(
    app: &TestApp,
    client: &TestClient,
    subject: &str,
    extra: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut form = vec![
        ("grant_type", GRANT),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("subject_token", subject),
        ("subject_token_type", ACCESS),
    ];
    form.extend_from_slice(extra);
    app.token(&form).await
}

/// The status of `GET /oauth2/v0/userinfo` with `token`.
async fn userinfo_status(app: &TestApp, token: &str) -> StatusCode {
    let request = app
        .http
        .get(app.url("/oauth2/v0/userinfo"))
        .bearer_auth(token);
    request.send().await.unwrap().status()
}

async fn client_with(app: &TestApp, name: &str, resources: &[&str]) -> TestClient {
    app.create_client_with(NewClient {
        resources: resources
            .iter()
            .map(|r| Resource::parse(r).unwrap())
            .collect(),
        ..NewClient::named(name, Scopes::parse("read write").unwrap())
    })
    .await
}

async fn user_token(app: &TestApp, client: &TestClient, extra: &[(&str, &str)]) -> Value {
    let (status, body) = app.password_grant(client, LOGIN, PASSWORD, extra).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn a_client_exchanges_its_own_token_for_another_resource(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    // Each resource the exchange names is one the family was granted (`widening` has the rest).
    let client = client_with(&app, "agent", &[]).await;
    let tokens = user_token(&app, &client, &[("resource", API), ("resource", FILES)]).await;
    let subject = tokens["access_token"].as_str().unwrap();
    let (status, body) = exchange(
        &app,
        &client,
        subject,
        &[
            ("resource", API),
            ("scope", "read"),
            ("requested_token_type", ACCESS),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["issued_token_type"], ACCESS, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["scope"], "read");
    assert!(body.get("refresh_token").is_none(), "{body}");
    assert!(body.get("id_token").is_none(), "{body}");
    assert!(body["expires_in"].as_i64().unwrap() <= 3600);
    let exchanged = body["access_token"].as_str().unwrap();
    let claims = claims(&app, exchanged).await;
    assert_eq!(claims["sub"], user.id.to_string());
    assert_eq!(claims["client_id"], client.id);
    assert_eq!(claims["aud"], API);
    assert!(claims.get("act").is_none(), "{claims}");
    let active = introspect(&app, &client, exchanged).await;
    assert_eq!(active["active"], true);
    assert_eq!(active["aud"], API);

    // `audience` names a resource as `resource` does.
    let (status, body) = exchange(&app, &client, subject, &[("audience", FILES)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(claims_aud(&app, &body).await, FILES);

    // `audience` may repeat (RFC 8693 §2.1): a token for each, as repeated `resource`s give;
    // one not allowed (plain http off loopback) refuses the exchange.
    let (status, body) = exchange(
        &app,
        &client,
        subject,
        &[("audience", API), ("audience", FILES)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(claims_aud(&app, &body).await, json!([API, FILES]));
    let (status, body) = exchange(
        &app,
        &client,
        subject,
        &[("audience", API), ("audience", "http://elsewhere.example")],
    )
    .await;
    assert_token_error(&(status, body), 400, "invalid_target", 160);

    // Never longer than the subject token; without a target, for the subject's audience.
    app.clock.advance(3000);
    let (status, body) = exchange(&app, &client, subject, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["expires_in"].as_i64().unwrap() <= 600, "{body}");
    assert_eq!(claims_aud(&app, &body).await, json!([API, FILES]));
}

async fn claims_aud(app: &TestApp, body: &Value) -> Value {
    claims(app, body["access_token"].as_str().unwrap()).await["aud"].clone()
}

async fn a_resource_server_exchanges_a_token_meant_for_it(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    let api = client_with(&app, "api", &[API]).await;
    let for_api = user_token(&app, &agent, &[("resource", API)]).await;
    let subject = for_api["access_token"].as_str().unwrap();
    let (status, body) = exchange(&app, &api, subject, &[("resource", API)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let claims = claims(&app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["client_id"], api.id);
    // A token of the agent meant for this deployment is not the API's to exchange.
    let plain = user_token(&app, &agent, &[]).await;
    let refused = exchange(&app, &api, plain["access_token"].as_str().unwrap(), &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    // Nor is one for another resource.
    let for_files = user_token(&app, &agent, &[("resource", FILES)]).await;
    let refused = exchange(&app, &api, for_files["access_token"].as_str().unwrap(), &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
}

async fn an_actor_token_adds_a_nested_act(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    let first_actor = client_with(&app, "first actor", &[]).await;
    let second_actor = client_with(&app, "second actor", &[]).await;
    let subject = user_token(&app, &agent, &[]).await;
    let actor = app.app_token(&first_actor).await;
    let (status, body) = exchange(
        &app,
        &agent,
        subject["access_token"].as_str().unwrap(),
        &[("actor_token", &actor), ("actor_token_type", ACCESS)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let once = body["access_token"].as_str().unwrap().to_owned();
    assert_eq!(
        claims(&app, &once).await["act"],
        json!({"sub": first_actor.id, "client_id": first_actor.id})
    );
    let actor = app.app_token(&second_actor).await;
    let (status, body) = exchange(
        &app,
        &agent,
        &once,
        &[("actor_token", &actor), ("actor_token_type", ACCESS)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        claims(&app, body["access_token"].as_str().unwrap()).await["act"],
        json!({
            "sub": second_actor.id,
            "client_id": second_actor.id,
            "act": {"sub": first_actor.id, "client_id": first_actor.id},
        })
    );
    // Each exchange is audited under the exchanging client: subject, actor, client.
    let events = events_of(&app, client_subject(&agent.id)).await;
    let exchanged: Vec<Value> = events
        .iter()
        .filter(|event| event.kind.name() == "token.exchanged")
        .map(audit_json)
        .collect();
    assert_eq!(exchanged.len(), 2, "{exchanged:?}");
    let newest = &exchanged[0];
    assert_eq!(newest["client_id"], agent.id, "{newest}");
    assert_eq!(newest["subject_client_id"], agent.id, "{newest}");
    assert_eq!(newest["actor_client_id"], second_actor.id, "{newest}");
    assert_eq!(newest["actor_sub"], second_actor.id, "{newest}");
    assert!(newest["jti"].is_string(), "{newest}");
}

async fn refusals_are_catalogued(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = client_with(&app, "agent", &[]).await;
    let tokens = user_token(&app, &client, &[]).await;
    let subject = tokens["access_token"].as_str().unwrap();
    let type_refused = |answer: &(StatusCode, Value)| {
        assert_token_error(answer, 400, "invalid_request", 164);
    };
    let (status, body) = app
        .token(&[
            ("grant_type", GRANT),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("subject_token", subject),
        ])
        .await;
    type_refused(&(status, body));
    let form = |token_type: &'static str| {
        vec![
            ("grant_type", GRANT),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("subject_token", subject),
            ("subject_token_type", token_type),
        ]
    };
    type_refused(
        &app.token(&form("urn:ietf:params:oauth:token-type:saml2"))
            .await,
    );
    type_refused(
        &exchange(
            &app,
            &client,
            subject,
            &[("requested_token_type", "urn:x:refresh")],
        )
        .await,
    );
    type_refused(&exchange(&app, &client, subject, &[("actor_token", subject)]).await);
    for garbage in ["garbage", tokens["refresh_token"].as_str().unwrap()] {
        let refused = exchange(&app, &client, garbage, &[]).await;
        assert_token_error(&refused, 400, "invalid_grant", 165);
    }
    let other = client_with(&app, "other", &[]).await;
    let refused = exchange(&app, &other, subject, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    let refused = exchange(
        &app,
        &client,
        subject,
        &[("actor_token", "garbage"), ("actor_token_type", ACCESS)],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_grant", 166);
    let refused = exchange(&app, &client, subject, &[("scope", "read admin")]).await;
    assert_token_error(&refused, 400, "invalid_scope", 54);
    let refused = exchange(
        &app,
        &client,
        subject,
        &[("resource", "https://x.example.com#f")],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let refused = exchange(&app, &client, subject, &[("audience", "not a uri")]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    // A client not allowed the grant: 60, before anything of the request is looked at.
    let mut new = NewClient::named("no exchange", Scopes::parse("read").unwrap());
    new.grants = [GrantType::ClientCredentials].into_iter().collect();
    let limited = app.create_client_with(new).await;
    let refused = exchange(&app, &limited, "garbage", &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 60);
}

async fn revoking_the_subject_family_revokes_the_exchanged_token(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = client_with(&app, "agent", &[]).await;
    let tokens = user_token(&app, &client, &[]).await;
    let (status, body) =
        exchange(&app, &client, tokens["access_token"].as_str().unwrap(), &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let exchanged = body["access_token"].as_str().unwrap();
    assert_eq!(introspect(&app, &client, exchanged).await["active"], true);
    let revoked = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
            ],
        )
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_eq!(
        introspect(&app, &client, exchanged).await,
        json!({"active": false})
    );
    // And a revoked subject cannot be exchanged again.
    let refused = exchange(&app, &client, tokens["access_token"].as_str().unwrap(), &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
}

async fn exchange_id_token(
    app: &TestApp,
    client: &TestClient,
    subject: &str,
    extra: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut form = vec![
        ("grant_type", GRANT),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
        ("subject_token", subject),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
    ];
    form.extend_from_slice(extra);
    app.token(&form).await
}

async fn an_id_token_is_exchanged_for_an_openid_token(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    // An ID token's family grants no resource: the exchange names one of the client's own.
    let client = client_with(&app, "agent", &[API]).await;
    let tokens = user_token(&app, &client, &[]).await;
    let id_token = tokens["id_token"].as_str().unwrap();
    let (status, body) = exchange_id_token(&app, &client, id_token, &[("resource", API)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["scope"], "openid", "{body}");
    assert_eq!(body["issued_token_type"], ACCESS);
    assert!(body.get("refresh_token").is_none() && body.get("id_token").is_none());
    let claims = claims(&app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(claims["sub"], user.id.to_string());
    assert_eq!(claims["aud"], API);
    // At most what an ID token speaks for.
    let refused = exchange_id_token(&app, &client, id_token, &[("scope", "read")]).await;
    assert_token_error(&refused, 400, "invalid_scope", 54);
    // Another client's ID token, an access token, garbage: 165.
    let other = client_with(&app, "other", &[]).await;
    let refused = exchange_id_token(&app, &other, id_token, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    let access = tokens["access_token"].as_str().unwrap();
    let refused = exchange_id_token(&app, &client, access, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    // Expired.
    app.clock.advance(3601);
    let refused = exchange_id_token(&app, &client, id_token, &[]).await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
}

/// openid-client 6's `genericGrantRequest` (`tests/interop/node/exchange.mjs`), unchanged, as
/// the exchanging service: what it gets is checked against the server's own view.
async fn openid_client_exchanges_a_token_with_and_without_an_actor(app: TestApp) {
    let user = app.create_user(LOGIN, PASSWORD).await;
    let client = client_with(&app, "gateway", &[API]).await;
    crate::support::relying_party::follow_real_time(&app);
    let subject = user_token(&app, &client, &[]).await;
    let actor = app.app_token(&client).await;
    let result = crate::support::relying_party::run_node_script(
        "exchange.mjs",
        vec![
            ("ISSUER", app.address.clone()),
            ("CLIENT_ID", client.id.clone()),
            ("CLIENT_SECRET", client.secret.clone()),
            (
                "SUBJECT_TOKEN",
                subject["access_token"].as_str().unwrap().to_owned(),
            ),
            ("ACTOR_TOKEN", actor),
            ("RESOURCE", API.to_owned()),
        ],
    )
    .await;
    for case in ["exchanged", "delegated"] {
        let answer = &result[case];
        assert_eq!(answer["issued_token_type"], ACCESS, "{case}: {answer}");
        assert_eq!(answer["refresh_token"], false, "{case}: {answer}");
        let claims = claims(&app, answer["access_token"].as_str().unwrap()).await;
        assert_eq!(claims["sub"], user.id.to_string(), "{case}");
        assert_eq!(claims["aud"], API, "{case}");
    }
    let delegated = claims(&app, result["delegated"]["access_token"].as_str().unwrap()).await;
    assert_eq!(
        delegated["act"],
        json!({ "sub": client.id, "client_id": client.id }),
        "{delegated}"
    );
    let exchanged = claims(&app, result["exchanged"]["access_token"].as_str().unwrap()).await;
    assert!(exchanged.get("act").is_none(), "{exchanged}");
}
