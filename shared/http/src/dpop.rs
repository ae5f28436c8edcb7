//! DPoP (RFC 9449) at the HTTP edge: the `DPoP` header fields a request carries, the server
//! nonce answered in `DPoP-Nonce`, and the `DPoP` challenge of the resource endpoints.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::response::Response;
use http::request::Parts;
use http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};

use super::error_response::http_error_response;
use crate::auth::dpop::{current_nonce, nonce_key, AccessDenial, DpopRequest, ProofDenial};
use crate::services::Services;

/// RFC 9449 §4.1.
pub const DPOP: &str = "dpop";
/// RFC 9449 §8.1.
pub const DPOP_NONCE: &str = "dpop-nonce";

/// The algorithms a `DPoP` challenge names (RFC 9449 §7.1 `algs`).
const ALGS: &str = "ES256 PS256 EdDSA";

/// The request's proofs, method and path. A field that is not visible ASCII counts as a proof
/// all the same, so that it is refused rather than ignored.
pub fn dpop_request(headers: &HeaderMap, method: &Method, uri: &Uri) -> DpopRequest {
    DpopRequest {
        proofs: headers
            .get_all(DPOP)
            .iter()
            .map(|value| value.to_str().unwrap_or_default().to_owned())
            .collect(),
        method: method.as_str().to_owned(),
        path: uri.path().to_owned(),
    }
}

/// A handler that checks proofs takes the request's DPoP fields as an argument (`Dpop(dpop)`),
/// read as [`dpop_request`] reads them. A type of this crate, since the protocol layer's
/// [`DpopRequest`] cannot implement axum's extractor trait.
#[derive(Debug)]
pub struct Dpop(pub DpopRequest);

impl<S: Send + Sync> FromRequestParts<S> for Dpop {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(Self(dpop_request(
            &parts.headers,
            &parts.method,
            &parts.uri,
        )))
    }
}

/// With `DPOP_NONCE=on`, every answer of an endpoint that checks proofs carries the current
/// nonce (RFC 9449 §8.2), so a client need not fail once to learn the next one.
/// Without a key ring read yet (the read failed, and the answer is that 503), no nonce.
pub async fn with_nonce(services: &Services, mut response: Response) -> Response {
    if services.policy.dpop_nonce {
        if let Ok(key) = nonce_key(services).await {
            let nonce = current_nonce(&key, services.ctx.clock.now());
            if let Ok(value) = HeaderValue::from_str(&nonce) {
                response.headers_mut().insert(DPOP_NONCE, value);
            }
        }
    }
    response
}

/// `WWW-Authenticate: DPoP` (RFC 9449 §7.1) for a refusal of the `DPoP` scheme.
pub fn dpop_challenge(realm: &str, error: Option<&str>) -> HeaderValue {
    let value = match error {
        Some(error) => format!("DPoP realm=\"{realm}\", error=\"{error}\", algs=\"{ALGS}\""),
        None => format!("DPoP realm=\"{realm}\", algs=\"{ALGS}\""),
    };
    HeaderValue::from_str(&value).expect("an ASCII header value")
}

/// The `error` of a proof's refusal at a resource endpoint.
pub fn proof_error(denial: &ProofDenial) -> &'static str {
    match denial {
        ProofDenial::NonceRequired => "use_dpop_nonce",
        _ => "invalid_dpop_proof",
    }
}

/// 401 with a `DPoP` challenge (RFC 9449 §7.1): a resource endpoint's refusal of the `DPoP`
/// scheme, its token or its proof.
pub fn dpop_refusal(denial: &AccessDenial, realm: &str) -> Response {
    tracing::info!(%denial, realm, "DPoP-bound access token refused");
    let (error, description) = match denial {
        AccessDenial::Proof(proof) => (
            proof_error(proof),
            "The DPoP proof is missing, invalid, replayed, or not by the token's key.",
        ),
        AccessDenial::Bearer(_) | AccessDenial::DpopToken(_) => (
            "invalid_token",
            "The access token is missing, invalid, expired, revoked or not DPoP-bound.",
        ),
    };
    let mut response = http_error_response(StatusCode::UNAUTHORIZED, error, description);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, dpop_challenge(realm, Some(error)));
    response
}
