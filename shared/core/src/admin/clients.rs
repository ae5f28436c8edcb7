//! Applications: registration, their settings, their secrets and keys (`tokenctl clients`).

use crate::context::Context;
use crate::domain::audit::AuditKind;
pub use crate::domain::NewClient;
use crate::domain::{
    check_backchannel_logout_uri, check_connect_url, check_post_logout_redirect_uri,
    check_redirect_uri, Client, ClientAuthMethod, ClientId, ClientSecrets, GrantType, ListedSecret,
    RefreshRotation, SecretId,
};
use crate::errors::Refusal;
use crate::flows::client_secrets::{self, AddedSecret, SecretAddedBy, SecretsDenial, SecretsError};
use crate::jose::PublicJwkSet;
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::store::StoreError;

use super::{client_changed, not_found, AdminError};

/// The secret is returned once, here, and never stored in clear.
#[derive(Debug)]
pub struct CreatedClient {
    pub client: Client,
    pub secret: Secret,
}

pub async fn create_client(ctx: &Context, new: NewClient) -> Result<CreatedClient, AdminError> {
    let name = new.name.trim();
    if name.is_empty() {
        return Err(AdminError::Invalid("client name must not be empty".into()));
    }
    if new.grants.is_empty() {
        return Err(AdminError::Invalid(
            "a client needs at least one grant".into(),
        ));
    }
    if let Some(url) = &new.connect_url {
        check_connect_url(url).map_err(|e| AdminError::Invalid(e.to_string()))?;
    }
    for uri in &new.redirect_uris {
        check_redirect_uri(uri).map_err(|e| AdminError::Invalid(e.to_string()))?;
    }
    for uri in &new.post_logout_redirect_uris {
        check_post_logout_redirect_uri(uri)
            .map_err(|e| AdminError::Invalid(format!("post-logout {e}")))?;
    }
    if let Some(uri) = &new.backchannel_logout_uri {
        check_backchannel_logout_uri(uri).map_err(|e| AdminError::Invalid(e.to_string()))?;
    }
    // The specification types client_secret as a UUID.
    let secret = Secret::new(ctx.random.uuid().hyphenated().to_string());
    let now = ctx.clock.now();
    let name = name.to_owned();
    let secrets = ClientSecrets::first(SecretId::new(ctx.random.uuid()), secret.hash(), now, None);
    let client =
        NewClient { name, ..new }.into_client(ClientId::new(ctx.random.uuid()), secrets, now);
    ctx.store.clients().put_client(&client).await?;
    client_changed(ctx, AuditKind::ClientCreated, client.id).await;
    Ok(CreatedClient { client, secret })
}

pub async fn disable_client(ctx: &Context, id: &ClientId) -> Result<Client, AdminError> {
    let client = change_client(ctx, id, |client| client.enabled = false).await?;
    client_changed(ctx, AuditKind::ClientDisabled, client.id).await;
    Ok(client)
}

/// Takes effect at the client's next refresh (`tokenctl clients set-refresh-rotation`).
pub async fn set_refresh_rotation(
    ctx: &Context,
    id: &ClientId,
    rotation: RefreshRotation,
) -> Result<Client, AdminError> {
    let client = change_client(ctx, id, |client| client.refresh_rotation = rotation).await?;
    let kind = AuditKind::ClientRefreshRotationSet { rotation };
    client_changed(ctx, kind, client.id).await;
    Ok(client)
}

/// Registers (replacing any) the client's public keys for `private_key_jwt`; its secret keeps
/// working beside them (`tokenctl clients set-jwks`).
pub async fn set_client_jwks(
    ctx: &Context,
    id: &ClientId,
    jwks: PublicJwkSet,
) -> Result<Client, AdminError> {
    update_client(ctx, id, |client| client.jwks = Some(jwks)).await
}

/// Sets (or, with `None`, removes) where back-channel logout tokens are sent, from the next
/// session end on (`tokenctl clients set-backchannel-logout-uri`).
pub async fn set_backchannel_logout_uri(
    ctx: &Context,
    id: &ClientId,
    uri: Option<String>,
) -> Result<Client, AdminError> {
    if let Some(uri) = &uri {
        check_backchannel_logout_uri(uri).map_err(|e| AdminError::Invalid(e.to_string()))?;
    }
    update_client(ctx, id, |client| client.backchannel_logout_uri = uri).await
}

/// Reads a JWK Set for `private_key_jwt` from JSON text, refusing private, symmetric and
/// unsupported keys with a message saying which key and why.
pub fn parse_jwks(text: &str) -> Result<PublicJwkSet, AdminError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| AdminError::Invalid(format!("the JWK Set is not JSON: {e}")))?;
    PublicJwkSet::parse(value).map_err(|e| AdminError::Invalid(format!("JWK Set refused: {e}")))
}

/// Reads a client, changes it, and writes it back: every `tokenctl clients set-*` verb.
/// Recorded as `client.updated`.
pub async fn update_client(
    ctx: &Context,
    id: &ClientId,
    change: impl FnOnce(&mut Client),
) -> Result<Client, AdminError> {
    let client = change_client(ctx, id, change).await?;
    client_changed(ctx, AuditKind::ClientUpdated, client.id).await;
    Ok(client)
}

/// [`update_client`] for a change recorded as an event of its own.
pub(super) async fn change_client(
    ctx: &Context,
    id: &ClientId,
    change: impl FnOnce(&mut Client),
) -> Result<Client, AdminError> {
    let mut client = existing_client(ctx, id).await?;
    change(&mut client);
    ctx.store.clients().put_client(&client).await?;
    Ok(client)
}

/// The client `id` names, or [`AdminError`]'s "not found".
/// Every client, oldest first (`tokenctl clients list`).
pub async fn list_clients(ctx: &Context) -> Result<Vec<Client>, AdminError> {
    Ok(ctx.store.clients().list_clients().await?)
}

pub async fn existing_client(ctx: &Context, id: &ClientId) -> Result<Client, AdminError> {
    ctx.store
        .clients()
        .get_client(id)
        .await?
        .ok_or_else(|| not_found("client", id))
}

/// Takes effect at the client's next token request (`tokenctl clients set-require-dpop`):
/// tokens issued before keep their binding, or their lack of one.
pub async fn set_require_dpop(
    ctx: &Context,
    id: &ClientId,
    require_dpop: bool,
) -> Result<Client, AdminError> {
    update_client(ctx, id, |client| client.require_dpop = require_dpop).await
}

/// Puts the client under a security profile (`tokenctl clients set-profile`), from its next
/// request.
pub async fn set_profile(
    ctx: &Context,
    id: &ClientId,
    profile: crate::domain::ClientProfile,
) -> Result<Client, AdminError> {
    update_client(ctx, id, |client| client.profile = profile).await
}

/// Pins the client to one authentication method (`None`: either), from its next request
/// (`tokenctl clients set-auth-method`). Pinning to `private_key_jwt` needs keys registered;
/// a public client (`none`) may not use `client_credentials`, which would then issue
/// application tokens to anyone who knows its id.
pub async fn set_auth_method(
    ctx: &Context,
    id: &ClientId,
    method: Option<ClientAuthMethod>,
) -> Result<Client, AdminError> {
    if method == Some(ClientAuthMethod::Public) {
        let client = existing_client(ctx, id).await?;
        if client.may_use(GrantType::ClientCredentials) {
            return Err(AdminError::Invalid(
                "a public client may not use client_credentials: create it with --grants \
                 naming the grants it uses (device_code, refresh_token, ...)"
                    .to_owned(),
            ));
        }
    }
    if method == Some(ClientAuthMethod::PrivateKeyJwt) {
        let client = existing_client(ctx, id).await?;
        if client.jwks.is_none() {
            return Err(AdminError::Invalid(
                "the client has no JWK Set: register its keys first (clients set-jwks)".to_owned(),
            ));
        }
    }
    update_client(ctx, id, |client| client.auth_method = method).await
}

/// `clients secrets add`: a new secret, shown once, expiring after `expires_in_days` if given.
pub async fn add_client_secret(
    ctx: &Context,
    id: &ClientId,
    expires_in_days: Option<u32>,
) -> Result<AddedSecret, AdminError> {
    client_secrets::add_secret(ctx, id, expires_in_days, SecretAddedBy::Administrator)
        .await
        .map_err(|e| secrets_error(e, id))
}

/// `clients secrets list`: ids and dates, never a secret or its digest.
pub async fn list_client_secrets(
    ctx: &Context,
    id: &ClientId,
) -> Result<Vec<ListedSecret>, AdminError> {
    client_secrets::list_secrets(ctx, id)
        .await
        .map_err(|e| secrets_error(e, id))
}

/// `clients secrets revoke`: refused for the client's last unexpired secret.
pub async fn revoke_client_secret(
    ctx: &Context,
    id: &ClientId,
    secret_id: &SecretId,
) -> Result<(), AdminError> {
    client_secrets::revoke_secret(ctx, id, secret_id)
        .await
        .map_err(|e| secrets_error(e, id))
}

fn secrets_error(error: SecretsError, client: &ClientId) -> AdminError {
    use crate::domain::SecretsRefusal;
    match error {
        Refusal::Denied(SecretsDenial::UnknownClient) => not_found("client", client),
        Refusal::Denied(SecretsDenial::Refused(SecretsRefusal::UnknownSecret)) => {
            AdminError::NotFound {
                what: "client secret",
                id: format!("of client {client}"),
            }
        }
        Refusal::Denied(denial @ SecretsDenial::InvalidExpiry(_)) => {
            AdminError::Invalid(denial.to_string())
        }
        Refusal::Denied(SecretsDenial::Refused(refusal)) => {
            AdminError::Conflict(refusal.to_string())
        }
        Refusal::Server(crate::errors::ServerError::Store(error)) => AdminError::Store(error),
        Refusal::Server(other) => AdminError::Store(StoreError::unavailable(other.to_string())),
    }
}
