//! `credtype=password`: a user's login and password (checked with its lockout by
//! `auth::user`), and the family a user who proved who they are starts.

use crate::auth::user::{
    authenticate_user_refund_pending, check_local_sign_in_allowed, check_one_factor_allowed,
    take_back,
};
use crate::domain::audit::StartedBy;
use crate::domain::{AuthMethod, Client, PrincipalType, Resource, Scopes, User};
use crate::errors::GrantError;
use crate::grants::GrantContext;
use crate::issuance::{requested_family_scopes, FamilyStart, IssuedTokens};
use crate::requests::PasswordRequest;
use crate::services::Services;

/// The family's write takes back the password's attempt (docs/decisions.md, Lockout): a correct
/// password costs the attempt, the user's read and that one write.
pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: PasswordRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let scopes = requested_family_scopes(request.scope.as_deref(), client)?;
    let resources = context.requested_resources(services)?;
    let (user, refund) = authenticate_user_refund_pending(
        services,
        client.id,
        &request.username,
        request.password.expose(),
    )
    .await?;
    // Once the password is known right (its attempt taken back, as for any correct password):
    // a company that signs its users in through its IdPs refuses it (181), and a password alone
    // is one factor, which a company that requires two refuses (180).
    let allowed = match check_local_sign_in_allowed(services, &user).await {
        Ok(()) => check_one_factor_allowed(services, &user).await,
        Err(refusal) => Err(refusal),
    };
    if let Err(refusal) = allowed {
        if let Some(refund) = refund {
            take_back(services, &refund).await?;
        }
        return Err(refusal);
    }
    let start = FamilyStart {
        client_id: client.id,
        principal_type: PrincipalType::User,
        principal_id: user.id,
        scopes,
        geolocation: user.geolocation,
        jkt: context.dpop_jkt.clone(),
        grant: StartedBy::Password,
        auth_time: Some(services.ctx.clock.now()),
        sid: None,
        amr: AuthMethod::PASSWORD.to_vec(),
        idp: None,
        issued_by: None,
        audience: resources.clone(),
        resources,
    };
    match services
        .issuer()
        .start_family_refunding(start, refund.clone())
        .await
    {
        Ok(issued) => Ok(issued.into()),
        Err(error) => {
            // Nothing written (a signature or the write failed): a failure of ours must not
            // count as a failed login.
            if let Some(refund) = refund {
                if let Err(refund_error) = take_back(services, &refund).await {
                    tracing::warn!(%refund_error, "a correct password's attempt left counted");
                }
            }
            Err(error.into())
        }
    }
}

/// A new family for a user who has just proved who they are (a password, a one-time password),
/// homed where the user lives.
pub(crate) async fn start_user_family(
    services: &Services,
    client: &Client,
    user: User,
    scopes: Scopes,
    dpop_jkt: Option<&str>,
    grant: StartedBy,
    resources: Vec<Resource>,
) -> Result<IssuedTokens, GrantError> {
    let issued = services
        .issuer()
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes,
            geolocation: user.geolocation,
            jkt: dpop_jkt.map(str::to_owned),
            amr: if grant == StartedBy::Otp {
                vec![AuthMethod::Otp]
            } else {
                AuthMethod::PASSWORD.to_vec()
            },
            idp: None,
            grant,
            auth_time: Some(services.ctx.clock.now()),
            sid: None,
            issued_by: None,
            audience: resources.clone(),
            resources,
        })
        .await?;
    Ok(issued.into())
}
