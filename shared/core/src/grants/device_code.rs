//! `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4; docs/decisions.md,
//! "Device authorization grant"): the device polls with its device code until the user has
//! decided on the page, then receives a user family once.
//!
//! A poll reads the record once and, unless it is answered `slow_down`, writes nothing: the
//! last poll's time is kept by this instance's `DevicePacer` (`device_pace`), bounded in size and
//! forgotten when the code expires. Pace is checked for pending codes only (`slow_down` is a
//! variant of `authorization_pending`, RFC 8628 §3.5): a decided code is answered at once. A poll sooner than the interval writes the grown interval
//! and its time, so every instance holds the device to that floor; between `slow_down`s the
//! pace is checked per warm instance (on Lambda a device whose polls land on another instance
//! is held there to the stored floor only). As with authorization codes, the family is written
//! before the code is marked redeemed, so a store failure in between leaves the code redeemable
//! for the device's next poll; of racing polls the one whose conditional redemption loses
//! revokes its own family.

use super::GrantContext;
use crate::auth::principal::user_status_denial;
use crate::device_pace::{Paced, StoredPace};
use crate::domain::audit::{RevocationReason, StartedBy};
use crate::domain::{
    Client, DeviceAuthorization, PollVerdict, PrincipalType, Resource, DEVICE_CODE_TTL_SECONDS,
};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::{FamilyOwner, FamilyStart, FamilyTokens, IssuedTokens};
use crate::requests::DeviceCodeRequest;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: DeviceCodeRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let devices = services.ctx.store.device_authorizations();
    let now = services.ctx.clock.now();
    let hash = request.device_code.hash();
    // Another client's code reads as unknown: nothing about it is revealed.
    let record = devices
        .get_device_authorization(&hash, now)
        .await?
        .filter(|record| record.client_id == client.id)
        .ok_or(ErrorCode::DeviceCodeBadOrUsed)?;
    match record.poll(now) {
        PollVerdict::Redeemed => return Err(ErrorCode::DeviceCodeBadOrUsed.into()),
        PollVerdict::Expired => return Err(ErrorCode::DeviceCodeExpired.into()),
        PollVerdict::Denied => return Err(ErrorCode::DeviceAccessDenied.into()),
        // The record's last `slow_down` is one of the pacer's inputs, so a record polled too
        // fast is paced below like any other pending one.
        PollVerdict::Pending | PollVerdict::TooFast => {
            let stored = StoredPace {
                last_slow_down: record.last_polled_at,
                interval: record.interval,
                valid_until: record.valid_until(),
            };
            if let Paced::TooFast { interval } = services.device_pacer.poll(&hash, now, stored) {
                // RFC 8628 §3.5: the interval grows by 5 s for this and every later poll, on
                // every instance. Of two fast polls racing here one writes; the other's answer
                // is the same.
                devices
                    .record_device_poll(&hash, record.last_polled_at, now, interval)
                    .await?;
                return Err(ErrorCode::DeviceSlowDown.into());
            }
            return Err(ErrorCode::DeviceAuthorizationPending.into());
        }
        PollVerdict::Approved => {}
    }
    let user_id = record.user_id.ok_or(ErrorCode::DeviceCodeBadOrUsed)?;
    let audience = context.narrowed_resources(&record.resources)?;
    let issued = issue_for_user(services, client, &record, (context.dpop_jkt(), audience)).await?;
    let family_id = issued.refresh.family_id;
    if !devices
        .redeem_device_authorization(&hash, &client.id, now - DEVICE_CODE_TTL_SECONDS)
        .await?
    {
        // Another poll redeemed it (or it expired since it was read): ours is never handed
        // out.
        let ours = FamilyOwner {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user_id,
        };
        services
            .issuer()
            .revoke_family_for(family_id, ours, RevocationReason::DeviceCodeReplay, None)
            .await?;
        return Err(ErrorCode::DeviceCodeBadOrUsed.into());
    }
    Ok(IssuedTokens::from(issued))
}

/// The user family for an approved code, not yet redeemed.
async fn issue_for_user(
    services: &Services,
    client: &Client,
    record: &DeviceAuthorization,
    (dpop_jkt, audience): (Option<&str>, Vec<Resource>),
) -> Result<FamilyTokens, GrantError> {
    let user_id = record.user_id.ok_or(ErrorCode::DeviceCodeBadOrUsed)?;
    // The user approved moments ago, but may have been disabled since.
    let user = services
        .ctx
        .store
        .principals()
        .get_user(&user_id)
        .await?
        .ok_or(ErrorCode::DeviceCodeBadOrUsed)?;
    if let Some(code) = user_status_denial(&user) {
        return Err(code.into());
    }
    if user.cancelled_at_issue(record.issued_at) {
        return Err(ErrorCode::DeviceCodeBadOrUsed.into());
    }
    if &user.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(user.geolocation));
    }
    Ok(services
        .issuer()
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes: record.scopes.clone(),
            geolocation: user.geolocation,
            jkt: dpop_jkt.map(str::to_owned),
            grant: StartedBy::DeviceCode,
            auth_time: record.auth_time,
            sid: record.sid.clone(),
            amr: record.amr.clone(),
            idp: None,
            issued_by: None,
            resources: record.resources.clone(),
            audience,
        })
        .await?)
}
