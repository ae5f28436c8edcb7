//! The routers' shared parts and the document they are built with.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::routing::get;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::*;

async fn panics() -> &'static str {
    panic!("a handler's bug")
}

/// A panicking handler answers the 500 of every server failure (the catalogue's 5xx shape,
/// without the panic's message), with the headers every response carries.
#[tokio::test]
async fn a_panicking_handler_answers_the_server_error_body() {
    // A subscriber that wants the request span: its callsite is then never cached as disabled
    // for the other tests that capture the request log.
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let router = finish(Router::new().route("/panics", get(panics)), false);
    let request = http::Request::get("/panics").body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers().clone();
    assert!(headers.contains_key(&CORRELATION_ID));
    assert_eq!(headers[http::header::CACHE_CONTROL], "no-store");
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        body,
        json!({
            "error": "server_error",
            "message": "The server failed to process the request.",
        })
    );
}

/// Every `$ref` in `value`.
fn references<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                match (key.as_str(), item) {
                    ("$ref", Value::String(target)) => found.push(target),
                    _ => references(item, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}

#[test]
fn every_schema_the_document_refers_to_is_in_it() {
    let document = openapi::document();
    let mut found = Vec::new();
    references(document, &mut found);
    assert!(!found.is_empty());
    for target in found {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target} is not a schema reference"));
        assert!(
            document["components"]["schemas"].get(name).is_some(),
            "{target} is referred to but not in the document"
        );
    }
}

#[test]
fn every_operation_has_its_own_id() {
    let mut ids = BTreeSet::new();
    for (path, item) in openapi::document()["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap().to_owned();
            assert!(ids.insert(id.clone()), "{method} {path}: {id} twice");
        }
    }
    // The aliases are documented under the paths they are served at.
    for id in [
        "token",
        "oauth2_token",
        "jwks",
        "oauth2_jwks",
        "exchange",
        "company_auth_token",
        "company_auth_token_without_slash",
        "openapi",
    ] {
        assert!(ids.contains(id), "{id}: {ids:?}");
    }
}

/// Each function's router documents a part of the whole document, and the local server's
/// router all of it.
#[test]
fn the_document_is_every_function_s_routes() {
    let paths = |routes: Routes| -> BTreeSet<String> {
        routes.document().paths.paths.into_keys().collect()
    };
    let every: BTreeSet<String> = openapi::document()["paths"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let token = paths(token_routes());
    let exchange = paths(exchange_routes());
    let company = paths(company_routes());
    let registration = paths(registration_routes());
    let scim = paths(scim_routes());
    assert!(token.contains("/openapi.json"));
    assert!(registration.contains("/oauth2/v0/register"));
    assert!(
        !token.contains("/oauth2/v0/register"),
        "registration is a function of its own"
    );
    let union: BTreeSet<String> = token
        .iter()
        .chain(&exchange)
        .chain(&company)
        .chain(&registration)
        .chain(&scim)
        .cloned()
        .collect();
    assert_eq!(union, every);
    assert_eq!(paths(every_route()), every);
}

/// The lower-case name of `method`, as in a document's path item.
fn method_name(method: &utoipa::openapi::HttpMethod) -> String {
    serde_json::to_value(method)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

/// Each router serves exactly the (method, path) pairs its document describes: the served
/// routes are built without the descriptions, from the same list.
#[test]
fn every_served_route_is_documented_and_no_other() {
    const METHODS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    for (router, routes) in [
        ("token", token_routes()),
        ("exchange", exchange_routes()),
        ("company", company_routes()),
        ("every", every_route()),
    ] {
        let mut served = BTreeSet::new();
        let _ = routes.served_each(|path, methods| {
            for method in methods {
                let route = (method_name(method), path.to_owned());
                assert!(served.insert(route.clone()), "{router}: {route:?} twice");
            }
        });
        let document = serde_json::to_value(routes.document()).unwrap();
        let mut documented = BTreeSet::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if METHODS.contains(&method.as_str()) {
                    documented.insert((method.clone(), path.clone()));
                }
            }
        }
        assert!(!served.is_empty(), "{router}");
        assert_eq!(served, documented, "{router}");
    }
}

async fn hsts_of(https: bool, path: &str) -> Option<String> {
    // As above: the request log's callsites are never first seen here without a subscriber.
    let subscriber = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let router = finish(Router::new().route("/ok", get(|| async { "ok" })), https);
    let request = http::Request::get(path).body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    response
        .headers()
        .get(http::header::STRICT_TRANSPORT_SECURITY)
        .map(|v| v.to_str().unwrap().to_owned())
}

/// HSTS on every response of an HTTPS deployment, the 404 fallback included; none over HTTP.
#[tokio::test]
async fn every_https_response_carries_hsts_and_plain_http_none() {
    for path in ["/ok", "/no-such-path"] {
        assert_eq!(
            hsts_of(true, path).await.as_deref(),
            Some(STRICT_TRANSPORT_SECURITY),
            "{path}"
        );
        assert_eq!(hsts_of(false, path).await, None, "{path}");
    }
}
