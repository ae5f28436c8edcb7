//! Access tokens presented to this service's own resource endpoints (userinfo, connections):
//! `Authorization: Bearer` for bearer tokens, `Authorization: DPoP` with a proof for bound ones
//! (RFC 9449 §7.1).

use super::{check_request, DpopRequest, ProofDenial};
use crate::auth::{authenticate_access_token, verify_access_token, BearerDenial, BearerToken};
use crate::errors::{Denial, Refusal};
use crate::services::Services;

/// An access token and the scheme it came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential<'a> {
    /// `Authorization: Bearer`, or the `access_token` form field.
    Bearer(&'a str),
    /// `Authorization: DPoP`: a proof with the token's `ath` must come with it.
    Dpop(&'a str),
}

/// Why a presented token does not authenticate the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessDenial {
    /// No credential, or a bearer token refused: answered with a `Bearer` challenge.
    #[error("{0}")]
    Bearer(BearerDenial),
    /// The `DPoP` scheme with a token that is not valid or not bound: a `DPoP` challenge,
    /// `invalid_token`.
    #[error("{0}")]
    DpopToken(BearerDenial),
    /// The proof: a `DPoP` challenge, `invalid_dpop_proof` (or `use_dpop_nonce`).
    #[error("{0}")]
    Proof(ProofDenial),
}

impl Denial for AccessDenial {}

/// The credential of an `Authorization` header value; the scheme is case-insensitive
/// (RFC 9110 §11.1). `Err(Missing)` for another scheme.
pub fn credential(authorization: &str) -> Result<Credential<'_>, BearerDenial> {
    let value = authorization.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    let dpop = scheme.eq_ignore_ascii_case("dpop");
    if !dpop && !scheme.eq_ignore_ascii_case("bearer") {
        return Err(BearerDenial::Missing);
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(BearerDenial::MalformedHeader);
    }
    Ok(if dpop {
        Credential::Dpop(token)
    } else {
        Credential::Bearer(token)
    })
}

/// Authenticates the token: a bearer token must not be bound; a `DPoP` one must be bound to the
/// key of a valid proof for this request, whose `ath` is the token's hash.
pub async fn authenticate_credential(
    services: &Services,
    credential: Credential<'_>,
    request: &DpopRequest,
) -> Result<BearerToken, Refusal<AccessDenial>> {
    match credential {
        Credential::Bearer(token) => authenticate_access_token(services, token)
            .await
            .map_err(|e| e.map_denied(AccessDenial::Bearer)),
        Credential::Dpop(token) => {
            let bearer = verify_access_token(services, token)
                .await
                .map_err(|e| e.map_denied(AccessDenial::DpopToken))?;
            let Some(jkt) = bearer.record.jkt.clone() else {
                return Err(AccessDenial::DpopToken(BearerDenial::NotDpopBound).into());
            };
            if !request.is_present() {
                return Err(AccessDenial::Proof(ProofDenial::Missing).into());
            }
            let proof = check_request(services, request, Some(token))
                .await
                .map_err(|e| e.map_denied(AccessDenial::Proof))?
                .ok_or(AccessDenial::Proof(ProofDenial::Missing))?;
            if proof.jkt != jkt {
                return Err(AccessDenial::Proof(ProofDenial::WrongKey).into());
            }
            Ok(bearer)
        }
    }
}
