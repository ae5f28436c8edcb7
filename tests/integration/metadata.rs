//! Discovery (RFC 8414, OpenID Connect discovery), the JWK Set at its OAuth 2.0 path, and the
//! OpenAPI document: what they advertise is what the app serves.

use crate::support::app::{json_of, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::Value;

crate::on_both_stores!(
    metadata_names_every_endpoint_and_grant,
    advertised_endpoints_are_served,
    openapi_document_lists_every_served_operation,
);

async fn get_json(app: &TestApp, path: &str) -> Value {
    let (status, body) = json_of(app.http.get(app.url(path)).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "GET {path}: {body}");
    body
}

async fn metadata_names_every_endpoint_and_grant(app: TestApp) {
    let metadata = get_json(&app, "/.well-known/oauth-authorization-server").await;
    assert_eq!(
        get_json(&app, "/.well-known/openid-configuration").await,
        metadata,
        "both discovery paths serve one document"
    );
    let base = app.address.as_str();
    assert_eq!(metadata["issuer"], base);
    for (field, path) in [
        ("authorization_endpoint", "/oauth2/v0/authorize"),
        ("token_endpoint", "/oauth2/v0/token"),
        ("revocation_endpoint", "/oauth2/v0/revoke"),
        ("introspection_endpoint", "/oauth2/v0/introspect"),
        ("jwks_uri", "/oauth2/v0/jwks"),
        ("otp_endpoint", "/oauth2/v0/otp"),
        (
            "device_authorization_endpoint",
            "/oauth2/v0/device_authorization",
        ),
        ("userinfo_endpoint", "/oauth2/v0/userinfo"),
        ("end_session_endpoint", "/oauth2/v0/logout"),
    ] {
        assert_eq!(metadata[field], format!("{base}{path}"), "{field}");
    }
    let list = |field: &str| -> Vec<String> {
        serde_json::from_value(metadata[field].clone()).unwrap_or_else(|_| panic!("{field}"))
    };
    let mut grants = list("grant_types_supported");
    grants.sort();
    assert_eq!(
        grants,
        [
            "authorization_code",
            "client_credentials",
            "otp",
            "password",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
            "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "urn:ietf:params:oauth:grant-type:token-exchange"
        ]
    );
    assert_eq!(list("code_challenge_methods_supported"), ["S256"]);
    // CLIENT_ID_METADATA_DOCUMENTS is off by default (client_documents: `true` when on).
    assert_eq!(metadata["client_id_metadata_document_supported"], false);
    assert_eq!(list("response_types_supported"), ["code"]);
    assert_eq!(list("id_token_signing_alg_values_supported"), ["ES256"]);
    // OpenID Connect Discovery 1.0 §3, RFC 9207 §3.
    assert_eq!(list("subject_types_supported"), ["public"]);
    assert_eq!(
        list("scopes_supported"),
        ["openid", "profile", "email", "offline_access"]
    );
    assert_eq!(
        list("prompt_values_supported"),
        ["none", "login", "consent"]
    );
    let claims = list("claims_supported");
    for claim in [
        "sub",
        "auth_time",
        "amr",
        "idp",
        "sid",
        "email",
        "preferred_username",
        "principal_type",
    ] {
        assert!(claims.iter().any(|c| c == claim), "{claim} in {claims:?}");
    }
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        true
    );
    // RFC 9101 request objects; RFC 9126 `request_uri`s only from the PAR endpoint.
    assert_eq!(metadata["request_parameter_supported"], true);
    assert_eq!(metadata["request_uri_parameter_supported"], false);
    // Back-Channel Logout 1.0 §2.1: logout tokens, with `sid`.
    assert_eq!(metadata["backchannel_logout_supported"], true);
    assert_eq!(metadata["backchannel_logout_session_supported"], true);
    // Public clients (`clients set-auth-method none`) send their client_id alone.
    assert_eq!(
        list("token_endpoint_auth_methods_supported"),
        [
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
            "none"
        ]
    );
    for field in [
        "revocation_endpoint_auth_methods_supported",
        "introspection_endpoint_auth_methods_supported",
    ] {
        assert_eq!(
            list(field),
            [
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt"
            ],
            "{field}"
        );
    }
    for field in [
        "token_endpoint_auth_signing_alg_values_supported",
        "revocation_endpoint_auth_signing_alg_values_supported",
        "introspection_endpoint_auth_signing_alg_values_supported",
    ] {
        assert_eq!(list(field), ["ES256", "PS256", "EdDSA"], "{field}");
    }

    assert_eq!(
        get_json(&app, "/oauth2/v0/jwks").await,
        get_json(&app, "/v0/token/jwks").await,
        "one JWK Set at both paths"
    );
}

async fn advertised_endpoints_are_served(app: TestApp) {
    let metadata = get_json(&app, "/.well-known/oauth-authorization-server").await;
    for (field, method) in [
        ("authorization_endpoint", Method::GET),
        ("token_endpoint", Method::POST),
        ("revocation_endpoint", Method::POST),
        ("introspection_endpoint", Method::POST),
        ("jwks_uri", Method::GET),
        ("otp_endpoint", Method::POST),
        ("userinfo_endpoint", Method::GET),
        ("userinfo_endpoint", Method::POST),
        ("end_session_endpoint", Method::GET),
        ("end_session_endpoint", Method::POST),
    ] {
        let url = metadata[field].as_str().unwrap();
        let status = app
            .http
            .request(method.clone(), url)
            .send()
            .await
            .unwrap()
            .status();
        assert!(
            status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED,
            "{method} {url} ({field}) answers {status}"
        );
    }
}

async fn openapi_document_lists_every_served_operation(app: TestApp) {
    let document = get_json(&app, "/openapi.json").await;
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3.1"),
        "OpenAPI 3.1: {}",
        document["openapi"]
    );
    let paths = document["paths"].as_object().expect("paths");
    for path in [
        "/v0/token",
        "/oauth2/v0/token",
        "/v0/token/jwks",
        "/oauth2/v0/jwks",
        "/oauth2/v0/revoke",
        "/oauth2/v0/introspect",
        "/app-mgmt/v0/connections",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me",
        "/profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/",
        "/openapi.json",
        "/oauth2/v0/authorize",
        "/oauth2/v0/otp",
        "/oauth2/v0/userinfo",
        "/oauth2/v0/logout",
    ] {
        assert!(paths.contains_key(path), "{path} is documented");
    }
    // And everything documented is served.
    for (path, operations) in paths {
        // Registration is off by default: its routes answer 404 by design (registration::modes
        // tests them on and off).
        if path.starts_with("/oauth2/v0/register") {
            continue;
        }
        let concrete = path
            .replace("{OLDConsumerKey}", "qyprd-nothing")
            .replace("{COMPANY_ID}", "00000000-0000-0000-0000-000000000000");
        for method in operations.as_object().unwrap().keys() {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            let response = app
                .http
                .request(method.clone(), app.url(&concrete))
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let unrouted = status == StatusCode::METHOD_NOT_ALLOWED
                || (status == StatusCode::NOT_FOUND && body["error"] == "not_found");
            assert!(
                !unrouted,
                "{method} {path} is documented but answers {status}: {body}"
            );
        }
    }
    // A body is documented as required where a request without one is refused, and as optional
    // where the request is complete without it (the token in the header; the app in the query).
    let required = |path: &str| document["paths"][path]["post"]["requestBody"]["required"] == true;
    assert!(required("/v0/token"), "the token endpoint needs its form");
    for optional in [
        "/oauth2/v0/userinfo",
        "/profile-service/v1/keys/principals/{COMPANY_ID}/authtoken/",
        "/profile-service/v1/keys/principals/{COMPANY_ID}/authtoken",
    ] {
        assert!(!required(optional), "{optional}'s body is optional");
    }
}
