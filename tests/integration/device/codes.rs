//! `POST /oauth2/v0/device_authorization`: its answer, what is stored, its refusals, and the
//! metadata that names it.

use super::*;
use crate::support::assertions::assert_token_error;
use token_core::admin::NewClient;
use token_domain::{GrantType, Scopes, USER_CODE_ALPHABET};

crate::on_both_stores!(
    codes_are_answered_as_rfc_8628_says_and_stored_only_as_hashes,
    refusals_follow_the_token_endpoints_client_checks,
    metadata_names_the_endpoint_and_the_grant,
);

async fn codes_are_answered_as_rfc_8628_says_and_stored_only_as_hashes(app: TestApp) {
    let client = app.create_client("read").await;
    let body = codes(&app, &client, "openid read").await;
    let user_code = body["user_code"].as_str().unwrap();
    assert_eq!(user_code.len(), 9, "{body}");
    assert_eq!(&user_code[4..5], "-", "shown XXXX-XXXX: {body}");
    assert!(user_code
        .bytes()
        .filter(|b| *b != b'-')
        .all(|b| USER_CODE_ALPHABET.contains(&b)));
    let verification_uri = app.url("/oauth2/v0/device");
    assert_eq!(body["verification_uri"], verification_uri.as_str());
    assert_eq!(
        body["verification_uri_complete"],
        format!("{verification_uri}?user_code={user_code}").as_str()
    );
    assert_eq!(body["expires_in"], 600);
    assert_eq!(body["interval"], 5);
    let device_code = body["device_code"].as_str().unwrap();
    assert!(device_code.len() >= 43, "256 bits: {body}");
    for secret in [device_code, user_code, &user_code.replace('-', "")] {
        assert!(
            !app.data.contains(secret).await,
            "{secret} is stored only as a hash"
        );
    }
    let other = codes(&app, &client, "read").await;
    assert_ne!(other["user_code"], body["user_code"]);
    assert_ne!(other["device_code"], body["device_code"]);
}

async fn refusals_follow_the_token_endpoints_client_checks(app: TestApp) {
    let client = app.create_client("read").await;
    let wrong = TestClient {
        secret: "not the secret".into(),
        ..client.clone()
    };
    assert_token_error(
        &request_codes(&app, &wrong, &[]).await,
        401,
        "invalid_client",
        64,
    );
    let (status, body) = json_of(
        app.post_form(DEVICE_AUTHORIZATION, &[("client_id", client.id.as_str())])
            .await,
    )
    .await;
    assert_token_error(&(status, body), 400, "invalid_request", 63);
    assert_token_error(
        &request_codes(&app, &client, &[("scope", "write")]).await,
        400,
        "invalid_scope",
        54,
    );
    let mut new = NewClient::named("no devices", Scopes::parse("read").unwrap());
    new.grants = [GrantType::ClientCredentials].into_iter().collect();
    let without = app.create_client_with(new).await;
    assert_token_error(
        &request_codes(&app, &without, &[]).await,
        400,
        "invalid_grant",
        60,
    );
    let (status, body) = poll(&app, &without, "any").await;
    assert_token_error(&(status, body), 400, "invalid_grant", 60);
}

async fn metadata_names_the_endpoint_and_the_grant(app: TestApp) {
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let metadata = app.get_json(path).await;
        assert_eq!(
            metadata["device_authorization_endpoint"],
            app.url(DEVICE_AUTHORIZATION).as_str(),
            "{metadata}"
        );
        assert!(
            metadata["grant_types_supported"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g == DEVICE_GRANT),
            "{metadata}"
        );
    }
}
