//! Every refusal of a registration request: 400 with `invalid_redirect_uri` or
//! `invalid_client_metadata` and a description, nothing registered.

use super::*;

crate::on_both_stores!(
    with crate::registration::open();
    each_bad_registration_is_refused_with_its_error,
    a_client_name_is_kept_in_nfc,
);

async fn each_bad_registration_is_refused_with_its_error(app: TestApp) {
    let cases = [
        (
            json!({"redirect_uris": ["https://agent.example/cb#fragment"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["http://agent.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"redirect_uris": ["https://*.agent.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (
            json!({"client_name": "no redirect"}),
            "invalid_redirect_uri",
        ),
        (
            metadata(json!({"grant_types": ["client_credentials"]})),
            "invalid_client_metadata",
        ),
        (
            metadata(json!({"grant_types": ["password"]})),
            "invalid_client_metadata",
        ),
        (
            metadata(json!({"token_endpoint_auth_method": "client_secret_jwt"})),
            "invalid_client_metadata",
        ),
        (
            metadata(json!({"scope": "openid admin"})),
            "invalid_client_metadata",
        ),
        (
            metadata(json!({"response_types": ["token"]})),
            "invalid_client_metadata",
        ),
        (json!(["not", "an", "object"]), "invalid_client_metadata"),
        // A right-to-left override would make the consent page read "PayPal" backwards.
        (
            metadata(json!({"client_name": "lapyaP\u{202E}"})),
            "invalid_client_metadata",
        ),
        (
            metadata(json!({"client_name": "Pay\u{200B}Pal"})),
            "invalid_client_metadata",
        ),
    ];
    for (body, error) in cases {
        let (status, answer) = register(&app, &body, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} -> {answer}");
        assert_eq!(answer["error"], error, "{body} -> {answer}");
        assert!(
            answer["error_description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{answer}"
        );
    }
}

async fn a_client_name_is_kept_in_nfc(app: TestApp) {
    let (status, answer) = register(
        &app,
        &metadata(json!({"client_name": "Cafe\u{0301} Agent"})),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["client_name"], "Caf\u{00E9} Agent", "{answer}");
}
