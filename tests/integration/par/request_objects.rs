//! Request objects (RFC 9101) at the authorize and PAR endpoints: signed with a key of the
//! client's JWK Set (ES256, PS256, EdDSA), `iss` the client, `aud` the issuer, `exp` at most 60
//! minutes ahead, `nbf` not in the future; their claims are the parameters. Anything else is
//! `invalid_request_object`, code 177: JSON at the PAR endpoint, a redirect or a page at the
//! authorize endpoint.

use super::*;
use crate::authorize::flow::{redirect_query, Session, LOGIN, PASSWORD};
use crate::private_key_jwt::keys::{hs256, unsigned};

crate::on_both_stores!(
    each_algorithm_signs_an_object_the_authorize_endpoint_follows,
    an_object_may_be_pushed,
    bad_objects_are_refused_at_the_par_endpoint_with_177,
    bad_objects_at_the_authorize_endpoint_redirect_or_show_177,
);

fn with(mut claims: Value, name: &str, value: Value) -> Value {
    claims[name] = value;
    claims
}

fn without(mut claims: Value, name: &str) -> Value {
    claims.as_object_mut().unwrap().remove(name);
    claims
}

async fn each_algorithm_signs_an_object_the_authorize_endpoint_follows(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    for key in [
        ClientKey::es256("ec"),
        ClientKey::ps256("rsa"),
        ClientKey::eddsa("ed"),
    ] {
        let client = client_with_key(&app, &key).await;
        let request = key.sign(&object_claims(&app, &client));
        // The query's own parameters are replaced by the object's.
        let query = [
            ("client_id", client.id.as_str()),
            ("request", request.as_str()),
            ("state", "from-the-query"),
            ("response_type", "code"),
        ];
        let redirect = Session::new(&app).decide(&query, "approve").await;
        assert_eq!(
            redirect["state"], "from-the-object",
            "{}: {redirect:?}",
            key.kid
        );
        assert!(redirect.contains_key("code"), "{redirect:?}");
    }
}

async fn an_object_may_be_pushed(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let key = ClientKey::es256("pushed");
    let client = client_with_key(&app, &key).await;
    let request = key.sign(&object_claims(&app, &client));
    let request_uri = pushed(&app, &client, &[("request", request.as_str())]).await;
    let redirect = Session::new(&app)
        .decide(&by_reference(&client, &request_uri), "approve")
        .await;
    assert_eq!(redirect["state"], "from-the-object", "{redirect:?}");
    // The object's parameters are checked as the query's would be.
    let bad_scope = key.sign(&with(
        object_claims(&app, &client),
        "scope",
        json!("openid admin"),
    ));
    let answer = push(&app, &client, &[("request", bad_scope.as_str())]).await;
    assert_refused(&answer, 400, "invalid_scope", 54);
}

/// Objects by `client` (registered with `key`) that must each be refused.
fn bad_objects(app: &TestApp, client: &TestClient, key: &ClientKey) -> Vec<(&'static str, String)> {
    let claims = object_claims(app, client);
    let now = app.clock.now();
    let stranger = ClientKey::es256(&key.kid);
    vec![
        ("alg none", unsigned(&json!({"alg": "none"}), &claims)),
        ("HS256", hs256(&claims, &client.secret, &key.kid)),
        ("another key", stranger.sign(&claims)),
        (
            "aud an endpoint",
            key.sign(&with(claims.clone(), "aud", json!(app.url(PAR)))),
        ),
        (
            "aud another server",
            key.sign(&with(claims.clone(), "aud", json!("https://other.example"))),
        ),
        ("no aud", key.sign(&without(claims.clone(), "aud"))),
        (
            "iss another client",
            key.sign(&with(claims.clone(), "iss", json!(uuid::Uuid::new_v4()))),
        ),
        ("no exp", key.sign(&without(claims.clone(), "exp"))),
        (
            "expired",
            key.sign(&with(claims.clone(), "exp", json!(now - 1))),
        ),
        (
            "exp beyond 60 minutes",
            key.sign(&with(claims.clone(), "exp", json!(now + 3600 + 120))),
        ),
        (
            "nbf in the future",
            key.sign(&with(claims.clone(), "nbf", json!(now + 300))),
        ),
        (
            "client_id another",
            key.sign(&with(
                claims.clone(),
                "client_id",
                json!(uuid::Uuid::new_v4()),
            )),
        ),
        (
            "request_uri inside",
            key.sign(&with(
                claims.clone(),
                "request_uri",
                json!("urn:ietf:params:oauth:request_uri:x"),
            )),
        ),
        // Part 13: a client assertion (the same keys) is never a request object.
        (
            "typed as a client assertion",
            key.sign_typed(&claims, "client-authentication+jwt"),
        ),
        (
            "sub is the client id",
            key.sign(&with(claims.clone(), "sub", json!(client.id))),
        ),
        ("not a JWT", "not.a.jwt".to_owned()),
    ]
}

async fn bad_objects_are_refused_at_the_par_endpoint_with_177(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_key(&app, &key).await;
    // Sixty minutes ahead exactly is accepted.
    let now = app.clock.now();
    let edge = key.sign(&with(
        object_claims(&app, &client),
        "exp",
        json!(now + 3600),
    ));
    pushed(&app, &client, &[("request", edge.as_str())]).await;
    for (what, request) in bad_objects(&app, &client, &key) {
        let answer = push(&app, &client, &[("request", request.as_str())]).await;
        assert_eq!(
            answer.1["error"], "invalid_request_object",
            "{what}: {}",
            answer.1
        );
        assert_refused(&answer, 400, "invalid_request_object", 177);
    }
    // A client without keys has nothing to verify an object with.
    let plain = secret_client(&app).await;
    let request = key.sign(&object_claims(&app, &plain));
    let answer = push(&app, &plain, &[("request", request.as_str())]).await;
    assert_refused(&answer, 400, "invalid_request_object", 177);
}

async fn bad_objects_at_the_authorize_endpoint_redirect_or_show_177(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_key(&app, &key).await;
    for (what, request) in bad_objects(&app, &client, &key) {
        // The query's registered redirect_uri is trusted: an error redirect with its state.
        let query = [
            ("client_id", client.id.as_str()),
            ("redirect_uri", REDIRECT_URI),
            ("state", "query-state"),
            ("request", request.as_str()),
        ];
        let response = Session::new(&app).open(&query).await;
        let redirect = redirect_query(&response);
        assert_eq!(
            redirect["error"], "invalid_request_object",
            "{what}: {redirect:?}"
        );
        assert_eq!(redirect["error_code"], "177", "{what}");
        assert_eq!(redirect["state"], "query-state", "{what}");
        assert_eq!(redirect["iss"], app.geolocation().as_str());
        // Without one, nothing is trusted: the page naming 177.
        let query = [
            ("client_id", client.id.as_str()),
            ("request", request.as_str()),
        ];
        let response = Session::new(&app).open(&query).await;
        let (status, headers) = (response.status(), response.headers().clone());
        let html = response.text().await.unwrap();
        assert_error_page(status, &headers, &html, "177");
    }
}
