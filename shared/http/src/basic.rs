//! HTTP Basic client authentication (RFC 6749 §2.3.1): the `Authorization: Basic` header decoded
//! for `token_core::requests::PresentedClient`, and the `WWW-Authenticate: Basic` challenge on
//! the refusals of a client that sent it (RFC 6749 §5.2).

use axum::response::Response;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http::{header, HeaderMap, HeaderValue, StatusCode};

use crate::errors::ErrorCode;
use crate::requests::BasicCredentials;
use crate::secrets::Secret;

/// `None` when the request has no `Authorization: Basic` header; `Some(Err(64))` when it has
/// one that does not decode, which client authentication answers in its turn.
pub fn basic_credentials(headers: &HeaderMap) -> Option<Result<BasicCredentials, ErrorCode>> {
    let header = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, value) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    Some(decode_basic(value.trim()).ok_or(ErrorCode::IncorrectClientSecret))
}

fn decode_basic(value: &str) -> Option<BasicCredentials> {
    let decoded = String::from_utf8(STANDARD.decode(value).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    // RFC 6749 §2.3.1: both halves are form-urlencoded before being joined.
    Some(BasicCredentials {
        id: form_decode(id)?,
        secret: Secret::new(form_decode(secret)?),
    })
}

fn form_decode(text: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&format!("v={text}")).ok()?;
    pairs
        .into_iter()
        .next()
        .map(|(_, v)| v)
        .or(Some(String::new()))
}

/// `response`, with `WWW-Authenticate: Basic` if it refuses with `invalid_client` a request that
/// sent HTTP Basic (well-formed or not), whichever check refused it. In the catalogue 401 is
/// `invalid_client` and nothing else, and the endpoints that authenticate their client answer no
/// other 401, so the status says it.
pub fn with_basic_challenge(mut response: Response, sent_basic: bool) -> Response {
    if sent_basic && response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"token\", charset=\"UTF-8\""),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;

    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(authorization).unwrap(),
        );
        headers
    }

    fn basic(id: &str, secret: &str) -> HeaderMap {
        headers(&format!(
            "Basic {}",
            STANDARD.encode(format!("{id}:{secret}"))
        ))
    }

    #[test]
    fn basic_is_decoded_with_form_encoding() {
        let credentials = basic_credentials(&basic("my%20id", "s%3Acret+x"))
            .unwrap()
            .unwrap();
        assert_eq!(credentials.id, "my id");
        assert_eq!(credentials.secret.expose(), "s:cret x");
    }

    #[test]
    fn an_empty_half_is_kept_empty() {
        let credentials = basic_credentials(&basic("a", "")).unwrap().unwrap();
        assert_eq!(credentials.id, "a");
        assert!(credentials.secret.is_empty());
    }

    #[test]
    fn other_schemes_are_ignored_and_garbage_is_refused() {
        assert!(basic_credentials(&HeaderMap::new()).is_none());
        assert!(basic_credentials(&headers("Bearer abc")).is_none());
        assert_eq!(
            basic_credentials(&headers("Basic !!!"))
                .unwrap()
                .unwrap_err(),
            ErrorCode::IncorrectClientSecret
        );
    }

    #[test]
    fn only_a_401_to_a_basic_request_is_challenged() {
        let challenged = |status: StatusCode, sent_basic: bool| {
            with_basic_challenge(status.into_response(), sent_basic)
                .headers()
                .contains_key(header::WWW_AUTHENTICATE)
        };
        assert!(challenged(StatusCode::UNAUTHORIZED, true));
        assert!(!challenged(StatusCode::UNAUTHORIZED, false));
        assert!(!challenged(StatusCode::FORBIDDEN, true));
        assert!(!challenged(StatusCode::BAD_REQUEST, true));
    }
}
