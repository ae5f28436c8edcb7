use serde_json::json;

use super::*;

const URL: &str = "https://agent.example/oauth/client.json";

fn url() -> DocumentUrl {
    DocumentUrl::parse(URL).unwrap()
}

fn scopes() -> Scopes {
    Scopes::parse("openid profile email offline_access").unwrap()
}

fn document(extra: serde_json::Value) -> Vec<u8> {
    let mut body = json!({
        "client_id": URL,
        "client_name": "Agent",
        "redirect_uris": ["https://agent.example/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    });
    for (name, value) in extra.as_object().unwrap() {
        if value.is_null() {
            body.as_object_mut().unwrap().remove(name);
        } else {
            body[name] = value.clone();
        }
    }
    serde_json::to_vec(&body).unwrap()
}

fn parsed(extra: serde_json::Value) -> Result<MetadataDocument, DocumentRefusal> {
    MetadataDocument::parse(&document(extra), &url())
}

fn jwk() -> serde_json::Value {
    json!({
        "kty": "EC", "crv": "P-256", "alg": "ES256", "kid": "k1",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    })
}

#[test]
fn client_id_urls_are_https_with_a_path_in_normal_form() {
    for good in [
        URL,
        "https://agent.example/c",
        "https://agent.example:8443/c?v=1",
        "http://127.0.0.1:8080/client.json",
    ] {
        assert_eq!(DocumentUrl::parse(good).unwrap().as_str(), good);
    }
    for bad in [
        "https://agent.example",
        "https://agent.example/",
        "https://agent.example/c#f",
        "https://user:pw@agent.example/c",
        "https://agent.example/a/../c",
        "https://agent.example/./c",
        "https://Agent.example/c",
        "https://agent.example:443/c",
        "https://agent.example/c d",
        "ftp://agent.example/c",
        "not a url",
    ] {
        assert!(
            matches!(DocumentUrl::parse(bad), Err(DocumentRefusal::Url(_))),
            "{bad}"
        );
    }
    let long = format!("https://agent.example/{}", "a".repeat(MAX_DOCUMENT_URL_LEN));
    assert!(DocumentUrl::parse(&long).is_err());
    assert_eq!(url().client_id(), ClientId::of_document_url(URL));
}

#[test]
fn a_public_document_describes_a_self_registered_public_client() {
    let checked = parsed(json!({})).unwrap().check(&scopes(), None).unwrap();
    let record = DocumentClient::new(&url(), checked, 1_000, 600);
    let client = &record.client;
    assert_eq!(client.id, ClientId::of_document_url(URL));
    assert_eq!(client.wire_id(), URL);
    assert_eq!(client.name, "Agent");
    assert!(client.is_public());
    assert!(client.is_self_registered());
    assert!(!client.first_party);
    assert!(client.may_refresh());
    assert!(!client.may_use(GrantType::ClientCredentials));
    assert_eq!(client.redirect_uris, ["https://agent.example/callback"]);
    assert_eq!(client.allowed_scopes, scopes());
    assert_eq!(
        (record.fetched_at, record.fresh_until, record.expires_at),
        (1_000, 1_600, 1_600 + DOCUMENT_STALE_SECONDS)
    );
    assert!(record.is_fresh(1_599) && !record.is_fresh(1_600));
    assert!(record.is_live(1_600 + DOCUMENT_STALE_SECONDS - 1));
    // Without a name: the document's host.
    let unnamed = parsed(json!({"client_name": null}))
        .unwrap()
        .check(&scopes(), None)
        .unwrap();
    assert_eq!(
        DocumentClient::new(&url(), unnamed, 0, 300).client.name,
        "agent.example"
    );
}

#[test]
fn private_key_jwt_needs_its_keys_inline_or_by_address() {
    let inline = parsed(json!({
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [jwk()]},
    }))
    .unwrap();
    assert_eq!(inline.jwks_uri(), None);
    let checked = inline.check(&scopes(), None).unwrap();
    let client = DocumentClient::new(&url(), checked, 0, 300).client;
    assert_eq!(client.auth_method, Some(ClientAuthMethod::PrivateKeyJwt));
    assert!(client.jwks.is_some());
    assert!(!client.is_public());

    let by_address = parsed(json!({
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks_uri": "https://agent.example/jwks.json",
    }))
    .unwrap();
    assert_eq!(
        by_address.jwks_uri(),
        Some("https://agent.example/jwks.json")
    );
    assert!(
        by_address.clone().check(&scopes(), None).is_err(),
        "no keys fetched"
    );
    let checked = by_address
        .check(&scopes(), Some(json!({"keys": [jwk()]})))
        .unwrap();
    assert!(checked.jwks.is_some());

    for refused in [
        json!({"token_endpoint_auth_method": "private_key_jwt"}),
        json!({
            "token_endpoint_auth_method": "private_key_jwt",
            "jwks": {"keys": [jwk()]},
            "jwks_uri": "https://agent.example/jwks.json",
        }),
        json!({"jwks_uri": "https://agent.example/jwks.json"}),
        json!({"jwks": {"keys": [jwk()]}}),
    ] {
        assert!(
            matches!(parsed(refused.clone()), Err(DocumentRefusal::Metadata(_))),
            "{refused}"
        );
    }
}

#[test]
fn each_refusal_of_a_document() {
    assert_eq!(
        MetadataDocument::parse(b"<html>hello</html>", &url()).unwrap_err(),
        DocumentRefusal::NotJson
    );
    assert_eq!(
        MetadataDocument::parse(b"[1, 2]", &url()).unwrap_err(),
        DocumentRefusal::NotJson
    );
    for other in [
        json!({"client_id": "https://agent.example/other.json"}),
        json!({"client_id": null}),
        json!({"client_id": 7}),
    ] {
        assert_eq!(
            parsed(other).unwrap_err(),
            DocumentRefusal::ClientIdMismatch
        );
    }
    for method in [
        "client_secret_basic",
        "client_secret_post",
        "tls_client_auth",
    ] {
        let refused = parsed(json!({"token_endpoint_auth_method": method})).unwrap_err();
        assert!(refused.to_string().contains(method), "{refused}");
    }
    let missing_method = parsed(json!({"token_endpoint_auth_method": null})).unwrap_err();
    assert!(
        missing_method.to_string().contains("required"),
        "{missing_method}"
    );
    assert!(parsed(json!({"client_secret": "s3cret"})).is_err());
    assert!(parsed(json!({"redirect_uris": "https://agent.example/cb"})).is_err());

    let checked = |extra| parsed(extra).unwrap().check(&scopes(), None);
    let no_redirects = checked(json!({"redirect_uris": null})).unwrap_err();
    assert!(
        no_redirects.to_string().contains("redirect_uris"),
        "{no_redirects}"
    );
    assert!(checked(json!({"redirect_uris": []})).is_err());
    assert!(checked(json!({"redirect_uris": ["http://agent.example/cb"]})).is_err());
    assert!(checked(json!({"grant_types": ["client_credentials"]})).is_err());
    assert!(checked(json!({"scope": "openid admin"})).is_err());
    assert!(checked(json!({"response_types": ["token"]})).is_err());
}

#[test]
fn cache_control_is_clamped_between_five_minutes_and_a_day() {
    for (header, seconds) in [
        (None, 300),
        (Some("max-age=3600"), 3600),
        (Some("public, max-age=3600"), 3600),
        (Some("max-age=10"), 300),
        (Some("max-age=999999999"), 86_400),
        (Some("max-age=99999999999999999999999"), 86_400),
        (Some("s-maxage=7200, max-age=60"), 7200),
        (Some("no-store"), 300),
        (Some("no-cache, max-age=3600"), 300),
        (Some("MAX-AGE=\"900\""), 900),
        (Some("max-age=-5"), 300),
        (Some("garbage"), 300),
    ] {
        assert_eq!(cache_lifetime(header), seconds, "{header:?}");
    }
}

#[test]
fn a_document_client_round_trips_through_json() {
    let checked = parsed(json!({})).unwrap().check(&scopes(), None).unwrap();
    let record = DocumentClient::new(&url(), checked, 1_000, 600);
    let text = serde_json::to_string(&record).unwrap();
    let back: DocumentClient = serde_json::from_str(&text).unwrap();
    assert_eq!(back, record);
}
