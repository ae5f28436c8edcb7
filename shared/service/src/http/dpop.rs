//! DPoP (RFC 9449) at the HTTP edge: the `DPoP` header fields a request carries, the server
//! nonce answered in `DPoP-Nonce`, and the `DPoP` challenge of the resource endpoints.

use axum::response::Response;
use http::{HeaderMap, HeaderValue, Method, Uri};

use crate::flows::dpop::{current_nonce, DpopRequest, ProofDenial};
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

/// With `DPOP_NONCE=on`, every answer of an endpoint that checks proofs carries the current
/// nonce (RFC 9449 §8.2), so a client need not fail once to learn the next one.
pub fn with_nonce(services: &Services, mut response: Response) -> Response {
    if services.policy.dpop_nonce {
        let nonce = current_nonce(services, services.ctx.clock.now());
        if let Ok(value) = HeaderValue::from_str(&nonce) {
            response.headers_mut().insert(DPOP_NONCE, value);
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
