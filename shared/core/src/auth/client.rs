//! Client authentication at the token endpoint (RFC 6749 §2.3.1): `client_id` and
//! `client_secret` in the body, or HTTP Basic (decoded by HTTP). Both at once must agree. A
//! signed client assertion (`private_key_jwt`) is the other method, in `client_assertion.rs`.
//! `WWW-Authenticate: Basic` on an `invalid_client` refusal to a Basic request is HTTP's to add.

use super::client_assertion;
use crate::client_documents::DocumentError;
use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::audit::AuthenticationFailure;
use crate::domain::{Client, ClientAuthMethod, ClientId, SecretCheck, SecretId};
use crate::errors::{ErrorCode, GrantError};
use crate::limits::LimitError;
use crate::requests::PresentedClient;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::StoreError;

/// The id and secret a request presents, once the body and the Basic header are reconciled.
#[derive(Debug)]
struct Presented {
    id: Option<String>,
    secret: Option<Secret>,
}

impl Services {
    /// The client registered as `id`, or the caller's `unknown` refusal when there is none. Every
    /// endpoint that names a client looks it up this way; a store failure stays the caller's 503.
    pub async fn registered_client<E: From<StoreError>>(
        &self,
        id: &ClientId,
        unknown: impl FnOnce() -> E,
    ) -> Result<Client, E> {
        self.ctx
            .store
            .clients()
            .get_client(id)
            .await?
            .ok_or_else(unknown)
    }

    /// The client a request names by its `client_id` text: a registered one by its UUID, or,
    /// with client ID metadata documents on, the client of the document a URL names (fetched
    /// unless kept and fresh). `unknown` for neither, and for a document that cannot be fetched
    /// or does not pass (the reason is logged); a fetch past the source address's limit is the
    /// limit's refusal (429); a store failure stays the caller's 503.
    pub async fn named_client<E: From<StoreError> + From<LimitError>>(
        &self,
        client_id: &str,
        unknown: impl FnOnce() -> E,
    ) -> Result<Client, E> {
        if self.client_documents.names_document(client_id) {
            return match self.document_client(client_id).await {
                Ok(client) => Ok(client),
                Err(DocumentError::Store(error)) => Err(error.into()),
                Err(DocumentError::Limited(exceeded)) => Err(LimitError::Exceeded(exceeded).into()),
                Err(DocumentError::Unusable(_)) => Err(unknown()),
            };
        }
        match ClientId::parse(client_id) {
            Ok(id) => self.registered_client(&id, unknown).await,
            Err(_) => Err(unknown()),
        }
    }

    /// The client of the metadata document at `url` (see [`crate::client_documents`]).
    pub async fn document_client(&self, url: &str) -> Result<Client, DocumentError> {
        self.client_documents
            .client(
                &self.ctx,
                &self.policy.registration.scopes,
                self.limiter(),
                url,
            )
            .await
    }

    /// The client `id` names, registered or a document's kept one (fresh or not): for what
    /// holds a client's id only, such as a pending sign-in, once the request named it.
    pub async fn known_client(&self, id: &ClientId) -> Result<Option<Client>, StoreError> {
        if let Some(client) = self.ctx.store.clients().get_client(id).await? {
            return Ok(Some(client));
        }
        self.client_documents.kept(&self.ctx, id).await
    }
}

/// Authenticates the calling client, or says why not.
pub async fn authenticate_client(
    services: &Services,
    presented: &PresentedClient,
) -> Result<Client, GrantError> {
    if presented.presents_assertion() {
        let client = client_assertion::authenticate(services, presented).await?;
        if client.auth_method == Some(ClientAuthMethod::ClientSecret) || client.is_public() {
            tracing::info!("client assertion from a client pinned to its secret or to none");
            return Err(ErrorCode::ClientAssertionInvalid.into());
        }
        return Ok(client);
    }
    let presented = presented_credentials(presented)?;
    let id = presented.id.as_deref().ok_or(ErrorCode::ClientIdMissing)?;
    let Some(secret) = presented.secret.as_ref() else {
        return public_client(services, id).await;
    };
    let id = ClientId::parse(id).map_err(|_| ErrorCode::ClientNotFound)?;
    let store = services.ctx.store.clients();
    let now = services.ctx.clock.now();
    let mut client = services
        .registered_client(&id, || GrantError::from(ErrorCode::ClientNotFound))
        .await?;
    let mut checked = client.check_secret(secret.expose(), now);
    if checked == SecretCheck::Wrong && store.caches_clients() {
        // A secret added elsewhere since this instance cached the client works at once too.
        client = store
            .get_client_uncached(&id)
            .await?
            .ok_or(ErrorCode::ClientNotFound)?;
        checked = client.check_secret(secret.expose(), now);
    }
    let (secret_id, record_use) = match checked {
        SecretCheck::Valid { id, record_use } => (id, record_use),
        SecretCheck::Expired => {
            let reason = AuthenticationFailure::ExpiredSecret;
            crate::audit::authentication_failed(&services.ctx, client.id, reason).await;
            return Err(ErrorCode::ClientSecretExpired.into());
        }
        SecretCheck::Wrong => {
            let reason = AuthenticationFailure::WrongSecret;
            crate::audit::authentication_failed(&services.ctx, client.id, reason).await;
            return Err(ErrorCode::IncorrectClientSecret.into());
        }
    };
    // The FAPI 2.0 profile authenticates by private_key_jwt only (63, the assertion it lacks).
    if client.is_fapi2() {
        tracing::info!("client secret from a client under the FAPI 2.0 profile");
        return Err(ErrorCode::ClientAssertionInvalid.into());
    }
    // A client pinned to private_key_jwt or to none: its secret, even a right one, does not
    // authenticate (answered as a wrong one, so the pin is not revealed to whoever holds the
    // secret).
    if matches!(
        client.auth_method,
        Some(ClientAuthMethod::PrivateKeyJwt | ClientAuthMethod::Public)
    ) {
        tracing::info!("client secret from a client pinned to private_key_jwt or to none");
        return Err(ErrorCode::IncorrectClientSecret.into());
    }
    // Only an authenticated client learns that it is disabled.
    if !client.enabled {
        return Err(ErrorCode::ClientDisabled.into());
    }
    if record_use {
        record_secret_use(&services.ctx, &client, &secret_id, now).await;
    }
    Ok(client)
}

/// A request with `client_id` and no secret: only a public client authenticates so, one
/// self-registered with `token_endpoint_auth_method=none` (RFC 7591, or a client ID metadata
/// document's; it may use no grant but the code and refresh) or one an administrator pinned to
/// `none` (for the device grant, RFC 8628 §3.1). Its codes are bound to it by PKCE, which it
/// must send on every authorization request, or by the device code only it holds. Any other
/// client is missing its secret (63).
async fn public_client(services: &Services, id: &str) -> Result<Client, GrantError> {
    // A client ID metadata document's URL names a client that never has a secret: one that
    // cannot be had is not found (61) rather than missing its secret.
    let unknown = if services.client_documents.names_document(id) {
        ErrorCode::ClientNotFound
    } else {
        ErrorCode::ClientSecretMissing
    };
    let client = services
        .named_client(id, || GrantError::from(unknown))
        .await?;
    if !client.is_public() {
        return Err(ErrorCode::ClientSecretMissing.into());
    }
    if client.is_fapi2() {
        return Err(ErrorCode::ClientAssertionInvalid.into());
    }
    if !client.enabled {
        return Err(ErrorCode::ClientDisabled.into());
    }
    Ok(client)
}

/// The body's credentials, or Basic's when the request sent the header: a malformed header is
/// refused with the code HTTP gave it, a body that names other credentials with 115.
fn presented_credentials(presented: &PresentedClient) -> Result<Presented, ErrorCode> {
    let Some(basic) = &presented.basic else {
        return Ok(Presented {
            id: presented.client_id.clone(),
            secret: presented.client_secret.clone(),
        });
    };
    let basic = basic.as_ref().map_err(|code| *code)?;
    let conflicting = presented
        .client_id
        .as_deref()
        .is_some_and(|id| id != basic.id)
        || presented
            .client_secret
            .as_ref()
            .is_some_and(|secret| secret.expose() != basic.secret.expose());
    if conflicting {
        return Err(ErrorCode::UnauthenticatedClient);
    }
    // An empty half is a missing one (62, 63), as an empty body field is.
    Ok(Presented {
        id: Some(basic.id.clone()).filter(|id| !id.is_empty()),
        secret: Some(basic.secret.clone()).filter(|secret| !secret.is_empty()),
    })
}

/// Records that `secret_id` authenticated `client` at `now` (the caller has checked that it is
/// due: at most hourly). An earlier single-secret record is migrated by this write. Best
/// effort: a failure is logged and the request goes on, since `last_used` only informs.
pub async fn record_secret_use(
    ctx: &Context,
    client: &Client,
    secret_id: &SecretId,
    now: UnixTime,
) {
    let store = ctx.store.clients();
    let written = if client.secrets.is_legacy() {
        let next = client
            .secrets
            .with_use_recorded(client.created_at, secret_id, now);
        store
            .replace_client_secrets(&client.id, client.secrets.version(), &next)
            .await
    } else {
        store.record_secret_use(&client.id, secret_id, now).await
    };
    if let Err(error) = written {
        tracing::warn!(
            error = &error as &(dyn std::error::Error + 'static),
            "could not record a client secret's use"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::BasicCredentials;

    fn with_basic(
        body: PresentedClient,
        basic: Result<BasicCredentials, ErrorCode>,
    ) -> PresentedClient {
        PresentedClient {
            basic: Some(basic),
            ..body
        }
    }

    fn basic(id: &str, secret: &str) -> BasicCredentials {
        BasicCredentials {
            id: id.to_owned(),
            secret: Secret::new(secret),
        }
    }

    fn body_id(id: &str) -> PresentedClient {
        PresentedClient {
            client_id: Some(id.to_owned()),
            ..PresentedClient::default()
        }
    }

    #[test]
    fn an_empty_half_of_basic_is_missing() {
        let no_secret =
            presented_credentials(&with_basic(PresentedClient::default(), Ok(basic("a", ""))))
                .unwrap();
        assert_eq!(no_secret.id.as_deref(), Some("a"));
        assert!(no_secret.secret.is_none());
        let no_id =
            presented_credentials(&with_basic(PresentedClient::default(), Ok(basic("", "s"))))
                .unwrap();
        assert!(no_id.id.is_none());
        assert_eq!(
            no_id.secret.map(|s| s.expose().to_owned()).as_deref(),
            Some("s")
        );
    }

    #[test]
    fn body_and_basic_must_agree() {
        let err =
            presented_credentials(&with_basic(body_id("a"), Ok(basic("b", "s")))).unwrap_err();
        assert_eq!(err, ErrorCode::UnauthenticatedClient);
        let ok = presented_credentials(&with_basic(body_id("a"), Ok(basic("a", "s")))).unwrap();
        assert_eq!(ok.id.as_deref(), Some("a"));
    }

    #[test]
    fn a_malformed_basic_header_is_refused_with_its_code() {
        let malformed = with_basic(body_id("a"), Err(ErrorCode::IncorrectClientSecret));
        assert_eq!(
            presented_credentials(&malformed).unwrap_err(),
            ErrorCode::IncorrectClientSecret
        );
    }
}
