//! `grant_type=password`: a user's login and password (`credtype=password`, the default,
//! `user.rs`), or a company's id and auth token (`credtype=authtoken`, `authtoken.rs`).

mod authtoken;
mod user;

pub(super) use user::start_user_family;

use crate::domain::{Client, GrantType};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::IssuedTokens;
use crate::params::TokenParams;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
) -> Result<IssuedTokens, GrantError> {
    if !client.may_use(GrantType::Password) {
        return Err(ErrorCode::UnsupportedGrant.into());
    }
    let username = params.require("username", ErrorCode::UsernameMissing)?;
    let password = params.require("password", ErrorCode::PasswordMissing)?;
    match params.get("credtype").unwrap_or("password") {
        "password" => user::grant(services, client, params, username, password).await,
        "authtoken" => authtoken::grant(services, client, params, username, password).await,
        _ => Err(ErrorCode::CredtypeInvalid.into()),
    }
}
