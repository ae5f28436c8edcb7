//! `private_key_jwt` client authentication (RFC 7523 §2.2 and §3, OpenID Connect Core §9): the
//! client signs a short-lived JWT with a key whose public half it registered
//! (`tokenctl clients set-jwks`), and presents it as `client_assertion`.
//!
//! Order (docs/decisions.md, "Client authentication with private_key_jwt"): the client is
//! looked up by the assertion's unverified `iss`, the signature is verified with its registered
//! keys, the claims are checked against the clock, and only then is the `jti` marked used, so
//! that nobody without the client's key can burn one of its `jti`s. Every refusal is code 63
//! (`invalid_client`) and writes nothing; the replay mark is the only write, and only a valid
//! assertion makes it.

use serde::Deserialize;
use serde_json::Value;

use crate::clock::UnixTime;
use crate::domain::audit::AuthenticationFailure;
use crate::domain::Client;
use crate::errors::{ErrorCode, GrantError};
use crate::jose::{self, NumericDate, PublicJwkSet};
use crate::requests::PresentedClient;
use crate::services::Services;
use crate::store::ReplayKey;

/// RFC 7523 §2.2's `client_assertion_type`.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// `exp` may be at most this far ahead: an assertion is made for one request.
pub const MAX_LIFETIME_SECONDS: i64 = 300;

/// How far the client's clock may run ahead of ours (`exp`, `iat`, `nbf`).
pub const CLOCK_SKEW_SECONDS: i64 = 30;

/// The replay store's kind for client assertions; the scope is the client id.
pub const REPLAY_KIND: &str = "client-assertion";

/// Longer `jti`s are refused: the digest is what is stored, but the claim is read and hashed.
const MAX_JTI_LEN: usize = 256;

/// The endpoints that accept client authentication, relative to the issuer: an assertion's
/// `aud` may be the issuer or any of their URLs (RFC 7523 §3 item 3; OpenID Connect Core §9
/// recommends the token endpoint's URL). `http` checks this list against its routes.
pub const AUDIENCE_PATHS: &[&str] = &[
    "/oauth2/v0/token",
    "/v0/token",
    "/oauth2/v0/revoke",
    "/oauth2/v0/introspect",
    "/oauth2/v0/otp",
    "/oauth2/v0/device_authorization",
    "/oauth2/v0/par",
];

/// The claims RFC 7523 §3 requires, plus the optional times.
#[derive(Debug, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: Audience,
    exp: NumericDate,
    iat: Option<NumericDate>,
    nbf: Option<NumericDate>,
    jti: String,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    /// One audience, and one of ours. An array naming several audiences is refused even when one
    /// of them is ours (the audience-injection attacks on `private_key_jwt`: an assertion a
    /// client made for several servers, or for another server's endpoint, must not be replayable
    /// here); an array of one member is that member.
    fn names(&self, accepted: &[String]) -> bool {
        match self {
            Self::One(aud) => accepted.contains(aud),
            Self::Many(auds) => matches!(&auds[..], [aud] if accepted.contains(aud)),
        }
    }
}

/// Only the issuer, to find the client whose keys may verify the assertion.
#[derive(Debug, Deserialize)]
struct Named {
    iss: Option<Value>,
}

/// Why an assertion was refused, for the log (never the assertion itself).
type Reason = &'static str;

/// Authenticates the client that signed `client_assertion`, or refuses with code 63 (HTTP adds
/// `WWW-Authenticate: Basic` when HTTP Basic was sent beside it).
pub(super) async fn authenticate(
    services: &Services,
    presented: &PresentedClient,
) -> Result<Client, GrantError> {
    match authenticate_or_say_why(services, presented).await {
        Ok(client) => Ok(client),
        Err(Refused::Because(reason)) => {
            tracing::info!(reason, "client assertion refused");
            Err(ErrorCode::ClientAssertionInvalid.into())
        }
        Err(Refused::Grant(error)) => Err(error),
    }
}

enum Refused {
    Because(Reason),
    Grant(GrantError),
}

impl From<Reason> for Refused {
    fn from(reason: Reason) -> Self {
        Self::Because(reason)
    }
}

impl From<GrantError> for Refused {
    fn from(error: GrantError) -> Self {
        Self::Grant(error)
    }
}

impl From<crate::store::StoreError> for Refused {
    fn from(error: crate::store::StoreError) -> Self {
        Self::Grant(error.into())
    }
}

/// A document client's fetch past its address's limit: the limit's 429, not a bad assertion.
impl From<crate::limits::LimitError> for Refused {
    fn from(error: crate::limits::LimitError) -> Self {
        Self::Grant(error.into())
    }
}

async fn authenticate_or_say_why(
    services: &Services,
    presented: &PresentedClient,
) -> Result<Client, Refused> {
    // RFC 6749 §2.3: one authentication method per request.
    if presented.via_basic() || presented.client_secret.is_some() {
        return Err("a client secret was sent as well".into());
    }
    if presented.client_assertion_type.as_deref() != Some(ASSERTION_TYPE) {
        return Err("client_assertion_type is not jwt-bearer".into());
    }
    let assertion = presented
        .client_assertion
        .as_ref()
        .ok_or("no client_assertion")?;
    let token = assertion.expose();
    let header = jose::decode_header(token).map_err(|_| "unreadable header or algorithm")?;
    if is_typed_as_a_request_object(header.typ.as_deref()) {
        return Err("typ is a request object's".into());
    }
    let named: Named = jose::unverified_claims(token).map_err(|_| "unreadable claims")?;
    let Some(Value::String(iss)) = named.iss else {
        return Err("no iss".into());
    };
    // OpenID Connect Core §9: client_id, when sent, names the same client.
    if presented.client_id.as_deref().is_some_and(|id| id != iss) {
        return Err("client_id differs from iss".into());
    }
    // A registered client's UUID, or a client ID metadata document's URL.
    let client = services
        .named_client(&iss, || Refused::from("unknown client"))
        .await?;
    let now = services.ctx.clock.now();
    let published = match (&client.jwks, &client.registration) {
        (None, Some(registration)) => match registration.jwks_uri.as_deref() {
            Some(uri) => (services.client_keys)
                .for_kid(uri, header.kid.as_deref(), now)
                .await
                .ok(),
            None => None,
        },
        _ => None,
    };
    let checked = client
        .jwks
        .as_ref()
        .or(published.as_ref().map(|kept| &kept.keys))
        .ok_or("no JWK Set registered, or its jwks_uri could not be read")
        .and_then(|keys| verified_claims(token, &header, keys))
        .and_then(|claims| {
            check_claims(&claims, &iss, &accepted_audiences(services, &client), now)?;
            if client.is_fapi2() && matches!(claims.aud, Audience::Many(_)) {
                return Err("aud must be the issuer, as a string");
            }
            Ok(claims)
        });
    let claims = match checked {
        Ok(claims) => claims,
        Err(reason) => {
            let failure = AuthenticationFailure::InvalidAssertion;
            crate::audit::authentication_failed(&services.ctx, client.id, failure).await;
            return Err(reason.into());
        }
    };
    // Only an authenticated client learns that it is disabled; nothing is written for it.
    if !client.enabled {
        return Err(GrantError::from(ErrorCode::ClientDisabled).into());
    }
    let key = ReplayKey::new(REPLAY_KIND, &iss, &claims.jti);
    if !services
        .ctx
        .store
        .replays()
        .first_use(&key, claims.exp.0, now)
        .await?
    {
        return Err("jti already used".into());
    }
    Ok(client)
}

/// RFC 9101 §10.8's media type of a request object (`oauth-authz-req+jwt`, with or without the
/// `application/` prefix, case-insensitively): such a JWT is never a client assertion.
pub fn is_typed_as_a_request_object(typ: Option<&str>) -> bool {
    typ.is_some_and(|typ| {
        let typ = typ.to_ascii_lowercase();
        typ.strip_prefix("application/").unwrap_or(&typ) == "oauth-authz-req+jwt"
    })
}

/// The media type of a client assertion (draft-ietf-oauth-rfc7523bis): such a JWT is never a
/// request object.
pub fn is_typed_as_an_assertion(typ: Option<&str>) -> bool {
    typ.is_some_and(|typ| {
        let typ = typ.to_ascii_lowercase();
        typ.strip_prefix("application/").unwrap_or(&typ) == "client-authentication+jwt"
    })
}

/// Authorization parameters no client assertion carries: a JWT holding one is a request
/// object (signed with the same keys, and carried in a browser's URL), not an assertion.
const REQUEST_OBJECT_CLAIMS: &[&str] = &["response_type", "redirect_uri"];

/// The claims, once one of the client's keys verifies the signature. Without a `kid` each key
/// of the header's algorithm is tried (a set holds at most a few).
fn verified_claims(
    token: &str,
    header: &jose::JoseHeader,
    keys: &PublicJwkSet,
) -> Result<Claims, Reason> {
    let payload: Value = keys
        .candidates(header.kid.as_deref())
        .filter(|key| key.algorithm() == header.alg)
        .find_map(|key| jose::verify(token, key).ok())
        .ok_or("no registered key verifies the signature")?;
    if REQUEST_OBJECT_CLAIMS
        .iter()
        .any(|name| payload.get(name).is_some())
    {
        return Err("the claims are a request object's (response_type or redirect_uri)");
    }
    serde_json::from_value(payload).map_err(|_| "a required claim is missing or mistyped")
}

/// The issuer and its endpoints; for a FAPI 2.0 client the issuer alone (FAPI 2.0 Security
/// Profile §5.3.2.1: the issuer identifier as a string, so that no assertion made for one
/// endpoint, or for several audiences, is taken).
fn accepted_audiences(services: &Services, client: &Client) -> Vec<String> {
    let issuer = services.geolocation().as_str();
    let endpoints = AUDIENCE_PATHS
        .iter()
        .filter(|_| !client.is_fapi2())
        .map(|path| format!("{issuer}{path}"));
    std::iter::once(issuer.to_owned())
        .chain(endpoints)
        .collect()
}

fn check_claims(
    claims: &Claims,
    client_id: &str,
    audiences: &[String],
    now: UnixTime,
) -> Result<(), Reason> {
    if claims.iss != client_id || claims.sub != client_id {
        return Err("iss and sub must both be the client id");
    }
    if !claims.aud.names(audiences) {
        return Err("aud names neither the issuer nor an endpoint");
    }
    let NumericDate(exp) = claims.exp;
    if exp <= now {
        return Err("expired");
    }
    if exp > now + MAX_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS {
        return Err("exp more than 5 minutes ahead");
    }
    if claims
        .iat
        .is_some_and(|NumericDate(iat)| iat > now + CLOCK_SKEW_SECONDS)
    {
        return Err("iat in the future");
    }
    if claims
        .nbf
        .is_some_and(|NumericDate(nbf)| nbf > now + CLOCK_SKEW_SECONDS)
    {
        return Err("not yet valid (nbf)");
    }
    if claims.jti.is_empty() || claims.jti.len() > MAX_JTI_LEN {
        return Err("jti empty or too long");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: &str = "6f1c2a9e-64b5-4c5e-9a43-6f0d1f3f1a10";
    const NOW: UnixTime = 1_800_000_000;

    fn audiences() -> Vec<String> {
        vec![
            "https://us.example.com".into(),
            "https://us.example.com/oauth2/v0/token".into(),
        ]
    }

    fn claims(changes: &[(&str, Value)]) -> Claims {
        let mut claims = serde_json::json!({
            "iss": CLIENT, "sub": CLIENT, "aud": "https://us.example.com/oauth2/v0/token",
            "exp": NOW + 60, "iat": NOW, "jti": "j-1",
        });
        for (name, value) in changes {
            claims[*name] = value.clone();
        }
        serde_json::from_value(claims).unwrap()
    }

    fn check(changes: &[(&str, Value)]) -> Result<(), Reason> {
        check_claims(&claims(changes), CLIENT, &audiences(), NOW)
    }

    #[test]
    fn a_fresh_assertion_for_this_server_passes() {
        assert_eq!(check(&[]), Ok(()));
        assert_eq!(check(&[("aud", "https://us.example.com".into())]), Ok(()));
        assert_eq!(
            check(&[("aud", serde_json::json!(["https://us.example.com"]))]),
            Ok(())
        );
        assert_eq!(
            check(&[("exp", (NOW + MAX_LIFETIME_SECONDS).into())]),
            Ok(())
        );
    }

    #[test]
    fn each_claim_is_checked() {
        for (changes, reason) in [
            (vec![("iss", Value::from("other"))], "iss and sub"),
            (vec![("sub", "other".into())], "iss and sub"),
            (vec![("aud", "https://eu.example.com".into())], "aud"),
            (vec![("aud", serde_json::json!([]))], "aud"),
            (
                vec![(
                    "aud",
                    serde_json::json!(["https://attacker.example", "https://us.example.com"]),
                )],
                "aud",
            ),
            (vec![("exp", NOW.into())], "expired"),
            (
                vec![(
                    "exp",
                    (NOW + MAX_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS + 1).into(),
                )],
                "exp more",
            ),
            (vec![("iat", (NOW + 31).into())], "iat"),
            (vec![("nbf", (NOW + 31).into())], "nbf"),
            (vec![("jti", "".into())], "jti"),
            (vec![("jti", "x".repeat(257).into())], "jti"),
        ] {
            let refused = check(&changes).unwrap_err();
            assert!(refused.contains(reason), "{changes:?}: {refused}");
        }
    }

    #[test]
    fn fractional_times_count_in_whole_seconds() {
        // RFC 7519 §2: a NumericDate may be non-integer.
        assert_eq!(
            check(&[
                ("exp", (NOW as f64 + 60.5).into()),
                ("iat", (NOW as f64 + 0.25).into())
            ]),
            Ok(())
        );
        let refused = check(&[("exp", (NOW as f64 + 0.9).into())]).unwrap_err();
        assert!(refused.contains("expired"), "{refused}");
        for bad in [Value::from("soon"), Value::Null, serde_json::json!(1e300)] {
            let mut claims = serde_json::json!({
                "iss": CLIENT, "sub": CLIENT, "aud": "a", "jti": "j",
            });
            claims["exp"] = bad.clone();
            assert!(serde_json::from_value::<Claims>(claims).is_err(), "{bad}");
        }
    }

    #[test]
    fn claims_without_exp_or_jti_do_not_parse() {
        for missing in ["exp", "jti", "aud", "iss", "sub"] {
            let mut claims = serde_json::json!({
                "iss": CLIENT, "sub": CLIENT, "aud": "a", "exp": NOW, "jti": "j",
            });
            claims.as_object_mut().unwrap().remove(missing);
            assert!(
                serde_json::from_value::<Claims>(claims).is_err(),
                "{missing}"
            );
        }
    }
}
