//! Identity assertions for agents (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant §3),
//! signed with the ID tokens' keys under their own `typ`, so that the target authorization
//! server verifies them with the JWK Set it already reads from our metadata and never takes an
//! ID token or an access token for one.

use serde::{Deserialize, Serialize};

use super::AccessTokenCodec;
use crate::clock::UnixTime;
use crate::domain::AuthMethod;
use crate::signing::SigningError;

/// The draft's claims (§3.1). `aud` is the target's issuer, one string; `client_id` the
/// requesting client's id at the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdJagClaims {
    pub iss: String,
    /// The user, as ID tokens name them.
    pub sub: String,
    pub aud: String,
    pub client_id: String,
    pub jti: String,
    pub iat: UnixTime,
    pub exp: UnixTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl AccessTokenCodec {
    /// Signs an ID-JAG; `claims.iss` is this deployment's issuer whatever the caller set.
    pub async fn encode_id_jag(&self, mut claims: IdJagClaims) -> Result<String, SigningError> {
        claims.iss = self.issuer.to_string();
        self.sign_as_id_jag(&claims).await
    }

    /// Any claims under the ID-JAG header, as they are: what the tests of a redeeming server
    /// sign to play an identity provider that says more, or less, than this one does.
    pub async fn sign_as_id_jag<C: Serialize + Sync>(
        &self,
        claims: &C,
    ) -> Result<String, SigningError> {
        let (ring, headers) = self.signing().await?;
        ring.sign(&headers.id_jag, claims).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use jsonwebtoken::{Algorithm, DecodingKey, Validation};

    use super::*;
    use crate::clock::ManualClock;
    use crate::domain::{Geolocation, ID_JAG_TYP};
    use crate::random::OsRandom;
    use crate::signing::KeyRing;

    /// Verified by `jsonwebtoken` with nothing but the published JWK Set, as the target does.
    #[tokio::test]
    async fn typed_signed_by_the_published_keys_and_issued_here() {
        let keys = Arc::new(KeyRing::generate(&OsRandom, &ManualClock::new(0)));
        let issuer = Geolocation::parse("https://us.api.example.com").unwrap();
        let codec = AccessTokenCodec::new(keys.clone(), issuer);
        let claims = IdJagClaims {
            iss: "https://someone-else.example".into(),
            sub: "user".into(),
            aud: "https://as.example".into(),
            client_id: "agent-there".into(),
            jti: "j".into(),
            iat: 1_700_000_000,
            exp: 1_700_000_300,
            auth_time: Some(1_699_999_000),
            amr: vec![AuthMethod::Pwd],
            resource: Some("https://mcp.example/mcp".into()),
            scope: None,
        };
        let token = codec.encode_id_jag(claims.clone()).await.unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.typ.as_deref(), Some(ID_JAG_TYP));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwks: jsonwebtoken::jwk::JwkSet =
            serde_json::from_value(serde_json::to_value(keys.jwks()).unwrap()).unwrap();
        let jwk = jwks.find(header.kid.as_deref().unwrap()).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.set_audience(&["https://as.example"]);
        let decoded = jsonwebtoken::decode::<serde_json::Value>(
            &token,
            &DecodingKey::from_jwk(jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(decoded["iss"], "https://us.api.example.com");
        assert_eq!(decoded["amr"], serde_json::json!(["pwd"]));
        assert_eq!(decoded["resource"], "https://mcp.example/mcp");
        assert!(decoded.get("scope").is_none(), "{decoded}");
    }
}
