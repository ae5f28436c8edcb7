//! Every bad assertion: 401 `invalid_client`, code 63, and its `jti` not marked used.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use serde_json::{json, Value};
use token_core::admin::{self, AdminError, NewClient};
use token_domain::clock::Clock;
use token_domain::jose::PublicJwkSet;
use token_domain::{ClientId, Scopes};

use super::keys::{hs256, jwk_set, unsigned, ClientKey};
use super::*;

crate::on_both_stores!(
    bad_assertions_are_invalid_client_and_mark_nothing,
    clients_without_keys_or_unknown_are_invalid_client,
    a_disabled_client_learns_it_only_with_a_valid_assertion,
    registration_refuses_private_and_symmetric_keys,
);

#[track_caller]
fn assert_invalid_client(answer: &(StatusCode, Value), case: &str) {
    assert_eq!(answer.0, StatusCode::UNAUTHORIZED, "{case}: {}", answer.1);
    assert_token_error(answer, 401, "invalid_client", 63);
}

async fn bad_assertions_are_invalid_client_and_mark_nothing(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let now = app.clock.now();
    let stranger = ClientKey::es256("k");
    let fresh = || claims(&app, &client);

    let cases: Vec<(&str, Value, String)> = {
        let mut cases = Vec::new();
        let mut case = |name, claims: Value, sign: &dyn Fn(&Value) -> String| {
            let token = sign(&claims);
            cases.push((name, claims, token));
        };
        case("alg none", fresh(), &|c| {
            unsigned(&json!({"alg": "none", "kid": "k"}), c)
        });
        case("HS256 with a shared string", fresh(), &|c| {
            hs256(c, &client.secret, "k")
        });
        case("RS256 header", fresh(), &|c| {
            unsigned(&json!({"alg": "RS256", "kid": "k"}), c)
        });
        case("another key with the same kid", fresh(), &|c| {
            stranger.sign(c)
        });
        case("ES256 header on an EdDSA signature", fresh(), &|c| {
            let ed = ClientKey::eddsa("k").sign(c);
            let (_, rest) = ed.split_once('.').unwrap();
            let header = unsigned(&json!({"alg": "ES256", "kid": "k"}), &json!({}));
            format!("{}.{rest}", header.split('.').next().unwrap())
        });
        case(
            "wrong aud",
            with(
                fresh(),
                "aud",
                json!("https://other.example.com/oauth2/v0/token"),
            ),
            &|c| key.sign(c),
        );
        case(
            "aud of another path",
            with(fresh(), "aud", json!(app.url("/oauth2/v0/userinfo"))),
            &|c| key.sign(c),
        );
        case("expired", with(fresh(), "exp", json!(now - 1)), &|c| {
            key.sign(c)
        });
        case("expiring now", with(fresh(), "exp", json!(now)), &|c| {
            key.sign(c)
        });
        case(
            "exp over 5 minutes ahead",
            with(fresh(), "exp", json!(now + 3600)),
            &|c| key.sign(c),
        );
        case("no exp", without(fresh(), "exp"), &|c| key.sign(c));
        case("no jti", without(fresh(), "jti"), &|c| key.sign(c));
        case(
            "iat in the future",
            with(fresh(), "iat", json!(now + 120)),
            &|c| key.sign(c),
        );
        case(
            "nbf in the future",
            with(fresh(), "nbf", json!(now + 120)),
            &|c| key.sign(c),
        );
        case(
            "sub is someone else",
            with(fresh(), "sub", json!("other")),
            &|c| key.sign(c),
        );
        // Part 13: a request object (same keys, carried in a browser's URL) is no assertion.
        case("typed as a request object", fresh(), &|c| {
            key.sign_typed(c, "oauth-authz-req+jwt")
        });
        case("typed as a request object, long form", fresh(), &|c| {
            key.sign_typed(c, "application/oauth-authz-req+jwt")
        });
        case(
            "carries response_type",
            with(fresh(), "response_type", json!("code")),
            &|c| key.sign(c),
        );
        case(
            "carries redirect_uri",
            with(fresh(), "redirect_uri", json!("https://app.example/cb")),
            &|c| key.sign(c),
        );
        case("tampered payload", fresh(), &|c| {
            let token = key.sign(c);
            let other = key.sign(&with(c.clone(), "exp", json!(now + 200)));
            let parts: Vec<&str> = token.split('.').collect();
            let other_parts: Vec<&str> = other.split('.').collect();
            format!("{}.{}.{}", parts[0], other_parts[1], parts[2])
        });
        cases
    };
    for (name, claims, token) in &cases {
        assert_invalid_client(&app_token(&app, token).await, name);
        if let Some(jti) = claims["jti"].as_str() {
            assert!(
                !marked_used(&app, &client.id, jti).await,
                "{name}: the jti was marked used"
            );
        }
    }

    // The request's other parameters: a wrong type, no assertion, a secret as well, another
    // client_id.
    let claims = fresh();
    let good = key.sign(&claims);
    let requests: Vec<(&str, Vec<(&str, String)>)> = vec![
        (
            "client_assertion_type saml2-bearer",
            vec![
                (
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:saml2-bearer".to_owned(),
                ),
                ("client_assertion", good.clone()),
            ],
        ),
        (
            "no client_assertion",
            vec![("client_assertion_type", ASSERTION_TYPE.to_owned())],
        ),
        (
            "no client_assertion_type",
            vec![("client_assertion", good.clone())],
        ),
        ("garbage", assertion_fields("not.a.jwt")),
        ("secret as well", {
            let mut fields = assertion_fields(&good);
            fields.push(("client_secret", client.secret.clone()));
            fields
        }),
        ("another client_id", {
            let mut fields = assertion_fields(&good);
            fields.push(("client_id", uuid::Uuid::new_v4().to_string()));
            fields
        }),
    ];
    for (name, mut fields) in requests {
        fields.push(("grant_type", "client_credentials".to_owned()));
        assert_invalid_client(&post(&app, "/oauth2/v0/token", &fields).await, name);
    }
    // Also with HTTP Basic beside the assertion (RFC 6749 §2.3: one method per request).
    let response = app
        .http
        .post(app.url("/oauth2/v0/token"))
        .basic_auth(&client.id, Some(&client.secret))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", good.as_str()),
        ])
        .send()
        .await
        .unwrap();
    // RFC 6749 §5.2: a 401 to a client that used the Authorization header names its scheme.
    assert!(
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("Basic ")),
        "Basic as well: the challenge"
    );
    assert_invalid_client(&json_of(response).await, "Basic as well");
    assert!(
        !marked_used(&app, &client.id, jti(&claims)).await,
        "none of these requests marked the valid assertion's jti"
    );
}

async fn clients_without_keys_or_unknown_are_invalid_client(app: TestApp) {
    let key = ClientKey::es256("k");
    let plain = app.create_client("read").await;
    assert_invalid_client(
        &app_token(&app, &key.sign(&claims(&app, &plain))).await,
        "a client without keys",
    );
    let unknown = TestClient {
        id: uuid::Uuid::new_v4().to_string(),
        secret: String::new(),
    };
    assert_invalid_client(
        &app_token(&app, &key.sign(&claims(&app, &unknown))).await,
        "an unknown client",
    );
    let not_an_id = TestClient {
        id: "not-a-client-id".into(),
        secret: String::new(),
    };
    assert_invalid_client(
        &app_token(&app, &key.sign(&claims(&app, &not_an_id))).await,
        "an iss that is no client id",
    );
}

async fn a_disabled_client_learns_it_only_with_a_valid_assertion(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let id = ClientId::parse(&client.id).unwrap();
    admin::disable_client(app.ctx(), &id).await.unwrap();
    let claims = claims(&app, &client);
    assert_token_error(
        &app_token(&app, &key.sign(&claims)).await,
        403,
        "access_denied",
        59,
    );
    assert!(!marked_used(&app, &client.id, jti(&claims)).await);
    assert_invalid_client(
        &app_token(
            &app,
            &ClientKey::es256("k").sign(&super::claims(&app, &client)),
        )
        .await,
        "a disabled client, another key",
    );
}

async fn registration_refuses_private_and_symmetric_keys(app: TestApp) {
    let key = ClientKey::es256("k");
    let private =
        json!({ "keys": [key.public.clone(), ClientKey::eddsa("e").with_private_member()] });
    let symmetric = json!({ "keys": [{"kty": "oct", "k": "c2VjcmV0", "alg": "HS256"}] });
    for (set, says) in [(private, "private"), (symmetric, "symmetric")] {
        let refused = admin::parse_jwks(&set.to_string()).unwrap_err();
        assert!(matches!(refused, AdminError::Invalid(_)), "{refused:?}");
        assert!(refused.to_string().contains(says), "{refused}");
    }
    assert!(admin::parse_jwks("{not json").is_err());
    // A registered set is stored and read back as it was given (public members only).
    let set = PublicJwkSet::parse(jwk_set(&[&key])).unwrap();
    let mut new = NewClient::named("signer", Scopes::parse("read").unwrap());
    new.jwks = Some(set.clone());
    let client = app.create_client_with(new).await;
    let stored = app
        .store
        .clients()
        .get_client(&ClientId::parse(&client.id).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.jwks, Some(set));
}

fn without(mut claims: Value, name: &str) -> Value {
    claims.as_object_mut().unwrap().remove(name);
    claims
}
