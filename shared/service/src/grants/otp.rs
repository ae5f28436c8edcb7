//! `grant_type=otp` (contract part 9): a one-time password mailed by `POST /oauth2/v0/otp`
//! proves the caller owns an address; the user with that address gets a family.

use super::password::{check_user_may_sign_in, start_user_family};
use super::{requested_scopes, GrantError, IssuedTokens, TokenParams};
use crate::domain::{Client, GrantType, User};
use crate::errors::{ErrorCode, ServerError};
use crate::otp::{verify_otp, OtpDeps, OtpError, OtpFacts, OtpVerification};
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
) -> Result<IssuedTokens, GrantError> {
    if !client.may_use(GrantType::Otp) {
        return Err(ErrorCode::UnsupportedGrant.into());
    }
    let verification = OtpVerification {
        client_id: client.id,
        otp: params.secret("otp"),
        channel_type: params.get("channel_type").map(str::to_owned),
        channel_handle: params.get("channel_handle").map(str::to_owned),
        facts: otp_facts(params),
    };
    // Before the password is tried: a request that cannot succeed must not spend it.
    let scopes = requested_scopes(params, &client.allowed_scopes)?;
    let store = &services.ctx.store;
    // 56, 57, 58, 80, 81, 83, 85, 84, then 55: the flow's order.
    let user: User = verify_otp(otp_deps(services), verification, |address| async move {
        store.get_user_by_email(&address).await
    })
    .await?;
    // As the password grant: the address proves who the caller is, the user's state decides.
    check_user_may_sign_in(services, &user)?;
    start_user_family(services, client, user, scopes).await
}

/// The flows' dependencies, out of the process's services.
pub fn otp_deps(services: &Services) -> OtpDeps<'_> {
    OtpDeps {
        store: services.ctx.store.as_ref(),
        mailer: services.mailer.as_ref(),
        clock: services.ctx.clock.as_ref(),
        random: &services.ctx.random,
    }
}

/// `name`, `company` and `link`: bound to the request, repeated at the grant.
pub fn otp_facts(params: &TokenParams) -> OtpFacts {
    let fact = |name: &str| params.get(name).map(str::to_owned);
    OtpFacts {
        name: fact("name"),
        company: fact("company"),
        link: fact("link"),
    }
}

/// Refusals keep their catalogue code; a failed send is worth a retry (503); store failures
/// keep their own kind.
impl From<OtpError> for GrantError {
    fn from(error: OtpError) -> Self {
        if let Some(code) = error.error_code() {
            return code.into();
        }
        match error {
            OtpError::Store(e) => e.into(),
            other => ServerError::Unavailable(other.to_string()).into(),
        }
    }
}
