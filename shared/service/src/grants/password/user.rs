//! `credtype=password`: a user's login and password, with lockout after repeated failures.

use crate::domain::{Client, Login, PrincipalType, User, UserStatus};
use crate::errors::{ErrorCode, ServerError};
use crate::grants::{requested_scopes, FamilyStart, GrantError, IssuedTokens, TokenParams};
use crate::secrets::PasswordHash;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
    username: &str,
    password: &str,
) -> Result<IssuedTokens, GrantError> {
    let scopes = requested_scopes(params, &client.allowed_scopes)?;
    let user = authenticate_user(services, username, password).await?;
    let issued = services
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes,
            geolocation: user.geolocation,
            legacy_exchange: None,
        })
        .await?;
    Ok(issued.expect("a family without a legacy link cannot race"))
}

/// A user's sign-in, wherever it happens (this grant, the authorize page): the password with
/// its lockout, then the account's status and home geolocation. The user, or the catalogue code
/// the password grant answers.
pub(crate) async fn authenticate_user(
    services: &Services,
    username: &str,
    password: &str,
) -> Result<User, GrantError> {
    let user = verify_password(services, username, password).await?;
    match user.status {
        UserStatus::Active => {}
        UserStatus::Disabled => return Err(ErrorCode::AccountDisabled.into()),
        UserStatus::LogonDenied => return Err(ErrorCode::LogonDenied.into()),
    }
    if &user.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(user.geolocation));
    }
    Ok(user)
}

/// Proves the password or answers code 5, never saying whether the login exists: an unknown
/// login is verified against a decoy hash (same cost) and counts towards the same lockout.
async fn verify_password(
    services: &Services,
    username: &str,
    password: &str,
) -> Result<User, GrantError> {
    let Ok(login) = Login::parse(username) else {
        return Err(ErrorCode::IncorrectCredentials.into());
    };
    let store = &services.ctx.store;
    let now = services.ctx.clock.now();
    let policy = &services.policy;
    let window_start = now - policy.lockout_window_seconds;
    if policy.lockout_threshold > 0
        && store.count_failed_logins(&login, window_start).await? >= policy.lockout_threshold
    {
        return Err(ErrorCode::AccountLocked.into());
    }

    let user = store.get_user_by_login(&login).await?;
    let hash = match &user {
        Some(u) => u.password_hash.clone(),
        None => PasswordHash::decoy().clone(),
    };
    let password = password.to_owned();
    // Argon2 takes tens of milliseconds of CPU: keep it off the async workers.
    let verified = tokio::task::spawn_blocking(move || hash.verify(&password))
        .await
        .map_err(|e| ServerError::Internal(format!("password verification task failed: {e}")))?;
    match user {
        Some(user) if verified => Ok(user),
        _ => {
            store
                .record_failed_login(&login, now, now + policy.lockout_window_seconds)
                .await?;
            Err(ErrorCode::IncorrectCredentials.into())
        }
    }
}
