//! `grant_type=refresh_token` (alias `refresh`): rotation with reuse detection
//! (RFC 9700 §4.14.2).
//!
//! Every use rotates. A rotated token presented again, outside the grace window, revokes the
//! whole family. Of concurrent refreshes with one token the store lets exactly one rotate; the
//! others get code 108 without revoking, since a client retrying its own request looks the same.

use super::{company, requested_scopes, GrantError, IssuedTokens, TokenParams};
use crate::domain::{Client, Family, PrincipalType, UserStatus};
use crate::errors::ErrorCode;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
) -> Result<IssuedTokens, GrantError> {
    let presented = params
        .secret("refresh_token")
        .ok_or(ErrorCode::RefreshTokenMissing)?;
    if !client.may_refresh() {
        return Err(ErrorCode::RefreshDisallowed.into());
    }
    let store = &services.ctx.store;
    let now = services.ctx.clock.now();
    let hash = presented.hash();
    let record = store
        .get_refresh_token(&hash, now)
        .await?
        .ok_or(ErrorCode::BadRefreshToken)?;
    if record.client_id != client.id {
        return Err(ErrorCode::GrantNotIssuedToClient.into());
    }
    let family = store
        .get_family(&record.family_id, now)
        .await?
        .filter(|f| f.revoked_at.is_none())
        .ok_or(ErrorCode::BadRefreshToken)?;
    if let Some(rotated_at) = record.rotated_at {
        if now - rotated_at > services.policy.refresh_grace_seconds {
            store.revoke_family(&family.id, now).await?;
            tracing::warn!(family_id = %family.id, "rotated refresh token replayed; family revoked");
        }
        return Err(ErrorCode::BadRefreshToken.into());
    }
    if &family.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(family.geolocation));
    }
    check_principal(services, &family, client).await?;
    let scopes = requested_scopes(params, &family.scopes)?;
    services
        .rotate_family(&family, &hash, scopes)
        .await?
        .ok_or_else(|| ErrorCode::BadRefreshToken.into())
}

/// A principal disabled since the family was created stops being refreshed.
async fn check_principal(
    services: &Services,
    family: &Family,
    client: &Client,
) -> Result<(), GrantError> {
    let store = &services.ctx.store;
    match family.principal_type {
        PrincipalType::User => {
            let user = store
                .get_user(&family.principal_id)
                .await?
                .ok_or(ErrorCode::BadRefreshToken)?;
            match user.status {
                UserStatus::Active => Ok(()),
                UserStatus::Disabled => Err(ErrorCode::PrincipalDisabled.into()),
                UserStatus::LogonDenied => Err(ErrorCode::LogonDenied.into()),
            }
        }
        PrincipalType::Company => {
            let company = store
                .get_company(&family.principal_id)
                .await?
                .ok_or(ErrorCode::BadRefreshToken)?;
            Ok(company::check_company_may_sign_in(services, &company, client).await??)
        }
        PrincipalType::Application => Err(ErrorCode::BadRefreshToken.into()),
    }
}
