//! OpenID Connect Back-Channel Logout 1.0 logout tokens (§2.4), signed with the ID tokens' keys,
//! so that a relying party verifies them with the JWK Set it already uses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::AccessTokenCodec;
use crate::clock::UnixTime;
use crate::domain::{ClientId, PrincipalId, SessionId, TokenId};
use crate::signing::SigningError;

/// The `typ` header of logout tokens (§2.4; the `application/` prefix omitted, RFC 7515 §4.1.9).
pub const LOGOUT_TOKEN_TYP: &str = "logout+jwt";

/// The one member of `events` (§2.4).
pub const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// A logout token is valid this long: deliveries, retries included, happen within it (§4:
/// short-lived, two minutes suggested).
pub const LOGOUT_TOKEN_TTL_SECONDS: i64 = 120;

/// §2.4's claims: there is no `nonce`, which the specification forbids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogoutTokenClaims {
    pub iss: String,
    /// The client being told.
    pub aud: String,
    pub iat: UnixTime,
    pub exp: UnixTime,
    /// Unique per token, so that a relying party can refuse a replay.
    pub jti: String,
    /// The principal whose session ended, as in ID tokens.
    pub sub: String,
    /// The session that ended, as ID tokens issued in it carry it.
    pub sid: String,
    /// `{"http://schemas.openid.net/event/backchannel-logout": {}}`.
    pub events: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

impl AccessTokenCodec {
    /// The logout token telling `client` that `principal`'s session `sid` ended at `now`.
    pub async fn encode_logout_token(
        &self,
        client: &ClientId,
        principal: &PrincipalId,
        sid: &SessionId,
        jti: TokenId,
        now: UnixTime,
    ) -> Result<String, SigningError> {
        let claims = LogoutTokenClaims {
            iss: self.issuer.to_string(),
            aud: client.to_string(),
            iat: now,
            exp: now + LOGOUT_TOKEN_TTL_SECONDS,
            jti: jti.to_string(),
            sub: principal.to_string(),
            sid: sid.to_string(),
            events: BTreeMap::from([(BACKCHANNEL_LOGOUT_EVENT.to_owned(), serde_json::Map::new())]),
        };
        let (ring, headers) = self.signing().await?;
        ring.sign(&headers.logout_token, &claims).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use jsonwebtoken::{Algorithm, DecodingKey, Validation};

    use super::*;
    use crate::clock::ManualClock;
    use crate::domain::Geolocation;
    use crate::random::{OsRandom, RandomExt};
    use crate::signing::KeyRing;

    /// Verified by `jsonwebtoken` with nothing but the published JWK Set, as a relying party
    /// does: the header, every claim, and no `nonce`.
    #[tokio::test]
    async fn a_logout_token_verifies_against_the_published_jwks() {
        let keys = Arc::new(KeyRing::generate(&OsRandom, &ManualClock::new(0)));
        let codec = AccessTokenCodec::new(
            keys,
            Geolocation::parse("https://eu.api.example.com").unwrap(),
        );
        let client = ClientId::new(OsRandom.uuid());
        let principal = PrincipalId::new(OsRandom.uuid());
        let sid = SessionId::parse("0123456789abcdefABCD-_").unwrap();
        let now = 1_800_000_000;
        let token = codec
            .encode_logout_token(
                &client,
                &principal,
                &sid,
                TokenId::new(OsRandom.uuid()),
                now,
            )
            .await
            .unwrap();

        let jwks = serde_json::to_value(codec.keys().snapshot().unwrap().jwks()).unwrap();
        let set: jsonwebtoken::jwk::JwkSet = serde_json::from_value(jwks).unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.typ.as_deref(), Some("logout+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        let key = DecodingKey::from_jwk(set.find(&header.kid.unwrap()).unwrap()).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.set_audience(&[client.to_string()]);
        validation.set_issuer(&["https://eu.api.example.com"]);
        let claims = jsonwebtoken::decode::<serde_json::Value>(&token, &key, &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["sub"], principal.to_string());
        assert_eq!(claims["sid"], "0123456789abcdefABCD-_");
        assert_eq!(claims["iat"], now);
        assert_eq!(claims["exp"], now + 120);
        assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
        assert_eq!(
            claims["events"],
            serde_json::json!({"http://schemas.openid.net/event/backchannel-logout": {}})
        );
        assert!(claims.get("nonce").is_none(), "never a nonce");
    }
}
