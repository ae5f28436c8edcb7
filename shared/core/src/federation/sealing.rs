//! An OpenID Provider's client secret at rest: the one [`Sealer`] (AES-256-GCM) under a key
//! derived from the deployment's server secret for this purpose alone, with the IdP's id as
//! associated data, so that a sealed secret copied to another IdP's record opens nowhere.
//! Whoever reads the table (or a backup of it) without the server secret learns nothing.

use crate::domain::{IdentityProvider, IdpId, IdpProtocol, SealedSecret};
use crate::errors::ServerError;
use crate::secrets::Secret;
use crate::services::Services;
use crate::signing::seal::Sealer;

/// The key ring's derivation purpose: never the second factors' key nor the pages' cookie key.
const KEY_PURPOSE: &str = "upstream-client-secret-v1";

async fn sealer(services: &Services) -> Result<Sealer, ServerError> {
    let key = services.codec.keys().derive_key(KEY_PURPOSE).await?;
    Ok(Sealer::new(key))
}

/// Seals `secret` for the IdP `idp` (before its record is first written). Fails (503) only
/// while the key ring has never been read and cannot be now.
pub async fn seal_client_secret(
    services: &Services,
    idp: &IdpId,
    secret: &str,
) -> Result<SealedSecret, ServerError> {
    let sealer = sealer(services).await?;
    let sealed = sealer.seal(
        &idp.to_string(),
        secret.as_bytes(),
        services.ctx.random.as_ref(),
    );
    Ok(SealedSecret::new(sealed))
}

/// The client secret of an OpenID Connect IdP, for its token endpoint. An IdP of another
/// protocol has none, and a secret that does not open (sealed for another IdP, or under
/// another deployment's server secret) is our failure, never a reason to send something else.
pub async fn open_client_secret(
    services: &Services,
    idp: &IdentityProvider,
) -> Result<Secret, ServerError> {
    let IdpProtocol::Oidc(oidc) = &idp.protocol else {
        return Err(ServerError::internal(
            "only an OpenID Connect identity provider has a client secret",
        ));
    };
    let sealer = sealer(services).await?;
    let plain = sealer
        .open(&idp.id.to_string(), oidc.client_secret.as_str())
        .ok_or_else(|| ServerError::internal("an IdP's client secret does not open"))?;
    let plain = String::from_utf8(plain)
        .map_err(|_| ServerError::internal("an IdP's client secret is not UTF-8"))?;
    Ok(Secret::new(plain))
}

/// Which of a SAML connection's two keys: each sealed with its own associated data, so that
/// neither opens as the other, nor as a client secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpKeyUse {
    Signing,
    Encryption,
}

impl SpKeyUse {
    fn context(self, idp: &IdpId) -> String {
        let name = match self {
            Self::Signing => "saml-signing",
            Self::Encryption => "saml-encryption",
        };
        format!("{idp}\0{name}")
    }
}

/// Seals one of our SAML keys (PKCS#8 DER) for the IdP `idp`.
pub async fn seal_sp_key(
    services: &Services,
    idp: &IdpId,
    key_use: SpKeyUse,
    pkcs8_der: &[u8],
) -> Result<SealedSecret, ServerError> {
    let sealer = sealer(services).await?;
    let sealed = sealer.seal(
        &key_use.context(idp),
        pkcs8_der,
        services.ctx.random.as_ref(),
    );
    Ok(SealedSecret::new(sealed))
}

/// One of our SAML keys, opened (PKCS#8 DER). One that does not open is our failure.
pub async fn open_sp_key(
    services: &Services,
    idp: &IdpId,
    key_use: SpKeyUse,
    sealed: &SealedSecret,
) -> Result<Vec<u8>, ServerError> {
    let sealer = sealer(services).await?;
    sealer
        .open(&key_use.context(idp), sealed.as_str())
        .ok_or_else(|| ServerError::internal("a SAML service provider key does not open"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{IdpDomains, LinkBy, OidcConnection, TokenEndpointAuth};
    use crate::random::RandomExt;
    use crate::test_state::TestState;

    fn oidc_idp(state: &TestState, id: IdpId, client_secret: SealedSecret) -> IdentityProvider {
        IdentityProvider {
            id,
            company_id: crate::domain::PrincipalId::new(state.services.ctx.random.uuid()),
            name: "Sign in with Acme".to_owned(),
            protocol: IdpProtocol::Oidc(OidcConnection {
                issuer: "https://idp.acme.example".to_owned(),
                client_id: "concur".to_owned(),
                client_secret,
                scopes: vec!["openid".to_owned()],
                token_endpoint_auth: TokenEndpointAuth::default(),
            }),
            domains: IdpDomains::default(),
            link_by: LinkBy::Email,
            jit: true,
            trust_mfa: false,
            id_jag: false,
            created_at: 0,
        }
    }

    #[tokio::test]
    async fn a_sealed_secret_opens_for_its_idp_only() {
        let state = TestState::new().await;
        let services = &state.services;
        let id = IdpId::new(services.ctx.random.uuid());
        let sealed = seal_client_secret(services, &id, "s3cret-upstream")
            .await
            .unwrap();
        assert!(!sealed.as_str().contains("s3cret-upstream"));
        let again = seal_client_secret(services, &id, "s3cret-upstream")
            .await
            .unwrap();
        assert_ne!(sealed, again, "a fresh nonce each time");

        let idp = oidc_idp(&state, id, sealed.clone());
        let opened = open_client_secret(services, &idp).await.unwrap();
        assert_eq!(opened.expose(), "s3cret-upstream");

        let other = IdpId::new(services.ctx.random.uuid());
        let moved = oidc_idp(&state, other, sealed);
        assert!(
            open_client_secret(services, &moved).await.is_err(),
            "sealed for another IdP"
        );
        let forged = oidc_idp(&state, id, SealedSecret::new("s3cret-upstream"));
        assert!(open_client_secret(services, &forged).await.is_err());
    }
}
