//! Application management and company administration: the operations behind `tokenctl` and the
//! local demo data. They validate input, keep secrets hashed, and return what was created.
//! Each change is recorded as an audit event (docs/decisions.md, Audit events), best effort.

use crate::audit;
use crate::context::Context;
use crate::domain::audit::{AuditKind, RevocationReason};
use crate::domain::ChannelHandle;
use crate::domain::{
    ClientId, Company, CompanyStatus, ConsumerKey, FamilyId, Geolocation, LegacyApp, Login,
    MfaPolicy, PrincipalId, PrincipalType, SsoPolicy, User, UserStatus,
};
use crate::errors::ServerError;
use crate::random::RandomExt;
use crate::secrets::{PasswordHash, Secret};
use crate::store::{revoke_family_recorded, EmailUpdate, FamilyRevoked, Inserted, StoreError};

mod clients;
mod id_jag;
mod idps;
mod provisioning;
mod saml_idps;
mod user_links;
mod users;

pub use clients::*;
pub use id_jag::*;
pub use idps::*;
pub use provisioning::*;
pub use saml_idps::*;
pub use user_links::*;
pub use users::*;

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
    /// Our failure before anything was written (the key ring could not be read).
    #[error(transparent)]
    Server(ServerError),
    /// The change was made but what must follow it was not finished; running the same command
    /// again finishes it.
    #[error("{done}, but {failed}: {source}; run the command again to finish")]
    Unfinished {
        done: String,
        failed: &'static str,
        #[source]
        source: ServerError,
    },
}

impl From<ServerError> for AdminError {
    fn from(error: ServerError) -> Self {
        Self::Server(error)
    }
}

fn not_found(what: &'static str, id: impl ToString) -> AdminError {
    AdminError::NotFound {
        what,
        id: id.to_string(),
    }
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
        mfa_policy: MfaPolicy::default(),
        sso_policy: SsoPolicy::default(),
        admin_group: None,
        id_jag: true,
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
    update_company(ctx, id, |company| {
        company.status = status;
        AuditKind::CompanyStatusSet { status }
    })
    .await
}

/// `companies set-mfa`: whether the company's users must finish page sign-ins with a second
/// factor (and are refused the password grant, code 180).
pub async fn set_company_mfa(
    ctx: &Context,
    id: &PrincipalId,
    policy: MfaPolicy,
) -> Result<Company, AdminError> {
    update_company(ctx, id, |company| {
        company.mfa_policy = policy;
        AuditKind::CompanyMfaSet { policy }
    })
    .await
}

/// Reads the company, applies `change`, writes it back and records the event `change` names.
pub(super) async fn update_company(
    ctx: &Context,
    id: &PrincipalId,
    change: impl FnOnce(&mut Company) -> AuditKind,
) -> Result<Company, AdminError> {
    let mut company = ctx
        .store
        .principals()
        .get_company(id)
        .await?
        .ok_or_else(|| not_found("company", id))?;
    let kind = change(&mut company);
    ctx.store.principals().put_company(&company).await?;
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
        local_sign_in: false,
        directory: None,
        revision: 0,
        deprovisioned_at: None,
        external_id: None,
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
    let events = vec![event];
    match revoke_family_recorded(ctx.store.as_ref(), id, now, events.clone()).await? {
        FamilyRevoked::Revoked => audit::logged(&events),
        FamilyRevoked::AlreadyRevoked => {}
        FamilyRevoked::NotFound => return Err(not_found("token family", id)),
    }
    Ok(())
}
