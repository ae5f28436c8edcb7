//! The parse keeps the catalogue's order: shape errors at once, a grant's own missing parameter
//! only in [`TokenRequest::grant`], for the dispatch to answer after client authentication.

use super::*;
use crate::domain::GrantType;

fn token_request(pairs: &[(&str, &str)]) -> Result<TokenRequest, ErrorCode> {
    TokenRequest::parse(pairs.iter().copied(), None)
}

fn grant_code(pairs: &[(&str, &str)]) -> Option<ErrorCode> {
    token_request(pairs).unwrap().grant.err()
}

#[test]
fn a_repeated_parameter_is_refused_before_anything_else() {
    for pairs in [
        [("grant_type", "password"), ("grant_type", "password")],
        [("scope", "a"), ("scope", "b")],
        // Even one no request reads, and even with no grant_type.
        [("unknown", "a"), ("unknown", "b")],
    ] {
        assert_eq!(
            token_request(&pairs).unwrap_err(),
            ErrorCode::UnsupportedRequestFormat,
            "{pairs:?}"
        );
    }
}

#[test]
fn an_empty_value_is_an_absent_one() {
    assert_eq!(
        token_request(&[("grant_type", "")]).unwrap_err(),
        ErrorCode::GrantTypeMissing
    );
    assert_eq!(
        grant_code(&[
            ("grant_type", "password"),
            ("username", ""),
            ("password", "p")
        ]),
        Some(ErrorCode::UsernameMissing)
    );
    // An empty value is dropped before repeats are counted.
    let request = token_request(&[
        ("grant_type", "client_credentials"),
        ("scope", ""),
        ("scope", "read"),
    ])
    .unwrap();
    let Ok(GrantRequest::ClientCredentials(grant)) = request.grant else {
        panic!("a client_credentials request");
    };
    assert_eq!(grant.scope.as_deref(), Some("read"));
}

#[test]
fn grant_type_is_checked_by_the_parse() {
    assert_eq!(
        token_request(&[("username", "u")]).unwrap_err(),
        ErrorCode::GrantTypeMissing
    );
    assert_eq!(
        token_request(&[("grant_type", "implicit")]).unwrap_err(),
        ErrorCode::UnsupportedGrant
    );
    let refresh = token_request(&[("grant_type", "refresh"), ("refresh_token", "t")]).unwrap();
    assert_eq!(refresh.grant_type, GrantType::RefreshToken);
}

#[test]
fn a_missing_grant_parameter_waits_for_the_client_to_be_authenticated() {
    // No client credentials and no username: the parse succeeds, so client authentication (62)
    // is answered first; the grant's 51 is only kept.
    let request = token_request(&[("grant_type", "password")]).unwrap();
    assert!(request.client.client_id.is_none());
    assert_eq!(request.grant.unwrap_err(), ErrorCode::UsernameMissing);
}

#[test]
fn each_grant_reports_its_first_missing_parameter_in_order() {
    let cases: [(&[(&str, &str)], ErrorCode); 6] = [
        (&[("grant_type", "password")], ErrorCode::UsernameMissing),
        (
            &[("grant_type", "password"), ("username", "u")],
            ErrorCode::PasswordMissing,
        ),
        (
            &[
                ("grant_type", "password"),
                ("username", "u"),
                ("password", "p"),
                ("credtype", "otp"),
            ],
            ErrorCode::CredtypeInvalid,
        ),
        (
            &[("grant_type", "refresh_token")],
            ErrorCode::RefreshTokenMissing,
        ),
        (
            &[("grant_type", "authorization_code"), ("redirect_uri", "x")],
            ErrorCode::CodeMissing,
        ),
        (
            &[("grant_type", "authorization_code"), ("code", "c")],
            ErrorCode::RedirectUriMissing,
        ),
    ];
    for (pairs, code) in cases {
        assert_eq!(grant_code(pairs), Some(code), "{pairs:?}");
    }
    // The one-time password's fields are checked by its own flow, in its order.
    assert_eq!(grant_code(&[("grant_type", "otp")]), None);
}

#[test]
fn a_password_request_is_typed() {
    let request = token_request(&[
        ("grant_type", "password"),
        ("client_id", "c"),
        ("client_secret", "s"),
        ("username", "u"),
        ("password", "hunter2"),
        ("credtype", "authtoken"),
        ("scope", "read"),
    ])
    .unwrap();
    assert_eq!(request.client.client_id.as_deref(), Some("c"));
    assert_eq!(
        request.client.client_secret.as_ref().map(Secret::expose),
        Some("s")
    );
    let Ok(GrantRequest::Password(password)) = &request.grant else {
        panic!("a password request");
    };
    assert_eq!(password.username, "u");
    assert_eq!(password.password.expose(), "hunter2");
    assert_eq!(password.credtype, CredentialType::AuthToken);
    assert_eq!(password.scope.as_deref(), Some("read"));
    // No credtype is a user's password.
    let Ok(GrantRequest::Password(default)) = token_request(&[
        ("grant_type", "password"),
        ("username", "u"),
        ("password", "p"),
    ])
    .unwrap()
    .grant
    else {
        panic!("a password request");
    };
    assert_eq!(default.credtype, CredentialType::Password);
}

#[test]
fn debug_never_shows_a_secret() {
    let request = TokenRequest::parse(
        [
            ("grant_type", "password"),
            ("client_secret", "body-secret"),
            ("username", "u"),
            ("password", "hunter2"),
        ],
        Some(Ok(BasicCredentials {
            id: "c".to_owned(),
            secret: Secret::new("basic-secret"),
        })),
    )
    .unwrap();
    let printed = format!("{request:?}");
    for secret in ["body-secret", "hunter2", "basic-secret"] {
        assert!(!printed.contains(secret), "{printed}");
    }
    let parameters = Parameters::from_pairs([("password", "hunter2")]).unwrap();
    assert!(!format!("{parameters:?}").contains("hunter2"));
}

#[test]
fn the_basic_header_travels_with_the_body_credentials() {
    let request = TokenRequest::parse(
        [("grant_type", "client_credentials"), ("client_id", "a")],
        Some(Err(ErrorCode::IncorrectClientSecret)),
    )
    .unwrap();
    assert!(request.client.via_basic());
    assert_eq!(request.client.client_id.as_deref(), Some("a"));
    assert!(!token_request(&[("grant_type", "client_credentials")])
        .unwrap()
        .client
        .via_basic());
}

#[test]
fn client_requests_read_the_client_then_their_own_parameters() {
    let request = PresentedTokenRequest::parse(
        [
            ("client_assertion_type", "t"),
            ("client_assertion", "jwt"),
            ("token", "tok"),
            ("token_type_hint", "refresh_token"),
        ],
        None,
    )
    .unwrap();
    assert!(request.client.presents_assertion());
    assert_eq!(
        request.request.token.as_ref().map(Secret::expose),
        Some("tok")
    );
    assert_eq!(
        request.request.token_type_hint.as_deref(),
        Some("refresh_token")
    );
    assert_eq!(
        OtpSendRequest::parse([("name", "a"), ("name", "b")], None).unwrap_err(),
        ErrorCode::UnsupportedRequestFormat
    );
    let body = ExchangeBody::parse([("token", "old"), ("secret", "")]).unwrap();
    assert!(body.secret.is_none());
}

#[test]
fn the_token_endpoint_documents_every_grant_parameter_none_required() {
    use utoipa::openapi::{RefOr, Schema};
    use utoipa::PartialSchema;

    let RefOr::T(Schema::Object(object)) = TokenRequest::schema() else {
        panic!("an object");
    };
    for name in [
        "grant_type",
        "client_id",
        "client_secret",
        "client_assertion_type",
        "client_assertion",
        "scope",
        "username",
        "password",
        "credtype",
        "refresh_token",
        "code",
        "redirect_uri",
        "code_verifier",
        "otp",
        "channel_type",
        "channel_handle",
    ] {
        assert!(object.properties.contains_key(name), "{name}");
    }
    assert!(!object.properties.contains_key("basic"));
    assert!(object.required.is_empty());
}
