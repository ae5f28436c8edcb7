//! A resource endpoint's refusal of a bearer token (RFC 6750 §3): 401 `invalid_token` with the
//! endpoint's `Bearer` challenge.

use axum::response::Response;
use http::{header, HeaderValue, StatusCode};

use super::dpop::dpop_challenge;
use super::error_response::http_error_response;
use crate::auth::BearerDenial;

/// `WWW-Authenticate: Bearer` for `realm`. RFC 6750 §3.1: a request without bearer
/// credentials (`no_credentials`) is told only the scheme, without an error.
pub fn bearer_challenge(realm: &str, no_credentials: bool) -> HeaderValue {
    let value = if no_credentials {
        format!("Bearer realm=\"{realm}\"")
    } else {
        format!("Bearer realm=\"{realm}\", error=\"invalid_token\"")
    };
    HeaderValue::from_str(&value).expect("an ASCII header value")
}

/// 401 `invalid_token` in the OAuth error shape, with the `Bearer` challenge; where the endpoint
/// also takes the `DPoP` scheme (`accepts_dpop`), a DPoP-bound token sent as a bearer token is
/// told that scheme too (RFC 9449 §7.2).
pub fn bearer_refusal(realm: &str, denial: BearerDenial, accepts_dpop: bool) -> Response {
    tracing::info!(%denial, realm, "bearer token refused");
    let mut response = http_error_response(
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "The bearer access token is missing, invalid or expired.",
    );
    let headers = response.headers_mut();
    let no_credentials = denial == BearerDenial::Missing;
    headers.insert(
        header::WWW_AUTHENTICATE,
        bearer_challenge(realm, no_credentials),
    );
    if accepts_dpop && denial == BearerDenial::DpopBound {
        headers.append(header::WWW_AUTHENTICATE, dpop_challenge(realm, None));
    }
    response
}
