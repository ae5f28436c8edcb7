//! `grant_type=otp` (docs/decisions.md, "One-time passwords"): a one-time password mailed by `POST
//! /oauth2/v0/otp` proves the caller owns an address; the user with that address gets a family. The
//! password's checks are the flow's ([`crate::auth::otp`]); this handler orders them with the
//! family's writes.

use super::password::start_user_family;
use super::GrantContext;
use crate::auth::otp::{
    check_otp, otp_deps, OtpDenial, OtpError, OtpFacts, OtpVerification, VerifiedOtp,
};
use crate::auth::{check_local_sign_in_allowed, check_one_factor_allowed, check_user_may_sign_in};
use crate::domain::audit::{RevocationReason, StartedBy};
use crate::domain::{PrincipalType, User};
use crate::errors::{ErrorCode, GrantDenial, GrantError};
use crate::issuance::{requested_family_scopes, FamilyOwner, IssuedTokens};
use crate::requests::OtpGrantRequest;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: OtpGrantRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    // Before the password is tried: a request that cannot succeed must not spend it.
    let scopes = requested_family_scopes(request.scope.as_deref(), client)?;
    let resources = context.requested_resources(services)?;
    let verification = OtpVerification {
        client_id: client.id,
        otp: request.otp,
        channel_type: request.channel_type,
        channel_handle: request.channel_handle,
        facts: OtpFacts {
            name: request.name,
            company: request.company,
            link: request.link,
        },
    };
    let store = &services.ctx.store;
    let deps = otp_deps(services);
    // 56, 57, 58, 80, 81, 83, 85, 84, then 55: the flow's order.
    let verified: VerifiedOtp<User> = check_otp(deps, verification, |address| async move {
        store.principals().get_user_by_email(&address).await
    })
    .await?;
    let user = &verified.user;
    if user.cancelled_at_issue(verified.issued_at()) {
        return Err(ErrorCode::OtpNotFound.into());
    }
    // As the password grant: the address proves who the caller is, the user's state decides.
    // A company that signs its users in through its IdPs refuses it (181); a one-time password
    // alone is one factor, which a company that requires two refuses (180).
    let allowed = match check_user_may_sign_in(services, user) {
        Ok(()) => match check_local_sign_in_allowed(services, user).await {
            Ok(()) => check_one_factor_allowed(services, user).await,
            Err(refusal) => Err(refusal),
        },
        Err(refusal) => Err(refusal),
    };
    if let Err(refusal) = allowed {
        // A refused sign-in uses the password up all the same.
        verified.consume(deps).await?;
        return Err(refusal);
    }
    // The family is written before the password is consumed: a store failure in between leaves the
    // password open, so the client's retry of the same request succeeds (docs/decisions.md, "Store
    // unavailable (503) and lost answers").
    let issued = start_user_family(
        services,
        client,
        user.clone(),
        scopes,
        context.dpop_jkt(),
        StartedBy::Otp,
        resources,
    )
    .await?;
    if let Err(error) = verified.consume(deps).await {
        // A concurrent redemption won (or the store failed): this family is never handed out.
        if let Some(refresh) = &issued.refresh {
            let ours = FamilyOwner {
                client_id: client.id,
                principal_type: PrincipalType::User,
                principal_id: user.id,
            };
            services
                .issuer()
                .revoke_family_for(refresh.family_id, ours, RevocationReason::OtpReplay, None)
                .await?;
        }
        return Err(error.into());
    }
    Ok(issued)
}

/// Refusals keep their catalogue code (a rate limit also its `Retry-After`).
impl From<OtpDenial> for GrantDenial {
    fn from(denial: OtpDenial) -> Self {
        match denial {
            OtpDenial::RateLimited(exceeded) => exceeded.into(),
            other => GrantDenial::new(other.error_code()),
        }
    }
}

impl From<OtpError> for GrantError {
    fn from(error: OtpError) -> Self {
        error.widen()
    }
}
