//! `credtype=password`: a user's login and password, with lockout after repeated failures.

use crate::domain::{Client, Login, PrincipalType, Scopes, User, UserStatus};
use crate::errors::{ErrorCode, ServerError};
use crate::grants::{requested_family_scopes, FamilyStart, GrantError, IssuedTokens, TokenParams};
use crate::secrets::PasswordHash;
use crate::services::Services;
use crate::store::{Attempt, AttemptLimit};

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
    username: &str,
    password: &str,
) -> Result<IssuedTokens, GrantError> {
    let scopes = requested_family_scopes(params, client)?;
    let user = authenticate_user(services, username, password).await?;
    start_user_family(services, client, user, scopes).await
}

/// A new family for a user who has just proved who they are (a password, a one-time password),
/// homed where the user lives.
pub(crate) async fn start_user_family(
    services: &Services,
    client: &Client,
    user: User,
    scopes: Scopes,
) -> Result<IssuedTokens, GrantError> {
    let issued = services
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes,
            geolocation: user.geolocation,
        })
        .await?;
    Ok(issued.into())
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
    check_user_may_sign_in(services, &user)?;
    Ok(user)
}

/// Once a user has proved who they are (a password, a one-time password): a disabled account
/// (10), a denied logon (12), or a user homed at another deployment (16) gets no tokens here.
pub(crate) fn check_user_may_sign_in(services: &Services, user: &User) -> Result<(), GrantError> {
    match user.status {
        UserStatus::Active => {}
        UserStatus::Disabled => return Err(ErrorCode::AccountDisabled.into()),
        UserStatus::LogonDenied => return Err(ErrorCode::LogonDenied.into()),
    }
    if &user.geolocation != services.geolocation() {
        return Err(GrantError::lives_elsewhere(user.geolocation.clone()));
    }
    Ok(())
}

/// Proves the password or answers code 5, never saying whether the login exists: an unknown
/// login is verified against a decoy hash (same cost) and counts towards the same lockout.
///
/// The attempt is counted before the password is compared, atomically with the lockout check
/// (docs/decisions.md, "Lockout"), so parallel guesses cannot pass the threshold; a correct
/// password takes its attempt back, so correct logins never lock anyone out.
async fn verify_password(
    services: &Services,
    username: &str,
    password: &str,
) -> Result<User, GrantError> {
    let Ok(login) = Login::parse(username) else {
        return Err(ErrorCode::IncorrectCredentials.into());
    };
    let store = &services.ctx.store;
    let attempt = match count_attempt(services, &login).await? {
        Some(Attempt::Locked) => return Err(ErrorCode::AccountLocked.into()),
        Some(Attempt::Allowed(attempt)) => Some(attempt),
        None => None,
    };

    let user = store.principals().get_user_by_login(&login).await?;
    let hash = match &user {
        Some(u) => u.password_hash.clone(),
        None => PasswordHash::decoy().clone(),
    };
    let password = password.to_owned();
    // Argon2 takes tens of milliseconds of CPU: keep it off the async workers.
    let verified = tokio::task::spawn_blocking(move || hash.verify(&password))
        .await
        .map_err(|e| ServerError::internal_because("the password verification task failed", e))?;
    match user {
        Some(user) if verified => {
            if let Some(attempt) = attempt {
                store
                    .lockout()
                    .refund_login_attempt(&login, &attempt)
                    .await?;
            }
            Ok(user)
        }
        _ => {
            // The wrong password that reaches the threshold locks the login.
            if attempt.is_some_and(|a| a.count == services.policy.lockout_threshold) {
                crate::measure::lockout();
            }
            Err(ErrorCode::IncorrectCredentials.into())
        }
    }
}

/// Counts the attempt against the lockout; `None` when `LOCKOUT_THRESHOLD=0` disables it.
async fn count_attempt(services: &Services, login: &Login) -> Result<Option<Attempt>, GrantError> {
    let policy = &services.policy;
    if policy.lockout_threshold == 0 {
        return Ok(None);
    }
    let limit = AttemptLimit {
        threshold: policy.lockout_threshold,
        window_seconds: policy.lockout_window_seconds,
    };
    let now = services.ctx.clock.now();
    Ok(Some(
        services
            .ctx
            .store
            .lockout()
            .register_login_attempt(login, limit, now)
            .await?,
    ))
}
