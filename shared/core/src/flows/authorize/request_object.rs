//! Request objects (RFC 9101; docs/decisions.md, "Pushed authorization requests and request
//! objects"): the authorization request's parameters as the claims of a JWT the client signed
//! with a key of its registered JWK Set, the same keys and algorithms as its `private_key_jwt`
//! assertions (ES256, PS256, EdDSA: `none` and HS* never verify, `jose::decode_header` refuses
//! them). A verified object's claims replace the request's parameters.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::auth::client_assertion::{is_typed_as_an_assertion, CLOCK_SKEW_SECONDS};
use crate::clock::UnixTime;
use crate::domain::Client;
use crate::jose::{self, NumericDate};

/// `exp` may be at most this far ahead: 60 minutes.
pub const REQUEST_OBJECT_MAX_LIFETIME_SECONDS: i64 = 3600;

/// Claims of the JWT itself, never authorization parameters.
const JWT_CLAIMS: &[&str] = &["iss", "aud", "exp", "nbf", "iat", "jti", "sub"];

/// Why an object was refused, for the log (never the object itself). Every reason is answered
/// with the one code 177.
pub type Reason = &'static str;

#[derive(Debug, Deserialize)]
struct Times {
    exp: Option<NumericDate>,
    nbf: Option<NumericDate>,
}

/// The authorization parameters that `request`, sent by or for `client`, stands for: its claims
/// but the JWT's own, each a string (numbers and booleans as JSON writes them; arrays and
/// objects are no parameters this endpoint reads and are left out). `issuer` is this
/// deployment's, the only accepted `aud`.
pub fn verify_request_object(
    request: &str,
    client: &Client,
    issuer: &str,
    now: UnixTime,
) -> Result<BTreeMap<String, String>, Reason> {
    let header = jose::decode_header(request).map_err(|_| "unreadable header or algorithm")?;
    // Part 13: a client assertion (signed with the same keys) is never a request object.
    if is_typed_as_an_assertion(header.typ.as_deref()) {
        return Err("typ is a client assertion's");
    }
    let keys = client.jwks.as_ref().ok_or("no JWK Set registered")?;
    let claims: Value = keys
        .candidates(header.kid.as_deref())
        .filter(|key| key.algorithm() == header.alg)
        .find_map(|key| jose::verify(request, key).ok())
        .ok_or("no registered key verifies the signature")?;
    let Value::Object(claims) = claims else {
        return Err("the claims are not an object");
    };
    let client_id = client.wire_id();
    if claims.get("iss").and_then(Value::as_str) != Some(client_id.as_str()) {
        return Err("iss is not the client id");
    }
    // An assertion's `sub` is the client id (RFC 7523 §3); a request object's never is.
    if claims.get("sub").and_then(Value::as_str) == Some(client_id.as_str()) {
        return Err("sub is the client id: an assertion, not a request object");
    }
    if !names_issuer(claims.get("aud"), issuer) {
        return Err("aud is not the issuer");
    }
    let times: Times = serde_json::from_value(Value::Object(claims.clone()))
        .map_err(|_| "exp or nbf is not a number")?;
    let NumericDate(exp) = times.exp.ok_or("no exp")?;
    if exp <= now {
        return Err("expired");
    }
    if exp > now + REQUEST_OBJECT_MAX_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS {
        return Err("exp more than 60 minutes ahead");
    }
    if times
        .nbf
        .is_some_and(|NumericDate(nbf)| nbf > now + CLOCK_SKEW_SECONDS)
    {
        return Err("not yet valid (nbf)");
    }
    // RFC 9101 §4: an object names no other object.
    if claims.contains_key("request") || claims.contains_key("request_uri") {
        return Err("the object holds request or request_uri");
    }
    if claims
        .get("client_id")
        .is_some_and(|id| id.as_str() != Some(client_id.as_str()))
    {
        return Err("client_id differs from the client's");
    }
    Ok(claims
        .into_iter()
        .filter(|(name, _)| !JWT_CLAIMS.contains(&name.as_str()))
        .filter_map(|(name, value)| match value {
            Value::String(text) => Some((name, text)),
            Value::Number(number) => Some((name, number.to_string())),
            Value::Bool(flag) => Some((name, flag.to_string())),
            _ => None,
        })
        .collect())
}

/// One audience, the issuer: a string, or an array of that one string.
fn names_issuer(aud: Option<&Value>, issuer: &str) -> bool {
    match aud {
        Some(Value::String(aud)) => aud == issuer,
        Some(Value::Array(auds)) => matches!(&auds[..], [Value::String(aud)] if aud == issuer),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_issuer_alone_is_an_audience() {
        let issuer = "https://us.example.com";
        assert!(names_issuer(Some(&json!(issuer)), issuer));
        assert!(names_issuer(Some(&json!([issuer])), issuer));
        for other in [
            json!("https://us.example.com/oauth2/v0/token"),
            json!([issuer, "https://attacker.example"]),
            json!([]),
            json!(1),
        ] {
            assert!(!names_issuer(Some(&other), issuer), "{other}");
        }
        assert!(!names_issuer(None, issuer));
    }
}
