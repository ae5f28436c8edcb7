//! `grant_type=authorization_code` (RFC 6749 §4.1.3; docs/decisions.md, "Authorization code flow"):
//! a code minted by the consent page, redeemed once, for a user family with an ID token.
//!
//! A second use of a code revokes the family the first use created (RFC 6749 §4.1.2): the code
//! is redeemed and linked to that family in one conditional write, so every later use finds it,
//! for a day after the redemption (the record is kept that long). Of two concurrent uses, the
//! loser revokes the winner's family as well as its own.
//!
//! The family is written before the code is redeemed: a store failure (503) in between leaves the
//! code redeemable, so the client's retry of the same request succeeds (docs/decisions.md, "Store
//! unavailable (503) and lost answers"). A redemption whose answer is lost is repeated or read back
//! by the store with the same family and still counts as ours. What remains: when the store stops
//! answering altogether after the redemption landed, the request answers 503 and the client's retry
//! finds the code used. The family of a redemption that then fails or loses a race is never handed
//! out (and is revoked when the race was lost).

use super::GrantContext;
use crate::auth::principal::user_status_denial;
use crate::domain::audit::{RevocationReason, StartedBy};
use crate::domain::{AuthorizationCode, Client, PrincipalType, RedemptionRefusal, Resource};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::{FamilyOwner, FamilyStart, FamilyTokens, IssuedTokens};
use crate::jwt::SignIn;
use crate::requests::AuthorizationCodeRequest;
use crate::services::Services;
use crate::store::CodeRedeemed;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: AuthorizationCodeRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let store = &services.ctx.store;
    let now = services.ctx.clock.now();
    let hash = request.code.hash();
    let record = store
        .authorization_codes()
        .get_authorization_code(&hash, now)
        .await?
        .ok_or(ErrorCode::CodeBadOrExpired)?;
    if record.client_id != client.id {
        return Err(ErrorCode::GrantNotIssuedToClient.into());
    }
    if record.redeemed_at.is_some() {
        revoke_first_use(services, &record).await?;
        return Err(ErrorCode::CodeBadOrExpired.into());
    }
    record
        .check_redemption(&request.redirect_uri, request.code_verifier.as_deref())
        .map_err(|refusal| match refusal {
            RedemptionRefusal::RedirectUriMismatch => ErrorCode::RedirectUriMismatch,
            RedemptionRefusal::VerifierMismatch => ErrorCode::CodeBadOrExpired,
        })?;
    // RFC 9449 §10: a code bound at the authorize endpoint needs a proof by that key.
    if record
        .dpop_jkt
        .as_deref()
        .is_some_and(|bound| context.dpop_jkt() != Some(bound))
    {
        return Err(ErrorCode::InvalidDpopProof.into());
    }
    // RFC 8707 §2.2: the token request may narrow the resources the user approved, never add
    // one. Refused like a wrong `redirect_uri`: the code stays redeemable.
    let audience = context.narrowed_resources(&record.resources)?;
    let issued =
        match issue_for_user(services, client, &record, (context.dpop_jkt(), audience)).await {
            Ok(issued) => issued,
            Err(refusal @ GrantError::Denied(_)) => {
                // A refused code is used up all the same.
                store
                    .authorization_codes()
                    .redeem_authorization_code(&hash, &client.id, None, now)
                    .await?;
                return Err(refusal);
            }
            Err(failure) => return Err(failure),
        };
    let family_id = issued.refresh.family_id;
    if store
        .authorization_codes()
        .redeem_authorization_code(&hash, &client.id, Some(&family_id), now)
        .await?
        == CodeRedeemed::NotRedeemable
    {
        // A concurrent redemption won, or the code expired since it was read. Ours is never
        // handed out, and the winner's is revoked too: one code, used twice, leaves no family.
        let ours = FamilyOwner {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: record.user_id,
        };
        services
            .issuer()
            .revoke_family_for(family_id, ours, RevocationReason::CodeReplay, None)
            .await?;
        let winner = store
            .authorization_codes()
            .get_authorization_code(&hash, now)
            .await?;
        if let Some(winner) = winner {
            revoke_first_use(services, &winner).await?;
        }
        return Err(ErrorCode::CodeBadOrExpired.into());
    }
    let sign_in = SignIn {
        nonce: record.nonce.as_deref(),
        auth_time: record.auth_time,
        sid: record.sid.as_ref(),
        amr: &record.amr,
        idp: record.idp,
    };
    Ok(IssuedTokens::from(issued)
        .with_id_token(&services.codec, sign_in)
        .await?)
}

/// The user family for a code, not yet redeemed: granted the code's resources, its first access
/// token for `audience`.
async fn issue_for_user(
    services: &Services,
    client: &Client,
    record: &AuthorizationCode,
    (dpop_jkt, audience): (Option<&str>, Vec<Resource>),
) -> Result<FamilyTokens, GrantError> {
    // The user signed in moments ago, but may have been disabled since.
    let user = services
        .ctx
        .store
        .principals()
        .get_user(&record.user_id)
        .await?
        .ok_or(ErrorCode::CodeBadOrExpired)?;
    if let Some(code) = user_status_denial(&user) {
        return Err(code.into());
    }
    if user.cancelled_at_issue(record.issued_at) {
        return Err(ErrorCode::CodeBadOrExpired.into());
    }
    if &user.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(user.geolocation));
    }
    let issued = services
        .issuer()
        .for_client(client)
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes: record.scopes.clone(),
            geolocation: user.geolocation,
            jkt: dpop_jkt.map(str::to_owned),
            grant: StartedBy::AuthorizationCode,
            auth_time: record.auth_time,
            sid: record.sid.clone(),
            amr: record.amr.clone(),
            idp: record.idp,
            issued_by: None,
            resources: record.resources.clone(),
            audience,
        })
        .await?;
    Ok(issued)
}

async fn revoke_first_use(
    services: &Services,
    record: &AuthorizationCode,
) -> Result<(), GrantError> {
    if let Some(family_id) = &record.family_id {
        let owner = FamilyOwner {
            client_id: record.client_id,
            principal_type: PrincipalType::User,
            principal_id: record.user_id,
        };
        services
            .issuer()
            .revoke_family_for(*family_id, owner, RevocationReason::CodeReplay, None)
            .await?;
        tracing::warn!(%family_id, "authorization code used twice; its family revoked");
    }
    Ok(())
}
