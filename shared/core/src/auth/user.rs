//! A user's password, with lockout after repeated failures (docs/decisions.md, "Lockout"), and
//! what a user who proved who they are must still be to sign in: wherever a user signs in (the
//! password grant, the sign-in page). The public sign-in page counts its attempts per login and
//! source address instead ([`authenticate_user_from`]).

use std::net::IpAddr;

use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::{Client, ClientId, Login, PrincipalId, PrincipalType, User, UserStatus};
use crate::errors::{ErrorCode, GrantError, ServerError};
use crate::limits::source_subject;
use crate::secrets::PasswordHash;
use crate::services::Services;
use crate::store::{Attempt, AttemptLimit, Hit, LoginRefund, RateKey, RateLimit};

/// A user's sign-in, wherever it happens (this grant, the authorize page): the password with
/// its lockout, then the account's status and home geolocation. The user, or the catalogue code
/// the password grant answers. `client` is the app signed in to, named by a lockout's audit
/// event.
pub async fn authenticate_user(
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
pub async fn authenticate_user_refund_pending(
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
pub fn check_user_may_sign_in(services: &Services, user: &User) -> Result<(), GrantError> {
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

/// Whether `user`'s company requires a second factor (`tokenctl companies set-mfa`): such a
/// user finishes page sign-ins with a passkey or an authenticator-app code, and is refused
/// every grant that signs in with one factor alone (the password grant, the one-time password
/// grant: code 180). A user of no company, or of a company gone, decides alone.
pub async fn requires_second_factor(services: &Services, user: &User) -> Result<bool, ServerError> {
    let Some(company) = &user.company_id else {
        return Ok(false);
    };
    Ok(services
        .ctx
        .store
        .principals()
        .get_company(company)
        .await?
        .is_some_and(|company| company.mfa_policy.is_required()))
}

/// A grant that signs `user` in with one factor: refused (403 `access_denied`, code 180) when
/// their company requires a second one, or when they enrolled one themselves (a passkey, an
/// authenticator app): a factor a user added protects them only if no grant goes around it.
/// The three reads run side by side, so a correct password waits one round trip for them.
pub async fn check_one_factor_allowed(services: &Services, user: &User) -> Result<(), GrantError> {
    let (company_requires, own) = futures::try_join!(
        requires_second_factor(services, user),
        has_own_second_factor(services, &user.id),
    )?;
    if company_requires || own {
        return Err(ErrorCode::SecondFactorRequired.into());
    }
    Ok(())
}

/// Whether `user` must sign in through one of their company's identity providers: the company
/// requires it (`tokenctl companies set-sso`) and the user is no break-glass user (`tokenctl
/// users set-local-sign-in`). A user of no company, or of a company gone, signs in here.
pub async fn requires_company_idp(services: &Services, user: &User) -> Result<bool, ServerError> {
    if user.local_sign_in {
        return Ok(false);
    }
    let Some(company) = &user.company_id else {
        return Ok(false);
    };
    Ok(services
        .ctx
        .store
        .principals()
        .get_company(company)
        .await?
        .is_some_and(|company| company.sso_policy.is_required()))
}

/// A grant or page that signs `user` in with a credential of ours (a password, a one-time
/// password): refused (403 `access_denied`, code 181) when [`requires_company_idp`]. Called
/// once the credential is known right, so that it tells nothing to whoever does not have it.
pub async fn check_local_sign_in_allowed(
    services: &Services,
    user: &User,
) -> Result<(), GrantError> {
    if requires_company_idp(services, user).await? {
        return Err(ErrorCode::SsoRequired.into());
    }
    Ok(())
}

/// Whether `user` enrolled a second factor: an authenticator app or a passkey.
pub async fn has_own_second_factor(
    services: &Services,
    user: &PrincipalId,
) -> Result<bool, ServerError> {
    let store = &services.ctx.store;
    let (app, passkeys) = futures::try_join!(
        store.second_factors().get_totp_factor(user),
        store.passkeys().list_passkeys(user),
    )?;
    Ok(app.is_some() || !passkeys.is_empty())
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
    let attempt = match count_attempt(services, &login).await? {
        Some(Attempt::Locked) => return Err(ErrorCode::AccountLocked.into()),
        Some(Attempt::Allowed(attempt)) => Some(attempt),
        None => None,
    };
    let (user, verified) = compare_password(services, &login, password).await?;
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

/// The login's user, if any, and whether `password` is its password. An unknown login is
/// compared with a decoy hash, at the same cost.
async fn compare_password(
    services: &Services,
    login: &Login,
    password: &str,
) -> Result<(Option<User>, bool), GrantError> {
    let user = services
        .ctx
        .store
        .principals()
        .get_user_by_login(login)
        .await?;
    let hash = match &user {
        Some(u) => u.password_hash.clone(),
        None => PasswordHash::decoy().clone(),
    };
    let password = password.to_owned();
    // Argon2 takes tens of milliseconds of CPU: keep it off the async workers.
    let verified = tokio::task::spawn_blocking(move || hash.verify(&password))
        .await
        .map_err(|e| ServerError::internal_because("the password verification task failed", e))?;
    Ok((user, verified))
}

/// The public sign-in page's check: the password grant's, except for what is counted. The page
/// needs no client credentials, so a stranger's wrong passwords must not lock the account (a
/// login and five posts would lock anyone out): attempts are counted per login and source
/// address (an IPv6 /64), `LOCKOUT_THRESHOLD` per lockout window, before the password is
/// compared, and a correct password takes its attempt back. Past that, only this source is
/// refused for this login (answered as code 141, the per-address limit's). A login the password
/// grant has locked stays locked here too (14), read without counting. Unknown logins are
/// counted alike, so nothing tells which logins exist.
pub async fn authenticate_user_from(
    services: &Services,
    username: &str,
    password: &str,
    source: Option<IpAddr>,
) -> Result<User, GrantError> {
    let Ok(login) = Login::parse(username) else {
        return Err(ErrorCode::IncorrectCredentials.into());
    };
    let policy = &services.policy;
    let now = services.ctx.clock.now();
    let counted = if policy.lockout_threshold == 0 {
        None
    } else {
        let lock = AttemptLimit {
            threshold: policy.lockout_threshold,
            window_seconds: policy.lockout_window_seconds,
        };
        let lockout = services.ctx.store.lockout();
        if lockout.is_login_locked(&login, lock, now).await? {
            return Err(ErrorCode::AccountLocked.into());
        }
        let rate = RateLimit {
            max: lock.threshold,
            window_seconds: lock.window_seconds,
        };
        let source = source.map_or_else(|| "unknown".to_owned(), source_subject);
        let key = RateKey::new("signin-attempts", &format!("{}#{source}", login.as_str()));
        let limits = services.ctx.store.rate_limits();
        if let Hit::Refused { .. } = limits.count_hit(&key, rate, now).await? {
            crate::measure::rate_limited("signin-attempts");
            return Err(ErrorCode::AddressRateLimited.into());
        }
        Some((key, rate))
    };
    let (user, verified) = compare_password(services, &login, password).await?;
    match user {
        Some(user) if verified => {
            if let Some((key, rate)) = counted {
                let limits = services.ctx.store.rate_limits();
                limits.refund_hit(&key, rate, now).await?;
            }
            check_user_may_sign_in(services, &user)?;
            Ok(user)
        }
        _ => Err(ErrorCode::IncorrectCredentials.into()),
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

/// Takes back a correct password's counted attempt, so that correct logins never lock anyone
/// out.
pub async fn take_back(services: &Services, refund: &LoginRefund) -> Result<(), GrantError> {
    services
        .ctx
        .store
        .lockout()
        .refund_login_attempt(&refund.login, &refund.attempt)
        .await?;
    Ok(())
}
