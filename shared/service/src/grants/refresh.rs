//! `grant_type=refresh_token` (alias `refresh`): the client's refresh policy (contract part 7).
//!
//! - `rotate`: every use of the current token returns its successor, derived from it (so at
//!   most one successor ever exists). A rotated token presented again less than
//!   `REFRESH_GRACE_SECONDS` after its rotation, while its successor is unused, is a retry: it
//!   gets the same successor. Otherwise it is reuse (RFC 9700 §4.14.2): the family is revoked.
//!   Of concurrent refreshes with one token, one rotates and the others re-read and retry.
//! - `sliding`: the token stays; each use renews its expiry. No reuse detection.
//!
//! Order of checks: 106, 107, lookup (108), client binding (105), home geolocation (16, before
//! anything is written or revoked), rotated-token handling, principal, scopes.

use super::principal::check_principal_may_refresh;
use super::{requested_scopes, GrantError, IssuedTokens, TokenParams};
use crate::clock::UnixTime;
use crate::domain::{Client, Family, RefreshRotation, RefreshTokenRecord, Scopes};
use crate::errors::ErrorCode;
use crate::secrets::Secret;
use crate::services::Services;

/// Reads of the token and its family: a lost rotation race, or a token read just before and its
/// family just after a concurrent rotation, is read again. More rounds would mean the family
/// moved on several times while this request ran, which no retry of one client explains.
const READS: usize = 3;

/// What the presented token allows, once it has been looked up and its family read.
enum Use {
    /// `rotate`: the family's current token, to be rotated.
    Rotate,
    /// `rotate`: a retry of a rotation that happened; answer its successor again.
    Retry,
    /// `sliding`: the family's current token, to be kept and renewed.
    Slide,
    /// `rotate`: the token read as unrotated but its family has moved on: a concurrent rotation
    /// landed between the two reads. Read again.
    ReadAgain,
}

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
    for _ in 0..READS {
        let (record, family) = look_up(services, client, &presented).await?;
        let token_use = decide(services, client, &presented, &record, &family).await?;
        if matches!(token_use, Use::ReadAgain) {
            continue;
        }
        // A principal disabled since the family was created stops being refreshed.
        check_principal_may_refresh(
            services,
            family.principal_type,
            &family.principal_id,
            client,
        )
        .await?;
        let scopes = requested_scopes(params, &grantable_scopes(&family, client))?;
        let issued = match token_use {
            Use::Rotate => services.rotate_family(&family, &presented, scopes).await?,
            Use::Retry => Some(
                services
                    .reissue_successor(&family, &record, &presented, scopes)
                    .await?,
            ),
            Use::Slide => {
                services
                    .slide_family(&family, &presented, &record, scopes)
                    .await?
            }
            Use::ReadAgain => None,
        };
        if let Some(issued) = issued {
            return Ok(issued);
        }
        // Another request rotated (or revoked) first: read again and take the retry path.
    }
    Err(ErrorCode::BadRefreshToken.into())
}

/// The token and its live family, bound to this client and refreshable at this deployment.
async fn look_up(
    services: &Services,
    client: &Client,
    presented: &Secret,
) -> Result<(RefreshTokenRecord, Family), GrantError> {
    let store = &services.ctx.store;
    let now = services.ctx.clock.now();
    let record = store
        .get_refresh_token(&presented.hash(), now)
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
    // Before any reuse check: a request at the wrong deployment changes nothing.
    if &family.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(family.geolocation));
    }
    Ok((record, family))
}

/// Applies the client's policy; revokes the family on reuse.
async fn decide(
    services: &Services,
    client: &Client,
    presented: &Secret,
    record: &RefreshTokenRecord,
    family: &Family,
) -> Result<Use, GrantError> {
    let is_current = family.current_token == record.token_hash;
    match (client.refresh_rotation, record.rotated_at) {
        (RefreshRotation::Sliding, None) if is_current => Ok(Use::Slide),
        // A token rotated while the client was on `rotate`: refused, but sliding clients get no
        // reuse detection, so nothing is revoked.
        (RefreshRotation::Sliding, _) => Err(ErrorCode::BadRefreshToken.into()),
        (RefreshRotation::Rotate, None) if is_current => Ok(Use::Rotate),
        (RefreshRotation::Rotate, None) => Ok(Use::ReadAgain),
        (RefreshRotation::Rotate, Some(rotated_at)) => {
            let now = services.ctx.clock.now();
            if is_retry(services, presented, record, family, rotated_at, now) {
                return Ok(Use::Retry);
            }
            services.ctx.store.revoke_family(&family.id, now).await?;
            tracing::warn!(family_id = %family.id, "rotated refresh token reused; family revoked");
            Err(ErrorCode::BadRefreshToken.into())
        }
    }
}

/// Within the window (strictly) and the successor derived from `presented` still current,
/// i.e. unused: the client is retrying, not replaying.
fn is_retry(
    services: &Services,
    presented: &Secret,
    record: &RefreshTokenRecord,
    family: &Family,
    rotated_at: UnixTime,
    now: UnixTime,
) -> bool {
    if now - rotated_at >= services.policy.refresh_grace_seconds {
        return false;
    }
    let successor = services.successor_token(&family.id, record.generation + 1, presented);
    family.current_token == successor.hash()
}

/// The family's scopes that its client may still be granted: narrowing a client's allowed
/// scopes takes effect at its families' next refresh.
fn grantable_scopes(family: &Family, client: &Client) -> Scopes {
    Scopes::from_list(
        family
            .scopes
            .iter()
            .filter(|scope| client.allowed_scopes.contains(scope)),
    )
    .expect("scopes taken from a valid set are valid")
}
