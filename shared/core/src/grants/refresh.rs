//! `grant_type=refresh_token` (alias `refresh`): the client's refresh policy (docs/decisions.md,
//! "Refresh tokens").
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
//!
//! Reads: one, whatever the token. A token names its family (`RefreshTokenName`), so its lookup
//! reads the family's item, which is its record; that the token is still current and its family
//! live is then also the condition of the write. A token issued before tokens named their family
//! is read by its digest, its record carrying the family's origin, and the family is read only
//! where its state decides the answer: a rotated token (retry or reuse), a write that lost
//! (revoked, raced, or a retry now), and a refusal after the lookup, which must still answer 108
//! if the family is revoked.

use super::GrantContext;
use crate::auth::principal::check_principal_may_refresh;
use crate::domain::audit::{AuditKind, RevocationReason};
use crate::domain::{Client, Family, RefreshRotation, RefreshTokenRecord, Scopes};
use crate::errors::{ErrorCode, GrantError, ServerError};
use crate::issuance::{requested_scopes, FoundRefreshToken, IssuedTokens};
use crate::requests::RefreshRequest;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::{FamilyOrigin, RefreshTokenWithOrigin};

/// Reads of the token (and, after the first, its family): a lost rotation race is read again.
/// More rounds would mean the family moved on several times while this request ran, which no
/// retry of one client explains.
const READS: usize = 3;

/// What the presented token allows.
enum Use<'a> {
    /// `rotate`: the family's current token, to be rotated.
    Rotate,
    /// `rotate`: a retry of a rotation that happened; answer its successor again.
    Retry(&'a Family),
    /// `sliding`: the family's current token, to be kept and renewed.
    Slide,
    /// `rotate`: the token read as unrotated but its family has moved on: a concurrent rotation
    /// landed between the two reads. Read again.
    ReadAgain,
}

/// The token's absence (106) is answered before this runs, by the dispatch.
pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: RefreshRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let presented = &request.refresh_token;
    if !client.may_refresh() {
        return Err(ErrorCode::RefreshDisallowed.into());
    }
    for round in 0..READS {
        let found = look_up(services, client, presented).await?;
        let token = found.token;
        check_sender(&token, context.dpop_jkt())?;
        // An unnamed token read as unrotated for the first time is presumed current: the write
        // checks. A named one was found through its family.
        let family = match found.family {
            Some(family) => Some(live(family)?),
            None if round > 0 || token.record.rotated_at.is_some() => {
                Some(live_family(services, &token.record).await?)
            }
            None => None,
        };
        match refresh(services, context, &request, &token, family.as_ref()).await {
            Ok(Some(issued)) => return Ok(issued),
            // Another request rotated (or revoked) first: read again and take the retry path.
            Ok(None) => {}
            // The lookup's 108 for a revoked or expired family comes before any later refusal.
            Err(GrantError::Denied(denial))
                if family.is_none() && denial.code != ErrorCode::BadRefreshToken =>
            {
                live_family(services, &token.record).await?;
                return Err(GrantError::Denied(denial));
            }
            Err(refused) => return Err(refused),
        }
    }
    Err(ErrorCode::BadRefreshToken.into())
}

/// The token, bound to this client, and its family's origin.
async fn look_up(
    services: &Services,
    client: &Client,
    presented: &Secret,
) -> Result<FoundRefreshToken, GrantError> {
    let found = services
        .issuer()
        .find_refresh_token(presented)
        .await?
        .ok_or(ErrorCode::BadRefreshToken)?;
    if found.token.record.client_id != client.id {
        return Err(ErrorCode::GrantNotIssuedToClient.into());
    }
    Ok(found)
}

/// A token bound to a DPoP key, by its family or by the rotation that issued it, refreshes only
/// with a proof by that key (RFC 9449 §5). Refused as an unknown token would be (108), and
/// before any reuse check: a thief without the key must not be able to revoke the family by
/// replaying a rotated token.
fn check_sender(token: &RefreshTokenWithOrigin, dpop_jkt: Option<&str>) -> Result<(), GrantError> {
    match token.origin.jkt.as_deref().or(token.record.jkt.as_deref()) {
        Some(bound) if dpop_jkt != Some(bound) => {
            tracing::info!("refresh token bound to another DPoP key, or presented without proof");
            Err(ErrorCode::BadRefreshToken.into())
        }
        _ => Ok(()),
    }
}

/// The token's family, unless it is revoked or expired (108).
async fn live_family(
    services: &Services,
    record: &RefreshTokenRecord,
) -> Result<Family, GrantError> {
    let family = services
        .ctx
        .store
        .families()
        .get_family(&record.family_id, services.ctx.clock.now())
        .await?
        .ok_or(ErrorCode::BadRefreshToken)?;
    live(family)
}

/// A family read unexpired, unless it is revoked (108).
fn live(family: Family) -> Result<Family, GrantError> {
    if family.revoked_at.is_some() {
        return Err(ErrorCode::BadRefreshToken.into());
    }
    Ok(family)
}

/// The checks after the lookup, in order, then the write. `Ok(None)`: read again.
/// `family` is the family's state if it was read; `None` leaves it to the write's conditions.
async fn refresh(
    services: &Services,
    context: &GrantContext,
    request: &RefreshRequest,
    token: &RefreshTokenWithOrigin,
    family: Option<&Family>,
) -> Result<Option<IssuedTokens>, GrantError> {
    let client = &context.client;
    let presented = &request.refresh_token;
    let jkt = context.dpop_jkt();
    let origin = &token.origin;
    // Before any reuse check: a request at the wrong deployment changes nothing.
    if &origin.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(origin.geolocation.clone()));
    }
    let token_use = match family {
        Some(family) => decide(services, context, presented, &token.record, family).await?,
        // Unread, so unrotated when read: the policy's use, if the write finds it current.
        None => match client.refresh_policy() {
            RefreshRotation::Rotate => Use::Rotate,
            RefreshRotation::Sliding => Use::Slide,
        },
    };
    if matches!(token_use, Use::ReadAgain) {
        return Ok(None);
    }
    // A principal disabled since the family was created stops being refreshed.
    check_principal_may_refresh(
        services,
        origin.principal_type,
        &origin.principal_id,
        client,
    )
    .await?;
    let scopes = requested_scopes(request.scope.as_deref(), &grantable_scopes(origin, client))?;
    // RFC 8707 §2.2: one or more of the resources granted when the family started (without
    // `resource`, all of them); the family keeps them all for the next refresh.
    let grant = (scopes, context.narrowed_resources(&origin.resources)?);
    Ok(match token_use {
        Use::Rotate => {
            services
                .issuer()
                .for_client(client)
                .rotate_family(
                    token,
                    presented,
                    grant,
                    jkt,
                    context.counter_for_write(services),
                )
                .await?
        }
        Use::Retry(family) => Some(
            services
                .issuer()
                .for_client(client)
                .reissue_successor(family, &token.record, presented, grant, jkt)
                .await?,
        ),
        Use::Slide => {
            context.count_request(services).await?;
            services
                .issuer()
                .for_client(client)
                .slide_family(token, presented, grant, jkt)
                .await?
        }
        Use::ReadAgain => None,
    })
}

/// Applies the client's policy to a token whose family was read; revokes the family on reuse.
async fn decide<'a>(
    services: &Services,
    context: &GrantContext,
    presented: &Secret,
    record: &RefreshTokenRecord,
    family: &'a Family,
) -> Result<Use<'a>, GrantError> {
    let (client, dpop_jkt) = (&context.client, context.dpop_jkt());
    let is_current = family.current_token == record.token_hash;
    // A rotated token's record carries its rotation time, unless its rotation was the family's
    // single conditional update (DynamoDB): then the family's last rotation is its rotation if
    // its successor is the family's current token, which `successor_is_current` checks.
    let rotated_at = record
        .rotated_at
        .or(if is_current { None } else { family.rotated_at });
    match (client.refresh_policy(), rotated_at) {
        (RefreshRotation::Sliding, None) if is_current => Ok(Use::Slide),
        // A token rotated while the client was on `rotate`: refused, but sliding clients get no
        // reuse detection, so nothing is revoked.
        (RefreshRotation::Sliding, _) => Err(ErrorCode::BadRefreshToken.into()),
        (RefreshRotation::Rotate, None) if is_current => Ok(Use::Rotate),
        (RefreshRotation::Rotate, None) => Ok(Use::ReadAgain),
        (RefreshRotation::Rotate, Some(rotated_at)) => {
            // Counted before this path's writes (a completion, a retry's access token, a
            // revocation), which a request over the limit must not make.
            context.count_request(services).await?;
            if successor_is_current(services, presented, record, family).await? {
                // A rotation whose writes failed after its decisive one never answered the
                // client: its retry is answered whenever it comes, and completes it.
                let unanswered = services
                    .issuer()
                    .complete_rotation(family, rotated_at)
                    .await?;
                let within_grace =
                    services.ctx.clock.now() - rotated_at < services.policy.refresh_grace_seconds;
                if within_grace || unanswered {
                    check_successor_sender(services, family, dpop_jkt).await?;
                    crate::measure::refresh_retry_within_grace();
                    return Ok(Use::Retry(family));
                }
            }
            services
                .issuer()
                .revoke_family_for(
                    family.id,
                    family.into(),
                    RevocationReason::ReuseDetected,
                    Some(AuditKind::RefreshReuseDetected),
                )
                .await?;
            tracing::warn!(family_id = %family.id, "rotated refresh token reused; family revoked");
            crate::measure::refresh_reuse_detected();
            Err(ErrorCode::BadRefreshToken.into())
        }
    }
}

/// Whether the successor derived from `presented` is the family's current token, i.e. unused:
/// the client may be retrying, not replaying.
async fn successor_is_current(
    services: &Services,
    presented: &Secret,
    record: &RefreshTokenRecord,
    family: &Family,
) -> Result<bool, ServerError> {
    Ok(record.generation + 1 == family.generation
        && services
            .issuer()
            .current_successor(family, presented)
            .await?
            .is_some())
}

/// A retry is answered with the successor itself, so it must meet the successor's binding: a
/// rotation with a proof binds the successor even when the presented token was not bound, and a
/// replay of that older token without the proof must not get it (nor an unbound access token
/// for it). Refused as [`check_sender`] refuses, revoking nothing. One more read, on the retry
/// path only, for a family whose last rotation predates the family's keeping its binding.
async fn check_successor_sender(
    services: &Services,
    family: &Family,
    dpop_jkt: Option<&str>,
) -> Result<(), GrantError> {
    if family.jkt.is_some() {
        // A bound family: the presented token was checked against the same key already.
        return Ok(());
    }
    let successor_jkt = if family.rotated_by.is_some() {
        // The family recorded its last rotation, with the binding it gave the successor.
        family.current_jkt.clone()
    } else {
        services
            .ctx
            .store
            .families()
            .get_refresh_token(&family.current_token, services.ctx.clock.now())
            .await?
            .ok_or(ErrorCode::BadRefreshToken)?
            .jkt
    };
    match successor_jkt.as_deref() {
        Some(bound) if dpop_jkt != Some(bound) => {
            tracing::info!("retry of a rotation whose successor is bound, without its key's proof");
            Err(ErrorCode::BadRefreshToken.into())
        }
        _ => Ok(()),
    }
}

/// The family's scopes that its client may still be granted: narrowing a client's allowed
/// scopes takes effect at its families' next refresh. `openid` stays while the client may
/// sign users in.
fn grantable_scopes(origin: &FamilyOrigin, client: &Client) -> Scopes {
    let requestable = client.requestable_scopes();
    Scopes::from_list(
        origin
            .scopes
            .iter()
            .filter(|scope| requestable.contains(scope)),
    )
    .expect("scopes taken from a valid set are valid")
}

#[cfg(test)]
mod tests {
    //! The refusals after the lookup on the one-read path: each still yields to the lookup's
    //! 108 when the family is revoked, as it did when every refresh read the family first.

    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::context::Context;
    use crate::domain::{Geolocation, PrincipalType, UserStatus};
    use crate::issuance::FamilyStart;
    use crate::jwt::AccessTokenCodec;
    use crate::random::OsRandom;
    use crate::requests::FromParameters;
    use crate::signing::KeyRing;
    use crate::store::sqlite::SqliteStore;
    use token_store_conformance::records;

    const NOW: i64 = 1_700_000_000;

    struct Fixture {
        services: Services,
        client: Client,
        user: crate::domain::User,
        _dir: tempfile::TempDir,
    }

    /// A `rotate` client allowed `read write` and an active user, at `records::geolocation()`.
    async fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
        let clock = Arc::new(ManualClock::new(NOW));
        let codec = AccessTokenCodec::new(
            Arc::new(KeyRing::generate(&OsRandom, clock.as_ref())),
            records::geolocation(),
        );
        let ctx = Context::new(store).with_clock(clock);
        let user = records::user(NOW, "user@example.com");
        ctx.store.principals().insert_user(&user).await.unwrap();
        Fixture {
            services: Services::new(ctx, codec, Default::default()),
            client: records::client(NOW),
            user,
            _dir: dir,
        }
    }

    /// A family of the user with scope `read`, living at `home`: its refresh token and id.
    async fn family(f: &Fixture, home: Geolocation) -> (Secret, crate::domain::FamilyId) {
        let issued = f
            .services
            .issuer()
            .start_family(FamilyStart {
                client_id: f.client.id,
                principal_type: PrincipalType::User,
                principal_id: f.user.id,
                scopes: records::scopes("read"),
                geolocation: home,
                jkt: None,
                grant: crate::domain::audit::StartedBy::Password,
                auth_time: None,
                sid: None,
                amr: Vec::new(),
                idp: None,
                issued_by: None,
                resources: Vec::new(),
                audience: Vec::new(),
            })
            .await
            .unwrap();
        let refresh = issued.refresh;
        (refresh.token, refresh.family_id)
    }

    /// The code refreshing `token` with `scope` answers, once while the family is live and once
    /// after it is revoked.
    async fn codes(f: &Fixture, home: Geolocation, scope: &str) -> (ErrorCode, ErrorCode) {
        let (token, family_id) = family(f, home).await;
        let context = GrantContext {
            client: f.client.clone(),
            dpop_jkt: None,
            source: None,
            resources: Vec::new(),
            uncounted: super::super::DeferredCount::settled(),
        };
        let code = || async {
            let request =
                RefreshRequest::parse([("refresh_token", token.expose()), ("scope", scope)])
                    .unwrap();
            match grant(&f.services, &context, request).await {
                Ok(_) => panic!("refreshed"),
                Err(refused) => refused.code().expect("a refusal, not a failure"),
            }
        };
        let live = code().await;
        let store = &f.services.ctx.store;
        assert!(store
            .families()
            .revoke_family(&family_id, NOW)
            .await
            .unwrap());
        (live, code().await)
    }

    #[tokio::test]
    async fn a_revoked_family_answers_108_before_the_later_refusals() {
        let f = fixture().await;
        let elsewhere = Geolocation::parse("https://emea.api.example.com").unwrap();
        assert_eq!(
            codes(&f, elsewhere, "read").await,
            (ErrorCode::UserLivesElsewhere, ErrorCode::BadRefreshToken),
            "home geolocation"
        );
        assert_eq!(
            codes(&f, records::geolocation(), "write").await,
            (ErrorCode::ScopeExceedsGrant, ErrorCode::BadRefreshToken),
            "scopes"
        );
        let disabled = crate::domain::User {
            status: UserStatus::Disabled,
            ..f.user.clone()
        };
        f.services
            .ctx
            .store
            .principals()
            .put_user(&disabled)
            .await
            .unwrap();
        assert_eq!(
            codes(&f, records::geolocation(), "read").await,
            (ErrorCode::PrincipalDisabled, ErrorCode::BadRefreshToken),
            "principal"
        );
    }
}
