use serde_json::json;

use super::*;

fn allowed() -> Scopes {
    Scopes::parse("openid profile email offline_access").unwrap()
}

fn metadata(value: serde_json::Value) -> ClientMetadata {
    serde_json::from_value(value).unwrap()
}

fn refusal(value: serde_json::Value) -> RegistrationError {
    metadata(value).check(&allowed()).unwrap_err()
}

#[test]
fn defaults_are_the_code_grant_a_secret_and_every_allowed_scope() {
    let checked = metadata(json!({"redirect_uris": ["https://app.example/cb"]}))
        .check(&allowed())
        .unwrap();
    assert_eq!(
        checked.grant_types,
        BTreeSet::from([GrantType::AuthorizationCode])
    );
    assert_eq!(checked.auth_method, RegisteredAuthMethod::ClientSecretBasic);
    assert_eq!(checked.scope, allowed());
    assert!(checked.jwks.is_none());
}

#[test]
fn loopback_http_with_any_port_and_https_are_accepted() {
    let checked = metadata(json!({
        "redirect_uris": ["http://127.0.0.1:4711/cb", "http://[::1]/cb", "http://localhost:1/x",
                          "https://app.example/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
        "scope": "openid offline_access",
    }))
    .check(&allowed())
    .unwrap();
    assert_eq!(checked.redirect_uris.len(), 4);
    assert_eq!(checked.auth_method, RegisteredAuthMethod::None);
    assert!(checked.grant_types.contains(&GrantType::RefreshToken));
}

#[test]
fn bad_redirect_uris_are_invalid_redirect_uri() {
    for uris in [
        json!([]),
        json!(["https://app.example/cb#frag"]),
        json!(["http://app.example/cb"]),
        json!(["https://*.app.example/cb"]),
        json!(["https://app.example/*"]),
        json!(["/relative"]),
    ] {
        let error = refusal(json!({ "redirect_uris": uris }));
        assert_eq!(
            error.kind,
            RegistrationErrorKind::InvalidRedirectUri,
            "{uris}"
        );
    }
    let missing = refusal(json!({}));
    assert_eq!(missing.kind, RegistrationErrorKind::InvalidRedirectUri);
}

#[test]
fn unknown_grants_methods_response_types_and_scopes_are_invalid_metadata() {
    for extra in [
        json!({"grant_types": ["client_credentials"]}),
        json!({"grant_types": ["password"]}),
        json!({"grant_types": ["refresh_token"]}),
        json!({"token_endpoint_auth_method": "client_secret_jwt"}),
        json!({"response_types": ["token"]}),
        json!({"scope": "openid admin"}),
        json!({"token_endpoint_auth_method": "private_key_jwt"}),
        json!({"jwks": {"keys": []}}),
        json!({"client_uri": "javascript:alert(1)"}),
        json!({"logo_uri": "http://evil.example/logo.png"}),
        json!({"client_name": ""}),
    ] {
        let mut body = json!({"redirect_uris": ["https://app.example/cb"]});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let error = refusal(body);
        assert_eq!(
            error.kind,
            RegistrationErrorKind::InvalidClientMetadata,
            "{extra}"
        );
        assert!(!error.description.is_empty());
    }
}

#[test]
fn the_registration_keeps_only_the_token_digest() {
    let registration = DynamicRegistration {
        access_token_hash: TokenHash::of("registration-access-token"),
        auth_method: RegisteredAuthMethod::None,
        client_uri: None,
        logo_uri: None,
        policy_uri: None,
        tos_uri: None,
        backchannel_logout_session_required: false,
        jwks_uri: None,
    };
    let stored = serde_json::to_string(&registration).unwrap();
    assert!(!stored.contains("registration-access-token"), "{stored}");
    let read: DynamicRegistration = serde_json::from_str(&stored).unwrap();
    assert_eq!(read, registration);
}

#[test]
fn client_names_with_format_characters_are_refused_and_names_are_kept_in_nfc() {
    for name in [
        "Pay\u{202E}lapyaP",
        "Good\u{200B}App",
        "App\u{2066}isolate\u{2069}",
        "\u{FEFF}App",
        "App\u{00AD}",
        "tab\tapp",
    ] {
        let error =
            refusal(json!({"redirect_uris": ["https://app.example/cb"], "client_name": name}));
        assert_eq!(
            error.kind,
            RegistrationErrorKind::InvalidClientMetadata,
            "{name:?}"
        );
        assert!(
            error.description.starts_with("client_name "),
            "{}",
            error.description
        );
    }
    let decomposed = "Cafe\u{0301} App";
    let checked =
        metadata(json!({"redirect_uris": ["https://app.example/cb"], "client_name": decomposed}))
            .check(&allowed())
            .unwrap();
    assert_eq!(checked.client_name.as_deref(), Some("Caf\u{00E9} App"));
    assert_eq!(
        display_name("Ünïcödé ✓ 日本"),
        Ok("Ünïcödé ✓ 日本".to_owned())
    );
    assert_eq!(display_name("   "), Err(NameProblem::Length));
}

#[test]
fn policy_and_terms_are_kept_when_https_and_refused_otherwise() {
    let checked = metadata(json!({
        "redirect_uris": ["https://app.example/cb"],
        "policy_uri": "https://app.example/privacy",
        "tos_uri": "https://app.example/terms",
    }))
    .check(&allowed())
    .unwrap();
    assert_eq!(
        checked.policy_uri.as_deref(),
        Some("https://app.example/privacy")
    );
    assert_eq!(
        checked.tos_uri.as_deref(),
        Some("https://app.example/terms")
    );
    for member in ["policy_uri", "tos_uri"] {
        for uri in [
            "http://127.0.0.1/privacy",
            "http://app.example/privacy",
            "javascript:alert(1)",
            "https://app.example/privacy#top",
            "/privacy",
        ] {
            let error = refusal(json!({"redirect_uris": ["https://app.example/cb"], member: uri}));
            assert_eq!(
                error.kind,
                RegistrationErrorKind::InvalidClientMetadata,
                "{member} {uri}"
            );
            assert!(
                error.description.starts_with(member),
                "{}",
                error.description
            );
        }
    }
}

#[test]
fn logout_addresses_follow_the_tokenctl_rules() {
    let checked = metadata(json!({
        "redirect_uris": ["https://app.example/cb"],
        "post_logout_redirect_uris": ["https://app.example/bye", "http://127.0.0.1:9/bye"],
        "backchannel_logout_uri": "https://app.example/backchannel",
        "backchannel_logout_session_required": true,
    }))
    .check(&allowed())
    .unwrap();
    assert_eq!(
        checked.post_logout_redirect_uris,
        ["https://app.example/bye", "http://127.0.0.1:9/bye"]
    );
    assert_eq!(
        checked.backchannel_logout_uri.as_deref(),
        Some("https://app.example/backchannel")
    );
    assert!(checked.backchannel_logout_session_required);
    for (member, value) in [
        (
            "post_logout_redirect_uris",
            json!(["http://app.example/bye"]),
        ),
        (
            "post_logout_redirect_uris",
            json!(["https://app.example/*"]),
        ),
        (
            "post_logout_redirect_uris",
            json!(["https://app.example/bye#x"]),
        ),
        ("backchannel_logout_uri", json!("http://app.example/logout")),
        (
            "backchannel_logout_uri",
            json!("https://app.example/logout#x"),
        ),
    ] {
        let error = refusal(json!({"redirect_uris": ["https://app.example/cb"], member: value}));
        assert_eq!(
            error.kind,
            RegistrationErrorKind::InvalidClientMetadata,
            "{member} {value}"
        );
        assert!(
            error.description.starts_with(member),
            "{}",
            error.description
        );
    }
}

#[test]
fn a_jwks_uri_stands_for_the_keys_of_a_private_key_jwt_client_only() {
    let checked = metadata(json!({
        "redirect_uris": ["https://app.example/cb"],
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks_uri": "https://app.example/jwks.json",
    }))
    .check(&allowed())
    .unwrap();
    assert_eq!(
        checked.jwks_uri.as_deref(),
        Some("https://app.example/jwks.json")
    );
    assert!(checked.jwks.is_none());
    let key =
        json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
    for extra in [
        json!({"token_endpoint_auth_method": "none", "jwks_uri": "https://app.example/jwks"}),
        json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "http://app.example/jwks"}),
        json!({"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://app.example/jwks",
               "jwks": {"keys": [key]}}),
    ] {
        let mut body = extra.clone();
        body["redirect_uris"] = json!(["https://app.example/cb"]);
        let error = refusal(body);
        assert_eq!(
            error.kind,
            RegistrationErrorKind::InvalidClientMetadata,
            "{extra}"
        );
        assert!(error.description.contains("jwks"), "{}", error.description);
    }
}
