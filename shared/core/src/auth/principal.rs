//! The principal checks shared by every flow that issues a principal's tokens long after its
//! credentials were proven: the refresh grant, the legacy exchange, the company auth token.

use crate::domain::{
    Client, Company, CompanyStatus, Geolocation, PrincipalId, PrincipalType, User, UserStatus,
};
use crate::errors::{ErrorCode, GrantError, ServerError};
use crate::services::Services;

/// A user or company as the store has it now.
#[derive(Debug, Clone)]
pub enum Principal {
    User(User),
    Company(Company),
}

impl Principal {
    /// The principal's home deployment.
    pub fn geolocation(&self) -> &Geolocation {
        match self {
            Self::User(user) => &user.geolocation,
            Self::Company(company) => &company.geolocation,
        }
    }

    /// Whether the principal was disabled (either type).
    pub fn is_disabled(&self) -> bool {
        match self {
            Self::User(user) => user.status == UserStatus::Disabled,
            Self::Company(company) => company.status == CompanyStatus::Disabled,
        }
    }

    /// The catalogue code its own status stops its tokens with, if any.
    pub fn status_denial(&self) -> Option<ErrorCode> {
        match self {
            Self::User(user) => user_status_denial(user),
            Self::Company(company) => company_status_denial(company),
        }
    }
}

/// A disabled user (123) or one denied logon (12).
pub fn user_status_denial(user: &User) -> Option<ErrorCode> {
    match user.status {
        UserStatus::Active => None,
        UserStatus::Disabled => Some(ErrorCode::PrincipalDisabled),
        UserStatus::LogonDenied => Some(ErrorCode::LogonDenied),
    }
}

/// A disabled company (123) or one in scheduled maintenance (134).
pub fn company_status_denial(company: &Company) -> Option<ErrorCode> {
    match company.status {
        CompanyStatus::Active => None,
        CompanyStatus::Disabled => Some(ErrorCode::PrincipalDisabled),
        CompanyStatus::Maintenance => Some(ErrorCode::CompanyMaintenance),
    }
}

/// The user or company a family is for; `None` if the store does not know it. Applications
/// are never a family's principal: `None` too.
pub async fn find_principal(
    services: &Services,
    principal_type: PrincipalType,
    id: &PrincipalId,
) -> Result<Option<Principal>, ServerError> {
    let store = &services.ctx.store;
    Ok(match principal_type {
        PrincipalType::User => store.principals().get_user(id).await?.map(Principal::User),
        PrincipalType::Company => store
            .principals()
            .get_company(id)
            .await?
            .map(Principal::Company),
        PrincipalType::Application => None,
    })
}

/// The company states that stop its tokens (codes 123, 134, 53), checked when an auth token is
/// issued, when it is exchanged, and when a company family is refreshed.
pub async fn check_company_may_sign_in(
    services: &Services,
    company: &Company,
    client: &Client,
) -> Result<(), GrantError> {
    if let Some(code) = company_status_denial(company) {
        return Err(code.into());
    }
    let enabled = services
        .ctx
        .store
        .principals()
        .is_company_enabled_for_client(&company.id, &client.id)
        .await?;
    if enabled {
        Ok(())
    } else {
        Err(ErrorCode::CompanyNotEnabledForClient.into())
    }
}

/// Whether a principal may still have its tokens refreshed: it exists (108 otherwise) and
/// neither its status nor, for a company, the client's enablement stops it.
pub async fn check_principal_may_refresh(
    services: &Services,
    principal_type: PrincipalType,
    id: &PrincipalId,
    client: &Client,
) -> Result<(), GrantError> {
    match find_principal(services, principal_type, id).await? {
        None => Err(ErrorCode::BadRefreshToken.into()),
        Some(principal) => check_principal_may_sign_in(services, &principal, client).await,
    }
}

/// The checks on a principal the store knows, for `client`: a user's status (123, 12); a
/// company's status and its enablement for the client (123, 134, 53). Shared by the refresh
/// grant and the legacy exchange, so that an exchange never issues a family that the next
/// refresh would refuse.
pub async fn check_principal_may_sign_in(
    services: &Services,
    principal: &Principal,
    client: &Client,
) -> Result<(), GrantError> {
    match principal {
        Principal::Company(company) => check_company_may_sign_in(services, company, client).await,
        Principal::User(user) => user_status_denial(user).map_or(Ok(()), |code| Err(code.into())),
    }
}

/// Whether `admin` is still an active user who administers `company`. A company's tokens
/// obtained through an administrator (an auth token, a WSAdmin old token) are the
/// administrator's act: they stop once the administrator is disabled, denied logon, demoted or
/// moved, not a day later.
pub async fn is_active_administrator(
    services: &Services,
    admin: &PrincipalId,
    company: &PrincipalId,
) -> Result<bool, ServerError> {
    let user = services.ctx.store.principals().get_user(admin).await?;
    Ok(user.is_some_and(|user| user.administers(company) && user_status_denial(&user).is_none()))
}
