//! `grant_type=refresh_token` (alias `refresh`): rotation with reuse detection
//! (RFC 9700 §4.14.2).
//!
//! Every use rotates. A rotated token presented again, outside the grace window, revokes the
//! whole family. Of concurrent refreshes with one token the store lets exactly one rotate; the
//! others get code 108 without revoking, since a client retrying its own request looks the same.

use super::principal::check_principal_may_refresh;
use super::{requested_scopes, GrantError, IssuedTokens, TokenParams};
use crate::domain::Client;
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
    // A principal disabled since the family was created stops being refreshed.
    check_principal_may_refresh(
        services,
        family.principal_type,
        &family.principal_id,
        client,
    )
    .await?;
    let scopes = requested_scopes(params, &family.scopes)?;
    services
        .rotate_family(&family, &hash, scopes)
        .await?
        .ok_or_else(|| ErrorCode::BadRefreshToken.into())
}
