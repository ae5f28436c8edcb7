//! Access tokens as RFC 9068 JWTs: `typ: at+jwt`, ES256, identified by `kid`.
//!
//! Expiry is checked against the injected clock, not the system time (jsonwebtoken's own `exp`
//! check is turned off), so tests can move past an expiry without sleeping.

use std::sync::Arc;

use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::domain::{AccessTokenRecord, Geolocation, PrincipalType};
use crate::signing::KeyRing;

/// The media type RFC 9068 §2.1 requires in the `typ` header.
pub const ACCESS_TOKEN_TYP: &str = "at+jwt";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessTokenClaims {
    /// The issuing deployment's geolocation.
    pub iss: String,
    /// The principal's UUID (the client's for application tokens).
    pub sub: String,
    pub client_id: String,
    /// The deployment's geolocation: the v4 APIs served at that base address accept it.
    pub aud: String,
    pub scope: String,
    pub iat: UnixTime,
    pub exp: UnixTime,
    pub jti: String,
    pub principal_type: PrincipalType,
    pub geolocation: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidAccessToken {
    #[error("malformed token")]
    Malformed,
    #[error("not an access token (typ)")]
    WrongType,
    #[error("unknown signing key")]
    UnknownKey,
    #[error("bad signature or claims")]
    BadSignatureOrClaims,
    #[error("expired")]
    Expired,
}

#[derive(Debug, Clone)]
pub struct AccessTokenCodec {
    keys: Arc<KeyRing>,
    issuer: Geolocation,
}

impl AccessTokenCodec {
    pub fn new(keys: Arc<KeyRing>, issuer: Geolocation) -> Self {
        Self { keys, issuer }
    }

    pub fn keys(&self) -> &KeyRing {
        &self.keys
    }

    pub fn issuer(&self) -> &Geolocation {
        &self.issuer
    }

    /// Signs the token that `record` describes.
    pub fn encode(&self, record: &AccessTokenRecord) -> String {
        let (kid, key) = self.keys.signing_key();
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some(ACCESS_TOKEN_TYP.to_owned());
        header.kid = Some(kid.to_owned());
        let claims = AccessTokenClaims {
            iss: self.issuer.to_string(),
            sub: record.subject.hyphenated().to_string(),
            client_id: record.client_id.to_string(),
            aud: self.issuer.to_string(),
            scope: record.scopes.to_string(),
            iat: record.issued_at,
            exp: record.expires_at,
            jti: record.jti.to_string(),
            principal_type: record.principal_type,
            geolocation: self.issuer.to_string(),
        };
        jsonwebtoken::encode(&header, &claims, key).expect("ES256 signing with a loaded key")
    }

    /// Verifies signature, `typ`, issuer, audience and expiry. Whether the token was revoked is
    /// a store question, answered by the caller.
    pub fn decode(
        &self,
        token: &str,
        now: UnixTime,
    ) -> Result<AccessTokenClaims, InvalidAccessToken> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| InvalidAccessToken::Malformed)?;
        let typ_ok = header.typ.as_deref().is_some_and(|t| {
            t.eq_ignore_ascii_case(ACCESS_TOKEN_TYP) || t.eq_ignore_ascii_case("application/at+jwt")
        });
        if header.alg != Algorithm::ES256 || !typ_ok {
            return Err(InvalidAccessToken::WrongType);
        }
        let key = header
            .kid
            .as_deref()
            .and_then(|kid| self.keys.verification_key(kid))
            .ok_or(InvalidAccessToken::UnknownKey)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[self.issuer.as_str()]);
        validation.set_audience(&[self.issuer.as_str()]);
        let claims = jsonwebtoken::decode::<AccessTokenClaims>(token, key, &validation)
            .map_err(|_| InvalidAccessToken::BadSignatureOrClaims)?
            .claims;
        if claims.exp <= now {
            return Err(InvalidAccessToken::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::domain::{ClientId, Scopes, TokenId};
    use crate::random::{OsRandom, RandomExt};

    fn codec() -> AccessTokenCodec {
        let keys = Arc::new(KeyRing::generate(&OsRandom, &ManualClock::new(0)));
        AccessTokenCodec::new(
            keys,
            Geolocation::parse("https://us.api.example.com").unwrap(),
        )
    }

    fn record(now: UnixTime) -> AccessTokenRecord {
        AccessTokenRecord {
            jti: TokenId::new(OsRandom.uuid()),
            client_id: ClientId::new(OsRandom.uuid()),
            principal_type: PrincipalType::User,
            subject: OsRandom.uuid(),
            family_id: None,
            scopes: Scopes::parse("read write").unwrap(),
            issued_at: now,
            expires_at: now + 3600,
            revoked: false,
        }
    }

    #[test]
    fn round_trip_and_header() {
        let codec = codec();
        let rec = record(1_000);
        let token = codec.encode(&rec);
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.typ.as_deref(), Some("at+jwt"));
        assert_eq!(header.kid.as_deref(), Some(codec.keys().signing_key().0));
        let claims = codec.decode(&token, 1_001).unwrap();
        assert_eq!(claims.jti, rec.jti.to_string());
        assert_eq!(claims.scope, "read write");
        assert_eq!(claims.exp - claims.iat, 3600);
        assert_eq!(claims.iss, "https://us.api.example.com");
    }

    #[test]
    fn expiry_uses_the_given_time() {
        let codec = codec();
        let token = codec.encode(&record(1_000));
        assert_eq!(
            codec.decode(&token, 4_600),
            Err(InvalidAccessToken::Expired)
        );
    }

    #[test]
    fn rejects_foreign_keys_and_tampering() {
        let token = codec().encode(&record(1_000));
        assert_eq!(
            codec().decode(&token, 1_001),
            Err(InvalidAccessToken::UnknownKey)
        );
        let codec = codec();
        let token = codec.encode(&record(1_000));
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = parts[1].chars().rev().collect();
        assert!(codec.decode(&parts.join("."), 1_001).is_err());
        assert_eq!(
            codec.decode("garbage", 1_001),
            Err(InvalidAccessToken::Malformed)
        );
    }
}
