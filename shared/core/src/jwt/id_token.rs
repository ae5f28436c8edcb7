//! OpenID Connect ID tokens (OpenID Connect Core §2), signed with the access tokens' keys, and
//! the check of an ID token a relying party hands back as `id_token_hint` (at the authorization
//! endpoint and at RP-initiated logout).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{AccessTokenCodec, ACCESS_TOKEN_TYP};
use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, AuthMethod, ClientId, IdpId, PrincipalId, PrincipalType, SessionId,
};
use crate::signing::{KeyRing, SigningError};

/// ID tokens live as long as the access token they accompany.
pub const ID_TOKEN_TTL_SECONDS: i64 = 3600;

/// OpenID Connect Core §2 claims, plus the principal's type as in access tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdTokenClaims {
    /// The issuing deployment's geolocation, as in access tokens.
    pub iss: String,
    /// The principal's UUID.
    pub sub: String,
    /// The client the token was issued to.
    pub aud: String,
    pub exp: UnixTime,
    pub iat: UnixTime,
    pub nbf: UnixTime,
    /// Binds the ID token to the access token issued with it (OpenID Connect Core §3.1.3.6).
    pub at_hash: String,
    /// Echoed from the authorize request when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// When the user signed in, for tokens that follow a sign-in page (the code flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// The sign-in session (OpenID Connect Back-Channel Logout 1.0 §2.1), for tokens that
    /// follow a sign-in on the pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// How the user signed in (RFC 8176), for tokens that follow a sign-in on the pages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// The company identity provider (its `idp_id`) the user signed in through, for tokens
    /// that follow a federated sign-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpId>,
    pub principal_type: PrincipalType,
}

/// What the sign-in that led to an ID token adds to it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SignIn<'a> {
    pub nonce: Option<&'a str>,
    pub auth_time: Option<UnixTime>,
    pub sid: Option<&'a SessionId>,
    pub amr: &'a [AuthMethod],
    pub idp: Option<IdpId>,
}

/// `at_hash` for ES256: base64url of the left half of the SHA-256 of the access token's ASCII.
pub fn at_hash(access_token: &str) -> String {
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..digest.len() / 2])
}

/// An `id_token_hint` that is not an ID token this deployment signed. Deliberately one value:
/// the answer never says which check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the ID token hint does not verify")]
pub struct InvalidIdTokenHint;

/// Whom a verified hint names, and for which client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintedPrincipal {
    pub principal: PrincipalId,
    pub principal_type: PrincipalType,
    pub client_id: ClientId,
    /// The hint's `iat`: the sign-ins it speaks for are the ones before it.
    pub issued_at: UnixTime,
    /// The sign-in session the hint was issued in, when it was.
    pub sid: Option<SessionId>,
}

impl AccessTokenCodec {
    /// The ID token that accompanies `access_token` (the token `record` describes, as
    /// [`Self::encode`] returned it): same subject, issue time and principal type, audience the
    /// client. Only user and company families get one; the caller decides.
    pub async fn encode_id_token(
        &self,
        record: &AccessTokenRecord,
        access_token: &str,
        sign_in: SignIn<'_>,
    ) -> Result<String, SigningError> {
        let claims = IdTokenClaims {
            iss: self.issuer.to_string(),
            sub: record.subject.hyphenated().to_string(),
            aud: record.wire_client_id(),
            exp: record.issued_at + ID_TOKEN_TTL_SECONDS,
            iat: record.issued_at,
            nbf: record.issued_at,
            at_hash: at_hash(access_token),
            nonce: sign_in.nonce.map(str::to_owned),
            auth_time: sign_in.auth_time,
            sid: sign_in.sid.cloned(),
            amr: sign_in.amr.to_vec(),
            idp: sign_in.idp,
            principal_type: record.principal_type,
        };
        let (ring, headers) = self.signing().await?;
        ring.sign(&headers.id_token, &claims).await
    }

    /// Checks an `id_token_hint`: an ID token signed by a key of this deployment's ring, issued
    /// here, for a user or company. Expiry is not checked: OpenID Connect RP-Initiated Logout
    /// §4 lets a relying party send a hint after the token expired, and a hint grants nothing.
    /// The outer error: the ring has never been read and cannot be now (503).
    pub async fn verify_id_token_hint(
        &self,
        token: &str,
    ) -> Result<Result<HintedPrincipal, InvalidIdTokenHint>, SigningError> {
        let ring = self.keys.for_verifying().await?;
        Ok(Self::verify_hint_with(&ring, self.issuer.as_str(), token))
    }

    /// An ID token this deployment signed for a user or company, unexpired at `now`: its
    /// claims, or `None`. A token exchange's subject (RFC 8693 `…:id_token`).
    pub async fn verify_id_token(
        &self,
        token: &str,
        now: UnixTime,
    ) -> Result<Option<IdTokenClaims>, SigningError> {
        let ring = self.keys.for_verifying().await?;
        Ok(Self::verified_claims(&ring, self.issuer.as_str(), token)
            .ok()
            .filter(|claims| claims.exp > now))
    }

    fn verify_hint_with(
        ring: &KeyRing,
        issuer: &str,
        token: &str,
    ) -> Result<HintedPrincipal, InvalidIdTokenHint> {
        let claims = Self::verified_claims(ring, issuer, token)?;
        Ok(HintedPrincipal {
            principal: PrincipalId::parse(&claims.sub).map_err(|_| InvalidIdTokenHint)?,
            principal_type: claims.principal_type,
            client_id: ClientId::from_wire(&claims.aud).map_err(|_| InvalidIdTokenHint)?,
            issued_at: claims.iat,
            sid: claims.sid,
        })
    }

    /// Signature, type, issuer and principal type; not the expiry.
    fn verified_claims(
        ring: &KeyRing,
        issuer: &str,
        token: &str,
    ) -> Result<IdTokenClaims, InvalidIdTokenHint> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| InvalidIdTokenHint)?;
        // An access token is not an ID token, though signed by the same keys.
        let is_access_token = header
            .typ
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case(ACCESS_TOKEN_TYP));
        if header.alg != Algorithm::ES256 || is_access_token {
            return Err(InvalidIdTokenHint);
        }
        let key = header
            .kid
            .as_deref()
            .and_then(|kid| ring.verification_key(kid))
            .ok_or(InvalidIdTokenHint)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.set_required_spec_claims(&["iss", "aud", "sub"]);
        validation.set_issuer(&[issuer]);
        let claims = jsonwebtoken::decode::<IdTokenClaims>(token, key, &validation)
            .map_err(|_| InvalidIdTokenHint)?
            .claims;
        if claims.principal_type == PrincipalType::Application {
            return Err(InvalidIdTokenHint);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::domain::{Geolocation, Scopes, TokenId};
    use crate::jwt::InvalidAccessToken;
    use crate::random::{OsRandom, RandomExt};
    use crate::signing::KeyRing;

    fn jwks(codec: &AccessTokenCodec) -> serde_json::Value {
        serde_json::to_value(codec.keys().snapshot().unwrap().jwks()).unwrap()
    }

    /// The token's claims, its signature checked with the published JWK Set and the verifier
    /// of others' tokens (`jose`), not with the code that signed it.
    fn verified_claims(token: &str, codec: &AccessTokenCodec) -> serde_json::Value {
        let jwks = crate::jose::PublicJwkSet::parse(jwks(codec)).unwrap();
        let kid = crate::jose::decode_header(token).unwrap().kid;
        let key = jwks
            .candidates(kid.as_deref())
            .next()
            .expect("a key with the token's kid");
        crate::jose::verify(token, key).unwrap()
    }

    fn codec() -> AccessTokenCodec {
        let keys = Arc::new(KeyRing::generate(&OsRandom, &ManualClock::new(0)));
        AccessTokenCodec::new(
            keys,
            Geolocation::parse("https://eu.api.example.com").unwrap(),
        )
    }

    fn record(principal_type: PrincipalType) -> AccessTokenRecord {
        AccessTokenRecord {
            jti: TokenId::new(OsRandom.uuid()),
            client_id: ClientId::new(OsRandom.uuid()),
            principal_type,
            subject: OsRandom.uuid(),
            family_id: None,
            scopes: Scopes::parse("openid").unwrap(),
            issued_at: 1_700_000_000,
            expires_at: 1_700_003_600,
            revoked: false,
            jkt: None,
            audience: Vec::new(),
            act: None,
            client_url: None,
            auth_time: None,
            amr: Vec::new(),
            exchanged_from: Vec::new(),
        }
    }

    #[tokio::test]
    async fn claims_signature_and_at_hash() {
        let codec = codec();
        let record = record(PrincipalType::User);
        let access_token = codec.encode(&record).await.unwrap();
        let sid = SessionId::parse("AAAAAAAAAAAAAAAAAAAAAA");
        let sign_in = SignIn {
            nonce: Some("n-0S6_WzA2Mj"),
            auth_time: Some(1_699_999_990),
            sid: sid.as_ref(),
            amr: AuthMethod::PASSWORD_AND_CODE,
            idp: None,
        };
        let id_token = codec
            .encode_id_token(&record, &access_token, sign_in)
            .await
            .unwrap();
        let claims = verified_claims(&id_token, &codec);

        assert_eq!(claims["iss"], "https://eu.api.example.com");
        assert_eq!(claims["sub"], record.subject.to_string());
        assert_eq!(claims["aud"], record.client_id.to_string());
        assert_eq!(claims["iat"], 1_700_000_000);
        assert_eq!(claims["nbf"], 1_700_000_000);
        assert_eq!(claims["exp"], 1_700_003_600);
        assert_eq!(claims["nonce"], "n-0S6_WzA2Mj");
        assert_eq!(claims["auth_time"], 1_699_999_990);
        assert_eq!(claims["sid"], "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(claims["amr"], serde_json::json!(["pwd", "otp", "mfa"]));
        assert_eq!(claims["principal_type"], "user");

        // at_hash recomputed by hand: the first 128 bits of SHA-256 over the token's ASCII.
        let digest = Sha256::digest(access_token.as_bytes());
        let left_half: [u8; 16] = digest[..16].try_into().unwrap();
        assert_eq!(claims["at_hash"], URL_SAFE_NO_PAD.encode(left_half));
        assert_eq!(claims["at_hash"].as_str().unwrap().len(), 22);
    }

    #[tokio::test]
    async fn nonce_is_absent_when_none_was_given_and_the_token_is_not_an_access_token() {
        let codec = codec();
        let record = record(PrincipalType::Company);
        let access_token = codec.encode(&record).await.unwrap();
        let id_token = codec
            .encode_id_token(&record, &access_token, SignIn::default())
            .await
            .unwrap();
        let claims = verified_claims(&id_token, &codec);
        assert!(claims.get("nonce").is_none());
        assert!(claims.get("auth_time").is_none());
        assert!(claims.get("amr").is_none(), "no page sign-in, no methods");
        assert!(claims.get("idp").is_none(), "no company IdP");
        assert_eq!(claims["principal_type"], "company");
        assert_eq!(
            codec.decode(&id_token, 1_700_000_001).await.unwrap(),
            Err(InvalidAccessToken::WrongType),
            "an ID token is never accepted as a bearer access token"
        );
    }

    #[tokio::test]
    async fn a_sign_in_through_a_company_idp_names_it_as_idp() {
        let codec = codec();
        let record = record(PrincipalType::User);
        let access_token = codec.encode(&record).await.unwrap();
        let idp = IdpId::new(OsRandom.uuid());
        let sign_in = SignIn {
            auth_time: Some(1_699_999_000),
            amr: AuthMethod::PASSWORD,
            idp: Some(idp),
            ..SignIn::default()
        };
        let id_token = codec
            .encode_id_token(&record, &access_token, sign_in)
            .await
            .unwrap();
        let claims = verified_claims(&id_token, &codec);
        assert_eq!(claims["idp"], idp.to_string(), "the idp_id, as a string");
        assert_eq!(claims["amr"], serde_json::json!(["pwd"]));
        assert_eq!(claims["auth_time"], 1_699_999_000);

        // Read back as claims (a token exchange's subject), and as none without it.
        let now = 1_700_000_001;
        let read = codec.verify_id_token(&id_token, now).await.unwrap();
        assert_eq!(read.expect("verifies").idp, Some(idp));
        let plain = codec
            .encode_id_token(&record, &access_token, SignIn::default())
            .await
            .unwrap();
        let read = codec.verify_id_token(&plain, now).await.unwrap();
        assert_eq!(read.expect("verifies").idp, None);
    }

    #[tokio::test]
    async fn a_hint_names_its_principal_and_client_even_after_expiry() {
        let codec = codec();
        let record = record(PrincipalType::User);
        let access_token = codec.encode(&record).await.unwrap();
        let id_token = codec
            .encode_id_token(&record, &access_token, SignIn::default())
            .await
            .unwrap();
        assert_eq!(
            codec.verify_id_token_hint(&id_token).await.unwrap(),
            Ok(HintedPrincipal {
                principal: PrincipalId::new(record.subject),
                principal_type: PrincipalType::User,
                client_id: record.client_id,
                issued_at: record.issued_at,
                sid: None,
            })
        );
    }

    #[tokio::test]
    async fn a_hint_that_is_not_our_id_token_is_refused() {
        let codec = codec();
        let record = record(PrincipalType::User);
        let access_token = codec.encode(&record).await.unwrap();
        // Every codec() has a key ring of its own (`self::` past the local binding).
        let foreign = self::codec()
            .encode_id_token(&record, &access_token, SignIn::default())
            .await
            .unwrap();
        let own = codec
            .encode_id_token(&record, &access_token, SignIn::default())
            .await
            .unwrap();
        let mut parts: Vec<&str> = own.split('.').collect();
        let tampered_claims = URL_SAFE_NO_PAD.encode(br#"{"sub":"someone-else"}"#);
        parts[1] = &tampered_claims;
        let tampered = parts.join(".");
        for hint in [
            foreign.as_str(),
            access_token.as_str(),
            &tampered,
            "garbage",
            "",
        ] {
            assert_eq!(
                codec.verify_id_token_hint(hint).await.unwrap(),
                Err(InvalidIdTokenHint),
                "{hint}"
            );
        }
    }
}
