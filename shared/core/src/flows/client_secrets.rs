//! A client's secrets: list, add, revoke (behind `tokenctl clients secrets` and Concur's secrets
//! API for the app itself), and recording a secret's use at authentication. See
//! docs/decisions.md, Client secrets.
//!
//! Every change is a conditional write on the version of the set it read: two changes at once
//! never both pass the five-secret limit or both revoke one of the last two secrets; the loser
//! reads again and decides again.

use crate::audit;
use crate::auth::dpop::{authenticate_credential, credential, AccessDenial, DpopRequest};
use crate::auth::BearerDenial;
use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::audit::AuditKind;
use crate::domain::{
    Client, ClientId, ClientSecret, ListedSecret, PrincipalType, SecretId, SecretsRefusal, TokenId,
    SECRETS_MANAGEMENT_SCOPE,
};
use crate::errors::{Denial, Refusal};
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::StoreError;

/// The longest expiry `tokenctl clients secrets add` accepts, in days (ten years).
pub const MAX_EXPIRES_IN_DAYS: u32 = 3650;

/// The longest expiry an app may give a secret it adds for itself, in days (part 13).
pub const MAX_APP_EXPIRES_IN_DAYS: u32 = 365;

/// The expiry of a secret an app adds for itself without naming one, in days. Only an
/// application token authenticates the secrets API (as Concur's does), and access tokens travel
/// to resource servers: a secret added with a leaked token should not outlive the leak for ever
/// (docs/decisions.md, Client secrets). Administrators' secrets keep no default expiry.
pub const APP_ADDED_DEFAULT_EXPIRES_IN_DAYS: u32 = 90;

/// Who changes or lists the secrets: the default and longest expiry, the audit event's token
/// and the `client_secrets_added_total` label follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretAddedBy {
    /// The app itself, through the secrets API, with its token `jti`.
    App { jti: TokenId },
    /// An administrator, through `tokenctl`.
    Administrator,
}

impl SecretAddedBy {
    pub fn label(self) -> &'static str {
        match self {
            Self::App { .. } => "app",
            Self::Administrator => "administrator",
        }
    }

    fn default_expires_in_days(self) -> Option<u32> {
        match self {
            Self::App { .. } => Some(APP_ADDED_DEFAULT_EXPIRES_IN_DAYS),
            Self::Administrator => None,
        }
    }

    fn max_expires_in_days(self) -> u32 {
        match self {
            Self::App { .. } => MAX_APP_EXPIRES_IN_DAYS,
            Self::Administrator => MAX_EXPIRES_IN_DAYS,
        }
    }

    fn jti(self) -> Option<TokenId> {
        match self {
            Self::App { jti } => Some(jti),
            Self::Administrator => None,
        }
    }
}

/// Rounds of "read, decide, write if unchanged". Each lost round means another change of the
/// same client's secrets landed in between; more than a few in a row is a store problem.
const ROUNDS: usize = 5;

/// Why a change or a listing is refused. Nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretsDenial {
    #[error("client not found")]
    UnknownClient,
    #[error(transparent)]
    Refused(#[from] SecretsRefusal),
    /// The most days for this caller: [`MAX_APP_EXPIRES_IN_DAYS`] or [`MAX_EXPIRES_IN_DAYS`].
    #[error("expires-in must be between 1 and {0} days")]
    InvalidExpiry(u32),
}

impl Denial for SecretsDenial {}

pub type SecretsError = Refusal<SecretsDenial>;

/// A new secret, shown this once; only its digest is stored.
#[derive(Debug)]
pub struct AddedSecret {
    pub secret_id: SecretId,
    pub client_secret: Secret,
    pub created: UnixTime,
    pub expires: Option<UnixTime>,
}

/// The client's secrets, oldest first, as the store has them now (past the read cache).
pub async fn list_secrets(ctx: &Context, id: &ClientId) -> Result<Vec<ListedSecret>, SecretsError> {
    list_secrets_by(ctx, id, SecretAddedBy::Administrator).await
}

/// [`list_secrets`] for `by`: the app's listing is an audit event with its token.
pub async fn list_secrets_by(
    ctx: &Context,
    id: &ClientId,
    by: SecretAddedBy,
) -> Result<Vec<ListedSecret>, SecretsError> {
    let listed = current(ctx, id).await?.list_secrets();
    if let Some(jti) = by.jti() {
        secret_changed(ctx, AuditKind::ClientSecretsListed { jti }, *id).await;
    }
    Ok(listed)
}

/// Adds a secret that expires after `expires_in_days`, or after `by`'s default.
pub async fn add_secret(
    ctx: &Context,
    id: &ClientId,
    expires_in_days: Option<u32>,
    by: SecretAddedBy,
) -> Result<AddedSecret, SecretsError> {
    let expires_in_days = expires_in_days.or(by.default_expires_in_days());
    let max = by.max_expires_in_days();
    if expires_in_days.is_some_and(|days| days == 0 || days > max) {
        return Err(SecretsDenial::InvalidExpiry(max).into());
    }
    // The specification types client_secret as a UUID.
    let client_secret = Secret::new(ctx.random.uuid().hyphenated().to_string());
    let secret_id = SecretId::new(ctx.random.uuid());
    for _ in 0..ROUNDS {
        let client = current(ctx, id).await?;
        let created = ctx.clock.now();
        let expires = expires_in_days.map(|days| created + i64::from(days) * 86_400);
        let secret = ClientSecret {
            hash: client_secret.hash(),
            created,
            expires,
            last_used: None,
        };
        let next = client
            .secrets
            .with_added(client.created_at, secret_id, secret)
            .map_err(SecretsDenial::from)?;
        if replace(ctx, &client, &next).await? {
            let jti = by.jti();
            secret_changed(ctx, AuditKind::ClientSecretAdded { secret_id, jti }, *id).await;
            crate::measure::secret_added(by.label());
            return Ok(AddedSecret {
                secret_id,
                client_secret,
                created,
                expires,
            });
        }
    }
    Err(kept_changing())
}

/// Revokes a secret: it stops authenticating at once on this instance, and within the read
/// cache's bound everywhere.
pub async fn revoke_secret(
    ctx: &Context,
    id: &ClientId,
    secret_id: &SecretId,
) -> Result<(), SecretsError> {
    revoke_secret_by(ctx, id, secret_id, SecretAddedBy::Administrator).await
}

/// [`revoke_secret`] for `by`, whose token the audit event names.
pub async fn revoke_secret_by(
    ctx: &Context,
    id: &ClientId,
    secret_id: &SecretId,
    by: SecretAddedBy,
) -> Result<(), SecretsError> {
    for _ in 0..ROUNDS {
        let client = current(ctx, id).await?;
        let next = client
            .secrets
            .without(client.created_at, secret_id, ctx.clock.now())
            .map_err(SecretsDenial::from)?;
        if replace(ctx, &client, &next).await? {
            let kind = AuditKind::ClientSecretRevoked {
                secret_id: *secret_id,
                jti: by.jti(),
            };
            secret_changed(ctx, kind, *id).await;
            return Ok(());
        }
    }
    Err(kept_changing())
}

/// The audit event of a change to a client's secrets: after the change, best effort (the
/// change is the client record's own write; docs/decisions.md, "Audit events").
async fn secret_changed(ctx: &Context, kind: AuditKind, client: ClientId) {
    audit::record(ctx, audit::event(ctx, kind).client(client)).await;
}

async fn current(ctx: &Context, id: &ClientId) -> Result<Client, SecretsError> {
    ctx.store
        .clients()
        .get_client_uncached(id)
        .await?
        .ok_or(SecretsDenial::UnknownClient.into())
}

async fn replace(
    ctx: &Context,
    client: &Client,
    next: &crate::domain::ClientSecrets,
) -> Result<bool, StoreError> {
    ctx.store
        .clients()
        .replace_client_secrets(&client.id, client.secrets.version(), next)
        .await
}

fn kept_changing() -> SecretsError {
    Refusal::Server(
        StoreError::unavailable("the client's secrets kept changing during the update").into(),
    )
}

/// Why the secrets API refuses a caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppDenial {
    /// No, bad, expired or revoked bearer token, or a DPoP-bound one presented as a bearer
    /// token.
    #[error("{0}")]
    Bearer(BearerDenial),
    /// The `DPoP` scheme: an invalid or unbound token, or a refused proof.
    #[error("{0}")]
    Dpop(AccessDenial),
    /// A user's or a company's token: the API is the app's own, not its users'.
    #[error("not an application token")]
    NotAnApplicationToken,
    /// An application token of another app than the one in the path.
    #[error("a token of another application")]
    AnotherApp,
    /// The app is disabled: its tokens may still be live, but it manages nothing.
    #[error("the application is disabled")]
    Disabled,
    /// A token of the app that did not ask for [`SECRETS_MANAGEMENT_SCOPE`]: 403
    /// `insufficient_scope`.
    #[error("the token's scope does not include app-mgmt.secrets")]
    InsufficientScope,
}

/// The app a secrets API call may act for, and its token (the audit events name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorizedApp {
    pub id: ClientId,
    pub jti: TokenId,
}

impl AuthorizedApp {
    pub fn caller(self) -> SecretAddedBy {
        SecretAddedBy::App { jti: self.jti }
    }
}

impl Denial for AppDenial {}

impl From<BearerDenial> for AppDenial {
    fn from(denial: BearerDenial) -> Self {
        Self::Bearer(denial)
    }
}

impl From<AccessDenial> for AppDenial {
    fn from(denial: AccessDenial) -> Self {
        match denial {
            AccessDenial::Bearer(denial) => Self::Bearer(denial),
            other => Self::Dpop(other),
        }
    }
}

/// The app named in the path, when the `Authorization` header carries a live application
/// token (`client_credentials`) of that same app that asked for [`SECRETS_MANAGEMENT_SCOPE`],
/// and the app is enabled. A DPoP-bound token
/// comes as `Authorization: DPoP` with a proof (RFC 9449 §7.1), as at userinfo: a client
/// registered with `--require-dpop` holds no other kind.
pub async fn authorize_app(
    services: &Services,
    authorization: Option<&str>,
    dpop: &DpopRequest,
    path_client_id: &str,
) -> Result<AuthorizedApp, Refusal<AppDenial>> {
    let credential = authorization
        .ok_or(BearerDenial::Missing)
        .and_then(credential)
        .map_err(AppDenial::Bearer)?;
    let bearer = authenticate_credential(services, credential, dpop)
        .await
        .map_err(Refusal::widen)?;
    if bearer.principal_type() != PrincipalType::Application {
        return Err(AppDenial::NotAnApplicationToken.into());
    }
    let id = match ClientId::parse(path_client_id) {
        Ok(id) if id == bearer.client_id() => id,
        _ => return Err(AppDenial::AnotherApp.into()),
    };
    if !bearer.record.scopes.contains(SECRETS_MANAGEMENT_SCOPE) {
        return Err(AppDenial::InsufficientScope.into());
    }
    let client = services.ctx.store.clients().get_client(&id).await?;
    if !client.is_some_and(|client| client.enabled) {
        return Err(AppDenial::Disabled.into());
    }
    Ok(AuthorizedApp {
        id,
        jti: bearer.record.jti,
    })
}
