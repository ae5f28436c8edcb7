//! Dynamic client registration (RFC 7591) and its management (RFC 7592): a client registers
//! itself, then reads, replaces or deletes its registration with the registration access token
//! it got. Initial access tokens (`DYNAMIC_REGISTRATION=token`) are created here for `tokenctl`.
//!
//! Every credential handed out (the initial and registration access tokens, a client secret) is
//! shown once and kept as a digest only.

use std::net::IpAddr;

use crate::audit;
use crate::clock::UnixTime;
use crate::config::RegistrationMode;
use crate::context::Context;
use crate::domain::audit::{AuditKind, AuditSubject, RevocationReason};
use crate::domain::{
    CheckedMetadata, Client, ClientAuthMethod, ClientId, ClientMetadata, ClientSecrets,
    DynamicRegistration, RegisteredAuthMethod, RegistrationError, SecretId,
};
use crate::errors::{Denial, Refusal};
use crate::limits::{source_subject, Exceeded, Limit};
use crate::random::RandomExt;
use crate::secrets::{Secret, TokenHash};
use crate::services::Services;
use crate::store::{revoke_family_recorded, AuditQuery};

/// The longest life of an initial access token, in days (a year).
pub const MAX_INITIAL_TOKEN_DAYS: u32 = 365;
/// An initial access token's life when `--expires-in` is not given.
pub const DEFAULT_INITIAL_TOKEN_DAYS: u32 = 30;

/// Why a registration request or a management call is refused. Nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationDenial {
    /// `DYNAMIC_REGISTRATION=off`: there is no endpoint (404).
    #[error("dynamic client registration is off")]
    Off,
    /// A missing or wrong initial or registration access token (401). An unknown or deleted
    /// client answers the same, so the endpoint does not say which client ids exist.
    #[error("missing or invalid access token")]
    InvalidToken,
    #[error(transparent)]
    Invalid(#[from] RegistrationError),
    #[error("too many registrations from this address")]
    RateLimited(Exceeded),
}

impl Denial for RegistrationDenial {}

impl From<Exceeded> for RegistrationDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::RateLimited(exceeded)
    }
}

pub type RegistrationFailure = Refusal<RegistrationDenial>;

mod response;

pub use response::{registration_client_path, RegistrationResponse};

/// RFC 7591 §3: registers a client. `initial_token` is the request's bearer token, if any;
/// `source` the caller's address, counted against `RATE_LIMIT_REGISTRATIONS_PER_HOUR`.
pub async fn register(
    services: &Services,
    initial_token: Option<&str>,
    source: Option<IpAddr>,
    metadata: ClientMetadata,
    base: &str,
) -> Result<RegistrationResponse, RegistrationFailure> {
    let ctx = &services.ctx;
    let now = ctx.clock.now();
    match services.policy.registration.mode {
        RegistrationMode::Off => return Err(RegistrationDenial::Off.into()),
        RegistrationMode::Open => {}
        RegistrationMode::Token => {
            let valid = match initial_token {
                Some(token) => {
                    ctx.store
                        .registration_tokens()
                        .registration_token_valid(&TokenHash::of(token), now)
                        .await?
                }
                None => false,
            };
            if !valid {
                return Err(RegistrationDenial::InvalidToken.into());
            }
        }
    }
    if let Some(source) = source {
        services
            .limiter()
            .count(Limit::AddressRegistrations, &source_subject(source), now)
            .await?;
    }
    let checked = metadata
        .check(&services.policy.registration.scopes)
        .map_err(RegistrationDenial::from)?;
    let access_token = new_credential(ctx);
    let client_secret = checked
        .auth_method
        .uses_secret()
        .then(|| Secret::new(ctx.random.uuid().hyphenated().to_string()));
    // A client without a secret still gets a set of one: the digest of a value nobody was
    // shown, so no presented secret ever matches it.
    let secret_hash = client_secret
        .as_ref()
        .map_or_else(|| new_credential(ctx).hash(), Secret::hash);
    let secrets = ClientSecrets::first(SecretId::new(ctx.random.uuid()), secret_hash, now, None);
    let mut client = Client {
        id: ClientId::new(ctx.random.uuid()),
        name: String::new(),
        secrets,
        allowed_scopes: checked.scope.clone(),
        grants: checked.grant_types.clone(),
        connect_url: None,
        refresh_allowed: false,
        enabled: true,
        created_at: now,
        first_party: false,
        redirect_uris: Vec::new(),
        refresh_rotation: crate::domain::RefreshRotation::Rotate,
        post_logout_redirect_uris: Vec::new(),
        jwks: None,
        require_dpop: false,
        require_par: false,
        profile: crate::domain::ClientProfile::Default,
        auth_method: None,
        backchannel_logout_uri: None,
        registration: None,
        resources: Vec::new(),
        document_url: None,
        id_jag_targets: Vec::new(),
    };
    apply(&mut client, checked, access_token.hash());
    ctx.store.clients().put_client(&client).await?;
    audit::record(
        ctx,
        audit::event(ctx, AuditKind::ClientRegistered).client(client.id),
    )
    .await;
    let mut response =
        RegistrationResponse::of(&client, base).ok_or(RegistrationDenial::InvalidToken)?;
    response.registration_access_token = Some(access_token.expose().to_owned());
    if let Some(secret) = client_secret {
        response.client_secret = Some(secret.expose().to_owned());
        response.client_secret_expires_at = Some(0);
    }
    Ok(response)
}

/// Sets what checked metadata decides on `client`, keeping its id, secrets and creation time.
fn apply(client: &mut Client, checked: CheckedMetadata, access_token_hash: TokenHash) {
    client.name = checked
        .client_name
        .unwrap_or_else(|| default_name(&checked.redirect_uris));
    client.allowed_scopes = checked.scope;
    client.refresh_allowed = checked
        .grant_types
        .contains(&crate::domain::GrantType::RefreshToken);
    client.grants = checked.grant_types;
    client.redirect_uris = checked.redirect_uris;
    client.jwks = checked.jwks;
    client.require_par = checked.require_par;
    client.post_logout_redirect_uris = checked.post_logout_redirect_uris;
    client.backchannel_logout_uri = checked.backchannel_logout_uri;
    client.auth_method = match checked.auth_method {
        RegisteredAuthMethod::PrivateKeyJwt => Some(ClientAuthMethod::PrivateKeyJwt),
        RegisteredAuthMethod::ClientSecretBasic | RegisteredAuthMethod::ClientSecretPost => {
            Some(ClientAuthMethod::ClientSecret)
        }
        RegisteredAuthMethod::None => None,
    };
    client.first_party = false;
    client.registration = Some(DynamicRegistration {
        access_token_hash,
        auth_method: checked.auth_method,
        client_uri: checked.client_uri,
        logo_uri: checked.logo_uri,
        policy_uri: checked.policy_uri,
        tos_uri: checked.tos_uri,
        backchannel_logout_session_required: checked.backchannel_logout_session_required,
        jwks_uri: checked.jwks_uri,
    });
}

/// A client without a name is called by the host it returns to: what the consent page shows.
fn default_name(redirect_uris: &[String]) -> String {
    redirect_uris
        .first()
        .and_then(|uri| url::Url::parse(uri).ok())
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_else(|| "unnamed application".to_owned())
}

fn new_credential(ctx: &Context) -> Secret {
    let mut bytes = [0u8; 32];
    ctx.random.fill(&mut bytes);
    Secret::new(base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        bytes,
    ))
}

/// The self-registered, enabled client `id` if `token` is its registration access token, and
/// the token's digest.
async fn managed_client(
    services: &Services,
    id: &str,
    token: Option<&str>,
) -> Result<(Client, TokenHash), RegistrationFailure> {
    if services.policy.registration.mode == RegistrationMode::Off {
        return Err(RegistrationDenial::Off.into());
    }
    let (Ok(id), Some(token)) = (ClientId::parse(id), token) else {
        return Err(RegistrationDenial::InvalidToken.into());
    };
    let client = services
        .ctx
        .store
        .clients()
        .get_client_uncached(&id)
        .await?
        .filter(|client| client.enabled)
        .ok_or(RegistrationDenial::InvalidToken)?;
    let presented = TokenHash::of(token);
    let matches = client
        .registration
        .as_ref()
        .is_some_and(|r| bool::from(r.access_token_hash.ct_matches(&presented)));
    if matches {
        Ok((client, presented))
    } else {
        Err(RegistrationDenial::InvalidToken.into())
    }
}

/// RFC 7592 §2.1: the client's current registration, with a new registration access token
/// (RFC 7592 §3: every answer carries both the URI and a token, and only a digest of the token
/// is kept, so the answer's token is a new one; the presented one stops working).
pub async fn read(
    services: &Services,
    id: &str,
    token: Option<&str>,
    base: &str,
) -> Result<RegistrationResponse, RegistrationFailure> {
    let (client, presented) = managed_client(services, id, token).await?;
    replace_rotating_token(services, client, &presented, base).await
}

/// Writes `client` with a new registration access token in place of `presented`, if no other
/// request rotated it meanwhile (then the caller's token is already spent: 401), and answers
/// its metadata with the new token.
async fn replace_rotating_token(
    services: &Services,
    mut client: Client,
    presented: &TokenHash,
    base: &str,
) -> Result<RegistrationResponse, RegistrationFailure> {
    let access_token = new_credential(&services.ctx);
    let registration = client
        .registration
        .as_mut()
        .ok_or(RegistrationDenial::InvalidToken)?;
    registration.access_token_hash = access_token.hash();
    let written = services
        .ctx
        .store
        .clients()
        .replace_registered_client(&client, presented)
        .await?;
    if !written {
        return Err(RegistrationDenial::InvalidToken.into());
    }
    let mut response =
        RegistrationResponse::of(&client, base).ok_or(RegistrationDenial::InvalidToken)?;
    response.registration_access_token = Some(access_token.expose().to_owned());
    Ok(response)
}

/// RFC 7592 §2.2: replaces the registration's metadata, checked as at registration, and
/// rotates the registration access token as a read does. The authentication method stays the
/// one registered: changing it would need a new secret or withdraw one, which is a new
/// registration.
pub async fn update(
    services: &Services,
    id: &str,
    token: Option<&str>,
    metadata: ClientMetadata,
    base: &str,
) -> Result<RegistrationResponse, RegistrationFailure> {
    let (mut client, presented) = managed_client(services, id, token).await?;
    let checked = metadata
        .check(&services.policy.registration.scopes)
        .map_err(RegistrationDenial::from)?;
    let registration = client
        .registration
        .clone()
        .ok_or(RegistrationDenial::InvalidToken)?;
    if checked.auth_method != registration.auth_method {
        return Err(RegistrationDenial::Invalid(RegistrationError {
            kind: crate::domain::RegistrationErrorKind::InvalidClientMetadata,
            description: format!(
                "token_endpoint_auth_method cannot change (registered as {})",
                registration.auth_method.as_str()
            ),
        })
        .into());
    }
    apply(&mut client, checked, registration.access_token_hash);
    let client_id = client.id;
    let response = replace_rotating_token(services, client, &presented, base).await?;
    let ctx = &services.ctx;
    audit::record(
        ctx,
        audit::event(ctx, AuditKind::ClientRegistrationUpdated).client(client_id),
    )
    .await;
    Ok(response)
}

/// RFC 7592 §2.3: the client is disabled (its token and code requests refused from now on) and
/// every family it started is revoked.
pub async fn delete(
    services: &Services,
    id: &str,
    token: Option<&str>,
) -> Result<(), RegistrationFailure> {
    let (mut client, _) = managed_client(services, id, token).await?;
    let ctx = &services.ctx;
    client.enabled = false;
    ctx.store.clients().put_client(&client).await?;
    audit::record(
        ctx,
        audit::event(ctx, AuditKind::ClientRegistrationDeleted).client(client.id),
    )
    .await;
    revoke_families(ctx, client.id).await?;
    Ok(())
}

/// Revokes every family the client started. The store keeps no index of families by client;
/// the client's audit trail has every `family.started` (written in the family's own write, and
/// kept longer than any family lives), so it is the list.
async fn revoke_families(ctx: &Context, client: ClientId) -> Result<(), RegistrationFailure> {
    let now = ctx.clock.now();
    let events = ctx
        .store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Client(client),
            since: None,
            now,
        })
        .await?;
    let families = events.iter().filter_map(|event| match event.kind {
        AuditKind::FamilyStarted { .. } => event.family_id,
        _ => None,
    });
    for family in families {
        let revoked = audit::event(
            ctx,
            AuditKind::FamilyRevoked {
                reason: RevocationReason::RegistrationDeleted,
            },
        )
        .client(client)
        .family(family);
        revoke_family_recorded(ctx.store.as_ref(), &family, now, vec![revoked]).await?;
    }
    Ok(())
}

/// A new initial access token, valid for `expires_in_days` (default 30), shown this once.
pub async fn create_initial_access_token(
    ctx: &Context,
    expires_in_days: Option<u32>,
) -> Result<(Secret, UnixTime), crate::store::StoreError> {
    let days = expires_in_days
        .unwrap_or(DEFAULT_INITIAL_TOKEN_DAYS)
        .clamp(1, MAX_INITIAL_TOKEN_DAYS);
    let token = new_credential(ctx);
    let expires = ctx.clock.now() + i64::from(days) * 86_400;
    ctx.store
        .registration_tokens()
        .put_registration_token(&token.hash(), expires)
        .await?;
    audit::record(ctx, audit::event(ctx, AuditKind::RegistrationTokenCreated)).await;
    Ok((token, expires))
}
