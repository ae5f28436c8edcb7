//! Access tokens as RFC 9068 JWTs: `typ: at+jwt`, ES256, identified by `kid`; OpenID Connect ID
//! tokens (docs/decisions.md, "Authorization code flow") and back-channel logout tokens, signed
//! with the same keys.
//!
//! Expiry is checked against the injected clock, not the system time (jsonwebtoken's own `exp`
//! check is turned off), so tests can move past an expiry without sleeping.

mod id_jag;
mod id_token;
mod logout_token;

use std::sync::{Arc, Mutex};

use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::domain::{AccessTokenRecord, Actor, AuthMethod, Geolocation, PrincipalType, ID_JAG_TYP};
use crate::signing::{encode_part, KeyRing, SigningError, SigningKeys};

pub use id_jag::IdJagClaims;
pub use id_token::{
    at_hash, HintedPrincipal, IdTokenClaims, InvalidIdTokenHint, SignIn, ID_TOKEN_TTL_SECONDS,
};
pub use logout_token::{
    LogoutTokenClaims, BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TTL_SECONDS, LOGOUT_TOKEN_TYP,
};

/// The media type RFC 9068 §2.1 requires in the `typ` header.
pub const ACCESS_TOKEN_TYP: &str = "at+jwt";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessTokenClaims {
    /// The issuing deployment's geolocation.
    pub iss: String,
    /// The principal's UUID (the client's for application tokens).
    pub sub: String,
    pub client_id: String,
    /// The deployment's geolocation (the v4 APIs served at that base address accept it), or
    /// the resources the token was asked for (RFC 8707): one as a string, several as an array.
    pub aud: Audience,
    pub scope: String,
    pub iat: UnixTime,
    pub exp: UnixTime,
    pub jti: String,
    pub principal_type: PrincipalType,
    pub geolocation: String,
    /// RFC 9449 §6.1: the DPoP key a sender-constrained token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
    /// RFC 8693 §4.1: who acts for the subject, for a token made by a token exchange with an
    /// actor token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Actor>,
    /// RFC 9068 §2.2.1: when the user signed in, for a user's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// RFC 9068 §2.2.1 (RFC 8176 names): how the user signed in, for a user's token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
}

/// An access token's `aud` (RFC 7519 §4.1.3: a string, or an array of strings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    /// This deployment's geolocation for a token without resources; otherwise the resources, as
    /// the request spelled them.
    pub fn of(record: &AccessTokenRecord, issuer: &Geolocation) -> Self {
        match &record.audience[..] {
            [] => Self::One(issuer.to_string()),
            [one] => Self::One(one.to_string()),
            many => Self::Many(many.iter().map(ToString::to_string).collect()),
        }
    }

    pub fn names(&self, value: &str) -> bool {
        match self {
            Self::One(one) => one == value,
            Self::Many(many) => many.iter().any(|v| v == value),
        }
    }
}

/// RFC 7800 confirmation claim, with RFC 9449's JWK thumbprint member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Confirmation {
    pub jkt: String,
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
    keys: SigningKeys,
    issuer: Geolocation,
    /// The signing key's JWS headers, base64url-encoded once per key: they never change for a
    /// key, and the key changes only at a rotation. `None` until the ring's first read.
    headers: Arc<Mutex<Option<Arc<EncodedHeaders>>>>,
}

#[derive(Debug)]
struct EncodedHeaders {
    kid: String,
    access_token: String,
    id_token: String,
    logout_token: String,
    id_jag: String,
}

impl EncodedHeaders {
    fn new(kid: &str) -> Self {
        let mut access_token = Header::new(Algorithm::ES256);
        access_token.typ = Some(ACCESS_TOKEN_TYP.to_owned());
        access_token.kid = Some(kid.to_owned());
        // ID tokens keep jsonwebtoken's default `typ: JWT`.
        let mut id_token = Header::new(Algorithm::ES256);
        id_token.kid = Some(kid.to_owned());
        // Back-Channel Logout 1.0 §2.4: explicitly typed, so that a logout token can never be
        // taken for an ID token, nor the reverse.
        let mut logout_token = id_token.clone();
        logout_token.typ = Some(LOGOUT_TOKEN_TYP.to_owned());
        let mut id_jag = id_token.clone();
        id_jag.typ = Some(ID_JAG_TYP.to_owned());
        Self {
            kid: kid.to_owned(),
            access_token: encode_part(&access_token),
            id_token: encode_part(&id_token),
            logout_token: encode_part(&logout_token),
            id_jag: encode_part(&id_jag),
        }
    }
}

impl From<Arc<KeyRing>> for SigningKeys {
    fn from(ring: Arc<KeyRing>) -> Self {
        SigningKeys::fixed(ring)
    }
}

impl AccessTokenCodec {
    pub fn new(keys: impl Into<SigningKeys>, issuer: Geolocation) -> Self {
        let keys = keys.into();
        let headers = keys
            .snapshot()
            .map(|ring| Arc::new(EncodedHeaders::new(ring.signing_kid())));
        Self {
            keys,
            issuer,
            headers: Arc::new(Mutex::new(headers)),
        }
    }

    pub fn keys(&self) -> &SigningKeys {
        &self.keys
    }

    pub fn issuer(&self) -> &Geolocation {
        &self.issuer
    }

    /// The current ring and the headers naming its signing key.
    async fn signing(&self) -> Result<(Arc<KeyRing>, Arc<EncodedHeaders>), SigningError> {
        let ring = self.keys.for_signing().await?;
        let mut cached = self.headers.lock().unwrap_or_else(|p| p.into_inner());
        let headers = match cached.as_ref() {
            Some(headers) if headers.kid == ring.signing_kid() => headers.clone(),
            _ => {
                let headers = Arc::new(EncodedHeaders::new(ring.signing_kid()));
                *cached = Some(headers.clone());
                headers
            }
        };
        drop(cached);
        Ok((ring, headers))
    }

    /// Signs the token that `record` describes.
    pub async fn encode(&self, record: &AccessTokenRecord) -> Result<String, SigningError> {
        let claims = AccessTokenClaims {
            iss: self.issuer.to_string(),
            sub: record.subject.hyphenated().to_string(),
            client_id: record.wire_client_id(),
            aud: Audience::of(record, &self.issuer),
            scope: record.scopes.to_string(),
            iat: record.issued_at,
            exp: record.expires_at,
            jti: record.jti.to_string(),
            principal_type: record.principal_type,
            geolocation: self.issuer.to_string(),
            cnf: record.jkt.clone().map(|jkt| Confirmation { jkt }),
            act: record.act.clone(),
            auth_time: record.auth_time,
            amr: record.amr.clone(),
        };
        let (ring, headers) = self.signing().await?;
        ring.sign(&headers.access_token, &claims).await
    }

    /// Verifies signature, `typ`, issuer and expiry. Whether the token was revoked is a store
    /// question, answered by the caller; so is whom it is for (`aud`: this deployment, or the
    /// resources it was asked for, which only the endpoints serving this deployment check). The outer error: the ring has never been read
    /// and cannot be now (503), so the token can be neither accepted nor refused.
    pub async fn decode(
        &self,
        token: &str,
        now: UnixTime,
    ) -> Result<Result<AccessTokenClaims, InvalidAccessToken>, SigningError> {
        let ring = self.keys.for_verifying().await?;
        Ok(self.decode_with(&ring, token, now))
    }

    fn decode_with(
        &self,
        ring: &KeyRing,
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
            .and_then(|kid| ring.verification_key(kid))
            .ok_or(InvalidAccessToken::UnknownKey)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[self.issuer.as_str()]);
        // `aud` may name resources of other servers (RFC 8707): introspection answers for those
        // tokens too, and the bearer check refuses them at this deployment's own APIs.
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<AccessTokenClaims>(token, key, &validation)
            .map_err(|_| InvalidAccessToken::BadSignatureOrClaims)?
            .claims;
        if claims.exp <= now {
            return Err(InvalidAccessToken::Expired);
        }
        Ok(claims)
    }
}

// Lazily opened keys, seen through the codec that signs with them.
#[cfg(test)]
mod lazy_signing_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::random::OsRandom;
    use token_store_conformance::records::user_access_token;

    fn codec() -> AccessTokenCodec {
        let keys = Arc::new(KeyRing::generate(&OsRandom, &ManualClock::new(0)));
        AccessTokenCodec::new(
            keys,
            Geolocation::parse("https://us.api.example.com").unwrap(),
        )
    }

    fn record(now: UnixTime) -> AccessTokenRecord {
        user_access_token(now, "read write")
    }

    #[tokio::test]
    async fn round_trip_and_header() {
        let codec = codec();
        let rec = record(1_000);
        let token = codec.encode(&rec).await.unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.typ.as_deref(), Some("at+jwt"));
        assert_eq!(
            header.kid.as_deref(),
            Some(codec.keys().snapshot().unwrap().signing_kid())
        );
        let claims = codec.decode(&token, 1_001).await.unwrap().unwrap();
        assert_eq!(claims.jti, rec.jti.to_string());
        assert_eq!(claims.scope, "read write");
        assert_eq!(claims.exp - claims.iat, 3600);
        assert_eq!(claims.iss, "https://us.api.example.com");
        assert_eq!(
            claims.aud,
            Audience::One("https://us.api.example.com".into())
        );
    }

    #[tokio::test]
    async fn aud_is_the_resource_or_the_resources() {
        use crate::domain::Resource;
        let codec = codec();
        let one = AccessTokenRecord {
            audience: vec![Resource::parse("https://api.example.com/mcp").unwrap()],
            ..record(1_000)
        };
        let token = codec.encode(&one).await.unwrap();
        let claims = codec.decode(&token, 1_001).await.unwrap().unwrap();
        assert_eq!(
            claims.aud,
            Audience::One("https://api.example.com/mcp".into())
        );
        let two = AccessTokenRecord {
            audience: vec![
                Resource::parse("https://a.example.com").unwrap(),
                Resource::parse("https://b.example.com").unwrap(),
            ],
            ..record(1_000)
        };
        let token = codec.encode(&two).await.unwrap();
        let claims = codec.decode(&token, 1_001).await.unwrap().unwrap();
        assert_eq!(
            claims.aud,
            Audience::Many(vec![
                "https://a.example.com".into(),
                "https://b.example.com".into()
            ])
        );
        assert!(claims.aud.names("https://b.example.com"));
    }

    #[tokio::test]
    async fn expiry_uses_the_given_time() {
        let codec = codec();
        let token = codec.encode(&record(1_000)).await.unwrap();
        assert_eq!(
            codec.decode(&token, 4_600).await.unwrap(),
            Err(InvalidAccessToken::Expired)
        );
    }

    #[tokio::test]
    async fn rejects_foreign_keys_and_tampering() {
        let token = codec().encode(&record(1_000)).await.unwrap();
        assert_eq!(
            codec().decode(&token, 1_001).await.unwrap(),
            Err(InvalidAccessToken::UnknownKey)
        );
        let codec = codec();
        let token = codec.encode(&record(1_000)).await.unwrap();
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = parts[1].chars().rev().collect();
        assert!(codec
            .decode(&parts.join("."), 1_001)
            .await
            .unwrap()
            .is_err());
        assert_eq!(
            codec.decode("garbage", 1_001).await.unwrap(),
            Err(InvalidAccessToken::Malformed)
        );
    }
}
