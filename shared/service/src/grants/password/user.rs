//! `credtype=password`: a user's login and password, with lockout after repeated failures.

use crate::audit;
use crate::domain::audit::{AuditKind, StartedBy};
use crate::domain::{Client, ClientId, Login, PrincipalType, Scopes, User, UserStatus};
use crate::errors::{ErrorCode, ServerError};
use crate::grants::{requested_family_scopes, FamilyStart, GrantError, IssuedTokens, TokenParams};
use crate::secrets::PasswordHash;
use crate::services::Services;
use crate::store::{Attempt, AttemptLimit, LoginRefund};

/// The family's write takes back the password's attempt (docs/decisions.md, Lockout): a correct
/// password costs the attempt, the user's read and that one write.
pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
    username: &str,
    password: &str,
) -> Result<IssuedTokens, GrantError> {
    let scopes = requested_family_scopes(params, client)?;
    let (user, refund) =
        authenticate_user_refund_pending(services, client.id, username, password).await?;
    let start = FamilyStart {
        client_id: client.id,
        principal_type: PrincipalType::User,
        principal_id: user.id,
        scopes,
        geolocation: user.geolocation,
        jkt: params.dpop_jkt().map(str::to_owned),
        grant: StartedBy::Password,
        auth_time: Some(services.ctx.clock.now()),
    };
    match services.start_family_refunding(start, refund.clone()).await {
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

async fn take_back(services: &Services, refund: &LoginRefund) -> Result<(), GrantError> {
    services
        .ctx
        .store
        .lockout()
        .refund_login_attempt(&refund.login, &refund.attempt)
        .await?;
    Ok(())
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
) -> Result<IssuedTokens, GrantError> {
    let issued = services
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::User,
            principal_id: user.id,
            scopes,
            geolocation: user.geolocation,
            jkt: dpop_jkt.map(str::to_owned),
            grant,
            auth_time: Some(services.ctx.clock.now()),
        })
        .await?;
    Ok(issued.into())
}

/// A user's sign-in, wherever it happens (this grant, the authorize page): the password with
/// its lockout, then the account's status and home geolocation. The user, or the catalogue code
/// the password grant answers. `client` is the app signed in to, named by a lockout's audit
/// event.
pub(crate) async fn authenticate_user(
    services: &Services,
    client: &Client,
    username: &str,
    password: &str,
) -> Result<User, GrantError> {
    let (user, refund) =
        authenticate_user_refund_pending(services, client.id, username, password).await?;
    if let Some(refund) = refund {
        take_back(services, &refund).await?;
    }
    Ok(user)
}

/// [`authenticate_user`], leaving the correct password's attempt for the caller to take back
/// (with the family it writes). A user who may not sign in gets it back here.
async fn authenticate_user_refund_pending(
    services: &Services,
    client: ClientId,
    username: &str,
    password: &str,
) -> Result<(User, Option<LoginRefund>), GrantError> {
    let (user, refund) = verify_password(services, client, username, password).await?;
    if let Err(refusal) = check_user_may_sign_in(services, &user) {
        if let Some(refund) = refund {
            take_back(services, &refund).await?;
        }
        return Err(refusal);
    }
    Ok((user, refund))
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
/// password's attempt is returned, to be taken back, so correct logins never lock anyone out.
async fn verify_password(
    services: &Services,
    client: ClientId,
    username: &str,
    password: &str,
) -> Result<(User, Option<LoginRefund>), GrantError> {
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
        Some(user) if verified => Ok((user, attempt.map(|attempt| LoginRefund { login, attempt }))),
        _ => {
            // The wrong password that reaches the threshold locks the login.
            if attempt.is_some_and(|a| a.count == services.policy.lockout_threshold) {
                crate::measure::lockout();
                // The login itself is never recorded (it may be a mistyped password).
                let mut event = audit::event(&services.ctx, AuditKind::LoginLocked).client(client);
                if let Some(user) = &user {
                    event = event.principal(PrincipalType::User, user.id);
                }
                audit::record(&services.ctx, event).await;
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
