//! `grant_type=password`: a user's login and password (`credtype=password`, the default,
//! `user.rs`), or a company's id and auth token (`credtype=authtoken`, `authtoken.rs`).

mod authtoken;
mod user;

pub(super) use user::start_user_family;

use super::GrantContext;
use crate::errors::GrantError;
use crate::issuance::IssuedTokens;
use crate::requests::{CredentialType, PasswordRequest};
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: PasswordRequest,
) -> Result<IssuedTokens, GrantError> {
    match request.credtype {
        CredentialType::Password => user::grant(services, context, request).await,
        CredentialType::AuthToken => authtoken::grant(services, context, request).await,
    }
}
