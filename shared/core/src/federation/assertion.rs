//! An identity assertion (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant §4.3) from a
//! company's OpenID Provider, checked before anything is read from it: `typ` exactly
//! `oauth-id-jag+jwt`, an asymmetric signature by a key of the issuer's JWKS (read as a
//! sign-in reads it, under the outbound rules), the issuer one of the IdPs added with
//! `--id-jag`, `aud` this service's issuer (one string), and a lifetime of at most 300 seconds
//! that has not ended. Which client, resource, scope and user it names is the grant's to judge.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use openidconnect::core::CoreJwsSigningAlgorithm;
use openidconnect::JsonWebKey as _;
use serde::Deserialize;
use serde_json::Value;

use super::oidc::{ALLOWED_ALGORITHMS, ISSUED_AT_LEEWAY_SECONDS};
use crate::clock::UnixTime;
use crate::domain::{AuthMethod, IdentityProvider, ID_JAG_MAX_LIFETIME_SECONDS, ID_JAG_TYP};
use crate::errors::ServerError;
use crate::idp_documents::Provider;
use crate::services::Services;

/// What a verified assertion says, as the grant reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct AssertionClaims {
    pub iss: String,
    pub sub: String,
    pub client_id: String,
    pub jti: String,
    pub iat: UnixTime,
    pub exp: UnixTime,
    /// A string, or (as RFC 8707 allows several) an array of them.
    #[serde(default)]
    pub resource: Option<Value>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub email_verified: Option<bool>,
    #[serde(default)]
    pub auth_time: Option<UnixTime>,
    #[serde(default)]
    pub amr: Option<Vec<String>>,
    aud: Value,
}

impl AssertionClaims {
    /// The methods the IdP reported that RFC 8176 names (others are left out).
    pub fn amr(&self) -> Vec<AuthMethod> {
        self.amr
            .iter()
            .flatten()
            .filter_map(|method| AuthMethod::parse(method))
            .collect()
    }

    /// The email, only when the IdP said it is verified (as at a sign-in).
    pub fn verified_email(&self) -> Option<&str> {
        self.email
            .as_deref()
            .filter(|_| self.email_verified == Some(true))
    }

    /// The resources named, as written; `None` when the claim is neither a string nor an
    /// array of strings.
    pub fn resources(&self) -> Option<Vec<String>> {
        match &self.resource {
            None => Some(Vec::new()),
            Some(Value::String(one)) => Some(vec![one.clone()]),
            Some(Value::Array(many)) => many
                .iter()
                .map(|value| value.as_str().map(str::to_owned))
                .collect(),
            Some(_) => None,
        }
    }
}

/// A verified assertion and the IdPs of its issuer that accept assertions, oldest first.
#[derive(Debug, Clone)]
pub struct VerifiedAssertion {
    pub claims: AssertionClaims,
    pub idps: Vec<IdentityProvider>,
}

/// Why an assertion was refused: a fixed word for the log, never what the assertion said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AssertionRefusal {
    #[error("not a compact JWS with readable claims")]
    Malformed,
    #[error("the typ is not oauth-id-jag+jwt")]
    Type,
    #[error("the algorithm is not an allowed asymmetric one")]
    Algorithm,
    #[error("no identity provider of this issuer accepts identity assertions")]
    UnknownIssuer,
    #[error("the issuer's metadata or keys could not be read")]
    IssuerUnavailable,
    #[error("no key of the issuer verifies the signature")]
    Signature,
    #[error("the audience is not this service's issuer alone")]
    Audience,
    #[error("the lifetime is longer than allowed, or the assertion is not yet valid")]
    Lifetime,
    #[error("the assertion has expired")]
    Expired,
}

#[derive(Deserialize)]
struct Header {
    alg: Value,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    kid: Option<String>,
}

/// The compact JWS's parts: header, claims, what was signed, the signature.
struct Parts<'a> {
    header: Header,
    claims: AssertionClaims,
    signed: &'a str,
    signature: Vec<u8>,
}

fn parts(token: &str) -> Result<Parts<'_>, AssertionRefusal> {
    let mut split = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (split.next(), split.next(), split.next(), split.next())
    else {
        return Err(AssertionRefusal::Malformed);
    };
    let decode = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| AssertionRefusal::Malformed)
    };
    let header: Header =
        serde_json::from_slice(&decode(header)?).map_err(|_| AssertionRefusal::Malformed)?;
    let claims: AssertionClaims =
        serde_json::from_slice(&decode(payload)?).map_err(|_| AssertionRefusal::Malformed)?;
    Ok(Parts {
        header,
        claims,
        signed: &token[..token.len() - signature.len() - 1],
        signature: decode(signature)?,
    })
}

/// Every check of an assertion presented to this service: `Ok(Err(..))` for an assertion that
/// is not good, `Err` only for our own store's failure.
pub async fn verify(
    services: &Services,
    token: &str,
    now: UnixTime,
) -> Result<Result<VerifiedAssertion, AssertionRefusal>, ServerError> {
    let parts = match parts(token) {
        Ok(parts) => parts,
        Err(refusal) => return Ok(Err(refusal)),
    };
    // Exactly the draft's type: an ID token or access token of the same issuer is not one.
    if parts.header.typ.as_deref() != Some(ID_JAG_TYP) {
        return Ok(Err(AssertionRefusal::Type));
    }
    let Some(alg) = serde_json::from_value::<CoreJwsSigningAlgorithm>(parts.header.alg.clone())
        .ok()
        .filter(|alg| ALLOWED_ALGORITHMS.contains(alg))
    else {
        return Ok(Err(AssertionRefusal::Algorithm));
    };
    // The issuer is read unverified only to find its keys; nothing else is used before the
    // signature holds.
    let issuer = parts.claims.iss.clone();
    let idps = services
        .ctx
        .store
        .federation()
        .identity_providers_for_issuer(&issuer)
        .await?;
    if idps.is_empty() {
        return Ok(Err(AssertionRefusal::UnknownIssuer));
    }
    let providers = &services.upstream;
    let Ok(provider) = providers.get(&issuer, now).await else {
        return Ok(Err(AssertionRefusal::IssuerUnavailable));
    };
    if !signed_by(&provider, &parts, &alg) {
        // Perhaps a key the IdP rolled to since we read its keys: read them again, once.
        let renewed = match providers.with_new_keys(&issuer, now).await {
            Ok(Some(renewed)) => renewed,
            Ok(None) => return Ok(Err(AssertionRefusal::Signature)),
            Err(_) => return Ok(Err(AssertionRefusal::IssuerUnavailable)),
        };
        if !signed_by(&renewed, &parts, &alg) {
            return Ok(Err(AssertionRefusal::Signature));
        }
    }
    let claims = parts.claims;
    if claims.aud.as_str() != Some(services.codec.issuer().as_str()) {
        return Ok(Err(AssertionRefusal::Audience));
    }
    if claims.exp - claims.iat > ID_JAG_MAX_LIFETIME_SECONDS
        || claims.iat > now + ISSUED_AT_LEEWAY_SECONDS
    {
        return Ok(Err(AssertionRefusal::Lifetime));
    }
    if claims.exp <= now {
        return Ok(Err(AssertionRefusal::Expired));
    }
    Ok(Ok(VerifiedAssertion { claims, idps }))
}

/// Whether a key of `provider` (the one the header's `kid` names, or any without one) verifies
/// the signature in the header's algorithm.
fn signed_by(provider: &Provider, parts: &Parts<'_>, alg: &CoreJwsSigningAlgorithm) -> bool {
    let kid = parts.header.kid.as_deref();
    provider
        .keys
        .keys()
        .iter()
        .filter(|key| kid.is_none_or(|kid| key.key_id().is_some_and(|id| **id == *kid)))
        .any(|key| {
            key.verify_signature(alg, parts.signed.as_bytes(), &parts.signature)
                .is_ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
    }

    #[test]
    fn the_parts_are_read_strictly() {
        let header = encoded(&serde_json::json!({ "alg": "ES256", "typ": ID_JAG_TYP }));
        let claims = encoded(&serde_json::json!({
            "iss": "https://idp.example", "sub": "u", "aud": "https://as.example",
            "client_id": "c", "jti": "j", "iat": 1, "exp": 2,
            "resource": ["https://a.example", "https://b.example"],
        }));
        let token = format!("{header}.{claims}.c2ln");
        let read = parts(&token).map_err(|_| ()).unwrap();
        assert_eq!(read.signed, format!("{header}.{claims}"));
        assert_eq!(read.signature, b"sig");
        assert_eq!(
            read.claims.resources().unwrap(),
            ["https://a.example", "https://b.example"]
        );
        for bad in [
            format!("{header}.{claims}"),
            format!("{header}.{claims}.c2ln.x"),
            format!("{header}.bm90IGpzb24.c2ln"),
            format!(
                "{header}.{}.c2ln",
                encoded(&serde_json::json!({ "iss": "x" }))
            ),
        ] {
            assert_eq!(
                parts(&bad).err(),
                Some(AssertionRefusal::Malformed),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_email_counts_only_verified_and_unknown_methods_are_left_out() {
        let claims: AssertionClaims = serde_json::from_value(serde_json::json!({
            "iss": "i", "sub": "s", "aud": "a", "client_id": "c", "jti": "j", "iat": 1,
            "exp": 2, "email": "ann@acme.example", "amr": ["pwd", "made-up", "mfa"],
            "resource": 7,
        }))
        .unwrap();
        assert_eq!(claims.verified_email(), None);
        assert_eq!(claims.amr(), [AuthMethod::Pwd, AuthMethod::Mfa]);
        assert_eq!(claims.resources(), None, "a number is no resource");
        let verified = AssertionClaims {
            email_verified: Some(true),
            ..claims
        };
        assert_eq!(verified.verified_email(), Some("ann@acme.example"));
    }
}
