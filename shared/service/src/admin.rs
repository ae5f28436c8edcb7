//! Application management and company administration: the operations behind `tokenctl` and the
//! local demo data. They validate input, keep secrets hashed, and return what was created.
//! Each change is recorded as an audit event (docs/decisions.md, Audit events), best effort.

use std::collections::BTreeSet;

use crate::audit;
use crate::context::Context;
use crate::domain::audit::{AuditKind, RevocationReason};
use crate::domain::ChannelHandle;
use crate::domain::{
    check_connect_url, check_post_logout_redirect_uri, check_redirect_uri, Client, ClientId,
    ClientSecrets, Company, CompanyStatus, ConsumerKey, FamilyId, Geolocation, GrantType,
    LegacyApp, ListedSecret, Login, PrincipalId, PrincipalType, RefreshRotation, Scopes, SecretId,
    User, UserStatus,
};
use crate::errors::Refusal;
use crate::flows::client_secrets::{self, AddedSecret, SecretsDenial, SecretsError};
use crate::jose::PublicJwkSet;
use crate::random::RandomExt;
use crate::secrets::{PasswordHash, Secret};
use crate::store::{EmailUpdate, FamilyRevoked, Inserted, StoreError};

/// Records what an administrator did to a client.
async fn client_changed(ctx: &Context, kind: AuditKind, client: ClientId) {
    audit::record(ctx, audit::event(ctx, kind).client(client)).await;
}

/// Records what an administrator did to a company or a user.
async fn principal_changed(
    ctx: &Context,
    kind: AuditKind,
    principal_type: PrincipalType,
    id: PrincipalId,
) {
    audit::record(ctx, audit::event(ctx, kind).principal(principal_type, id)).await;
}

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn not_found(what: &'static str, id: impl ToString) -> AdminError {
    AdminError::NotFound {
        what,
        id: id.to_string(),
    }
}

#[derive(Debug, Clone)]
pub struct NewClient {
    pub name: String,
    pub scopes: Scopes,
    pub grants: BTreeSet<GrantType>,
    pub connect_url: Option<String>,
    pub refresh_allowed: bool,
    pub first_party: bool,
    pub redirect_uris: Vec<String>,
    pub refresh_rotation: RefreshRotation,
    /// Where RP-initiated logout may return the browser (`--post-logout-redirect-uri`).
    pub post_logout_redirect_uris: Vec<String>,
    /// Public keys for `private_key_jwt` (`--jwks-file`), already checked by
    /// [`PublicJwkSet::parse`].
    pub jwks: Option<PublicJwkSet>,
    /// Every token request must carry a DPoP proof (`--require-dpop`).
    pub require_dpop: bool,
}

impl NewClient {
    /// A client with every grant, refresh allowed, and no Connect URL.
    pub fn named(name: impl Into<String>, scopes: Scopes) -> Self {
        Self {
            name: name.into(),
            scopes,
            grants: GrantType::ALL.into_iter().collect(),
            connect_url: None,
            refresh_allowed: true,
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: Vec::new(),
            jwks: None,
            require_dpop: false,
        }
    }
}

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
    // The specification types client_secret as a UUID.
    let secret = Secret::new(ctx.random.uuid().hyphenated().to_string());
    let now = ctx.clock.now();
    let client = Client {
        id: ClientId::new(ctx.random.uuid()),
        name: name.to_owned(),
        secrets: ClientSecrets::first(SecretId::new(ctx.random.uuid()), secret.hash(), now, None),
        allowed_scopes: new.scopes,
        grants: new.grants,
        connect_url: new.connect_url,
        refresh_allowed: new.refresh_allowed,
        enabled: true,
        created_at: now,
        first_party: new.first_party,
        redirect_uris: new.redirect_uris,
        refresh_rotation: new.refresh_rotation,
        post_logout_redirect_uris: new.post_logout_redirect_uris,
        jwks: new.jwks,
        require_dpop: new.require_dpop,
    };
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
async fn change_client(
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

pub async fn create_company(
    ctx: &Context,
    name: &str,
    geolocation: Geolocation,
) -> Result<Company, AdminError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(AdminError::Invalid("company name must not be empty".into()));
    }
    let company = Company {
        id: PrincipalId::new(ctx.random.uuid()),
        name: name.to_owned(),
        geolocation,
        status: CompanyStatus::Active,
        created_at: ctx.clock.now(),
    };
    ctx.store.principals().put_company(&company).await?;
    let kind = AuditKind::CompanyCreated;
    principal_changed(ctx, kind, PrincipalType::Company, company.id).await;
    Ok(company)
}

pub async fn enable_company_for_client(
    ctx: &Context,
    company: &PrincipalId,
    client: &ClientId,
) -> Result<(), AdminError> {
    ctx.store
        .principals()
        .get_company(company)
        .await?
        .ok_or_else(|| not_found("company", company))?;
    existing_client(ctx, client).await?;
    ctx.store
        .principals()
        .enable_company_for_client(company, client)
        .await?;
    let event = audit::event(ctx, AuditKind::CompanyClientEnabled)
        .client(*client)
        .principal(PrincipalType::Company, *company);
    audit::record(ctx, event).await;
    Ok(())
}

pub async fn set_company_status(
    ctx: &Context,
    id: &PrincipalId,
    status: CompanyStatus,
) -> Result<Company, AdminError> {
    let mut company = ctx
        .store
        .principals()
        .get_company(id)
        .await?
        .ok_or_else(|| not_found("company", id))?;
    company.status = status;
    ctx.store.principals().put_company(&company).await?;
    let kind = AuditKind::CompanyStatusSet { status };
    principal_changed(ctx, kind, PrincipalType::Company, company.id).await;
    Ok(company)
}

#[derive(Debug, Clone)]
pub struct NewUser {
    pub login: Login,
    pub password: Secret,
    pub company_id: Option<PrincipalId>,
    pub is_admin: bool,
    pub geolocation: Geolocation,
    pub status: UserStatus,
    /// Where one-time passwords reach the user; unique case-insensitively.
    pub email: Option<String>,
}

/// An address as `--email` takes it: a single plain address, stored as spelt (trimmed).
fn parse_email(address: &str) -> Result<ChannelHandle, AdminError> {
    ChannelHandle::parse(address)
        .map_err(|_| AdminError::Invalid(format!("{address:?} is not an e-mail address")))
}

pub async fn create_user(ctx: &Context, new: NewUser) -> Result<User, AdminError> {
    if new.password.is_empty() {
        return Err(AdminError::Invalid("password must not be empty".into()));
    }
    if new.is_admin && new.company_id.is_none() {
        return Err(AdminError::Invalid(
            "an administrator must belong to a company (--company)".into(),
        ));
    }
    let email = new.email.as_deref().map(parse_email).transpose()?;
    if let Some(company) = &new.company_id {
        ctx.store
            .principals()
            .get_company(company)
            .await?
            .ok_or_else(|| not_found("company", company))?;
    }
    let user = User {
        id: PrincipalId::new(ctx.random.uuid()),
        login: new.login,
        password_hash: PasswordHash::new(new.password.expose(), ctx.random.as_ref()),
        company_id: new.company_id,
        is_admin: new.is_admin,
        geolocation: new.geolocation,
        status: new.status,
        created_at: ctx.clock.now(),
        email: email.map(|address| address.as_str().to_owned()),
    };
    match ctx.store.principals().insert_user(&user).await? {
        Inserted::Inserted => {
            principal_changed(ctx, AuditKind::UserCreated, PrincipalType::User, user.id).await;
            Ok(user)
        }
        Inserted::AlreadyExists if user.email.is_some() => Err(AdminError::Conflict(format!(
            "login {} or that e-mail address is already taken",
            user.login
        ))),
        Inserted::AlreadyExists => Err(AdminError::Conflict(format!(
            "login {} is already taken",
            user.login
        ))),
    }
}

/// `users set-email`: gives the user an address no other user has (case-insensitively).
pub async fn set_user_email(
    ctx: &Context,
    id: &PrincipalId,
    address: &str,
) -> Result<User, AdminError> {
    let address = parse_email(address)?;
    match ctx.store.principals().set_user_email(id, &address).await? {
        EmailUpdate::Updated => {
            principal_changed(ctx, AuditKind::UserEmailSet, PrincipalType::User, *id).await;
            ctx.store
                .principals()
                .get_user(id)
                .await?
                .ok_or_else(|| not_found("user", id))
        }
        EmailUpdate::Taken => Err(AdminError::Conflict(
            "another user already has that e-mail address".into(),
        )),
        EmailUpdate::UnknownUser => Err(not_found("user", id)),
    }
}

pub async fn link_legacy_app(
    ctx: &Context,
    consumer_key: ConsumerKey,
    client: &ClientId,
) -> Result<LegacyApp, AdminError> {
    existing_client(ctx, client).await?;
    let app = LegacyApp {
        consumer_key,
        client_id: *client,
        linked_at: ctx.clock.now(),
    };
    ctx.store.legacy().put_legacy_app(&app).await?;
    client_changed(ctx, AuditKind::LegacyAppLinked, *client).await;
    Ok(app)
}

/// Revokes a family (even an expired one, as long as it is stored), with its `family.revoked`
/// event in the same write.
pub async fn revoke_family(ctx: &Context, id: &FamilyId) -> Result<(), AdminError> {
    let now = ctx.clock.now();
    // Read whatever its expiry, for the event's client and principal.
    let Some(family) = ctx.store.families().get_family(id, i64::MIN).await? else {
        return Err(not_found("token family", id));
    };
    let kind = AuditKind::FamilyRevoked {
        reason: RevocationReason::Admin,
    };
    let event = audit::event(ctx, kind)
        .client(family.client_id)
        .principal(family.principal_type, family.principal_id)
        .family(family.id);
    let events = [event];
    match ctx
        .store
        .families()
        .revoke_family_recorded(id, now, &events)
        .await?
    {
        FamilyRevoked::Revoked => audit::logged(&events),
        FamilyRevoked::AlreadyRevoked => {}
        FamilyRevoked::NotFound => return Err(not_found("token family", id)),
    }
    Ok(())
}

/// `clients secrets add`: a new secret, shown once, expiring after `expires_in_days` if given.
pub async fn add_client_secret(
    ctx: &Context,
    id: &ClientId,
    expires_in_days: Option<u32>,
) -> Result<AddedSecret, AdminError> {
    client_secrets::add_secret(ctx, id, expires_in_days)
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
        Refusal::Denied(SecretsDenial::InvalidExpiry) => {
            AdminError::Invalid(SecretsDenial::InvalidExpiry.to_string())
        }
        Refusal::Denied(SecretsDenial::Refused(refusal)) => {
            AdminError::Conflict(refusal.to_string())
        }
        Refusal::Server(crate::errors::ServerError::Store(error)) => AdminError::Store(error),
        Refusal::Server(other) => AdminError::Store(StoreError::unavailable(other.to_string())),
    }
}
