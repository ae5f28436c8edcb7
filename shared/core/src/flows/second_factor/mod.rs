//! Authenticator apps and recovery codes, free of HTTP (docs/decisions.md, "Second factors"):
//! enrolling one from the account page, removing it, and checking a typed code, a wrong one
//! counting toward the user's lockout like a wrong password.
//!
//! The TOTP secret is sealed with AES-256-GCM under a key the key ring derives from the
//! deployment's server secret (HKDF, its own purpose), the user's id as associated data so that
//! a sealed secret copied to another user's record opens nothing. Between showing the QR code
//! and the first correct code nothing is stored: the new secret travels in the form, sealed the
//! same way and bound to the browser's session, for [`ENROLMENT_TTL_SECONDS`].

mod seal;

use crate::audit;
use crate::clock::UnixTime;
use crate::domain::audit::AuditKind;
use crate::domain::{
    normalise_recovery_code, recovery_codes, PrincipalType, SignInSession, TotpFactor, TotpSecret,
    User,
};
use crate::errors::ServerError;
use crate::mail::FactorChange;
use crate::secrets::TokenHash;
use crate::services::Services;
use crate::store::{Attempt, AttemptLimit};

use crate::signing::seal::Sealer;
pub use seal::sealer;

/// Time to scan the code and type the first code.
pub const ENROLMENT_TTL_SECONDS: UnixTime = 600;

/// The name authenticator apps show next to the account.
const ISSUER: &str = "Token Service";

/// What the enrolment page shows: the secret as a QR code (its `otpauth://` URI) and as text,
/// and the sealed secret the confirmation form carries back.
#[derive(Debug)]
pub struct Enrolment {
    pub otpauth_uri: String,
    pub secret_base32: String,
    pub sealed: String,
}

/// How a typed code was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeCheck {
    /// An authenticator-app code of a step not used before, now used.
    Totp(SpentStep),
    /// An unused recovery code, now used.
    Recovery,
    /// Wrong, replayed, or no enrolment: counted toward the lockout.
    Wrong,
    /// The login is locked (by wrong passwords or codes): nothing compared.
    Locked,
    /// The password step this code followed had its
    /// [`CODE_POSTS_PER_PASSWORD_STEP`](crate::limits::CODE_POSTS_PER_PASSWORD_STEP) codes:
    /// nothing compared, the sign-in starts again with the password.
    TooManyCodes,
}

/// The password step a code on a sign-in page follows: an id unique to that step (what the
/// browser carries for it, never the user's) and when the step ends.
#[derive(Debug, Clone, Copy)]
pub struct PasswordStep<'a> {
    pub id: &'a str,
    pub expires_at: UnixTime,
}

/// The step an accepted code used, and the one used before: what [`give_back`] restores when
/// what the code was for could not be written, so that the user's retry with the same code
/// succeeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpentStep {
    step: i64,
    previous: i64,
}

/// Gives back an accepted code's step after a store failure answered the user with a 503: the
/// same code may then be typed again (if no later code was used meanwhile). Best effort: when
/// the store is still failing, the next code (30 seconds on) works.
pub async fn give_back(services: &Services, user: &User, spent: SpentStep) {
    let released = services
        .ctx
        .store
        .second_factors()
        .release_totp_step(&user.id, spent.step, spent.previous)
        .await;
    if let Err(error) = released {
        tracing::warn!(%error, "an accepted authenticator code's step was not given back");
    }
}

/// What an enrolment in the form is bound to: the browser's session (the account page), or
/// the sign-in it finishes (a pending authorization's id, the account page's sign-in nonce).
#[derive(Debug, Clone, Copy)]
pub enum EnrolmentBinding<'a> {
    Session(&'a SignInSession),
    /// A sign-in whose password was correct, of a user who must enrol before the session
    /// starts: the value the browser holds for that sign-in.
    SignIn(&'a str),
}

impl EnrolmentBinding<'_> {
    fn context(&self, user: &User) -> String {
        match self {
            Self::Session(session) => {
                format!("totp-enrolment\0{}\0{}", session.principal_id, session.sid)
            }
            Self::SignIn(sign_in) => format!("totp-enrolment-sign-in\0{}\0{sign_in}", user.id),
        }
    }
}

/// A new secret for the user, not stored until confirmed.
pub async fn begin_enrolment(
    services: &Services,
    binding: EnrolmentBinding<'_>,
    user: &User,
) -> Result<Enrolment, ServerError> {
    let key = sealer(services).await?;
    let secret = TotpSecret::generate(services.ctx.random.as_ref());
    Ok(enrolment(services, &key, binding, user, &secret))
}

fn enrolment(
    services: &Services,
    key: &Sealer,
    binding: EnrolmentBinding<'_>,
    user: &User,
    secret: &TotpSecret,
) -> Enrolment {
    let expires_at = services.ctx.clock.now() + ENROLMENT_TTL_SECONDS;
    let mut payload = expires_at.to_be_bytes().to_vec();
    payload.extend_from_slice(secret.as_bytes());
    Enrolment {
        otpauth_uri: secret.otpauth_uri(ISSUER, user.login.as_str()),
        secret_base32: secret.base32(),
        sealed: key.seal(
            &binding.context(user),
            &payload,
            services.ctx.random.as_ref(),
        ),
    }
}

/// What the confirmation of an enrolment answers.
#[derive(Debug)]
pub enum Confirmation {
    /// Stored: the recovery codes, to be shown once.
    Enrolled(Vec<String>),
    /// A wrong code: the same enrolment again.
    WrongCode(Enrolment),
    /// The sealed enrolment is not this session's, or too old; or the user enrolled meanwhile.
    Stale,
}

/// The first code confirms the enrolment: the record is stored (that code's step used) with ten
/// recovery codes, returned once.
pub async fn confirm_enrolment(
    services: &Services,
    binding: EnrolmentBinding<'_>,
    user: &User,
    sealed: &str,
    code: &str,
) -> Result<Confirmation, ServerError> {
    let key = sealer(services).await?;
    let now = services.ctx.clock.now();
    let Some(payload) = key.open(&binding.context(user), sealed) else {
        return Ok(Confirmation::Stale);
    };
    let (expiry, secret) = payload.split_at(8);
    let expires_at = UnixTime::from_be_bytes(expiry.try_into().expect("split at 8"));
    if expires_at <= now {
        return Ok(Confirmation::Stale);
    }
    let secret = TotpSecret::from_bytes(secret.to_vec());
    let Some(step) = secret.verify(code, now, None) else {
        return Ok(Confirmation::WrongCode(enrolment(
            services, &key, binding, user, &secret,
        )));
    };
    let (codes, hashes) = recovery_codes(services.ctx.random.as_ref());
    let factor = TotpFactor {
        principal_id: user.id,
        sealed_secret: key.seal(
            &secret_context(user),
            secret.as_bytes(),
            services.ctx.random.as_ref(),
        ),
        last_used_step: step,
        recovery_codes: hashes,
        enrolled_at: now,
    };
    if !services
        .ctx
        .store
        .second_factors()
        .put_totp_factor(&factor)
        .await?
    {
        return Ok(Confirmation::Stale);
    }
    record(services, user, AuditKind::SecondFactorEnrolled).await;
    let change = FactorChange::AuthenticatorAppAdded;
    crate::flows::factor_notice::notify(services, &user.id, change).await;
    Ok(Confirmation::Enrolled(codes))
}

fn secret_context(user: &User) -> String {
    format!("totp-secret\0{}", user.id)
}

/// What a user whose password was right must still do before a page starts their session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPassword {
    /// Nothing: the session starts with the password alone.
    SignedIn,
    /// Type an authenticator-app code or a recovery code.
    Code,
    /// The company requires a second factor and the user has none: set up an authenticator
    /// app now (the session starts after the first code and the recovery codes).
    Enrol,
    /// The user's second factor is a passkey: sign in with it.
    UsePasskey,
}

/// The step after a correct password on a sign-in page: the code for a user with an
/// authenticator app; their passkey for a user who has one (a factor a user enrolled is
/// required of them, as by a company); for a user whose company requires a second factor
/// (`tokenctl companies set-mfa`) and who has none, the enrolment. The reads run side by side.
pub async fn after_password(
    services: &Services,
    user: &User,
) -> Result<AfterPassword, ServerError> {
    let (app, passkeys, company_requires) = futures::try_join!(
        is_enrolled(services, user),
        async { Ok(crate::flows::passkeys::list(services, &user.id).await?) },
        crate::auth::requires_second_factor(services, user),
    )?;
    Ok(if app {
        AfterPassword::Code
    } else if !passkeys.is_empty() {
        AfterPassword::UsePasskey
    } else if company_requires {
        AfterPassword::Enrol
    } else {
        AfterPassword::SignedIn
    })
}

/// What the sign-in pages say, after a correct password, to a user whose second factor is a
/// passkey (their company's policy or their own enrolment requires it).
pub const USE_YOUR_PASSKEY: &str =
    "A password alone is not enough for this account. Please sign in with your passkey.";

/// A new [`PasswordStep`] id: random, so that a new password starts a new count of codes.
pub fn new_step_id(random: &dyn crate::random::RandomSource) -> String {
    use base64::Engine;
    let mut id = [0u8; 16];
    random.fill(&mut id);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

/// Whether `user` has an authenticator app.
pub async fn is_enrolled(services: &Services, user: &User) -> Result<bool, ServerError> {
    Ok(services
        .ctx
        .store
        .second_factors()
        .get_totp_factor(&user.id)
        .await?
        .is_some())
}

/// Removal needs a current code or a recovery code (so a browser left signed in does not
/// give the second factor away); `true` when removed.
pub async fn remove(
    services: &Services,
    user: &User,
    code: &str,
) -> Result<CodeCheck, ServerError> {
    let check = check_code(services, user, code).await?;
    if matches!(check, CodeCheck::Totp(_) | CodeCheck::Recovery)
        && services
            .ctx
            .store
            .second_factors()
            .delete_totp_factor(&user.id)
            .await?
    {
        record(services, user, AuditKind::SecondFactorRemoved).await;
        let change = FactorChange::AuthenticatorAppRemoved;
        crate::flows::factor_notice::notify(services, &user.id, change).await;
    }
    Ok(check)
}

/// A code typed on a sign-in page after the password `step`: counted against the step (at most
/// [`CODE_POSTS_PER_PASSWORD_STEP`](crate::limits::CODE_POSTS_PER_PASSWORD_STEP) per step, one
/// stolen step is not a code oracle), then checked as [`check_code`]. The caller counts the post
/// against the source address's sign-in limit first, as for a password.
pub async fn check_code_after(
    services: &Services,
    user: &User,
    typed: &str,
    step: PasswordStep<'_>,
) -> Result<CodeCheck, ServerError> {
    let step_id = format!("{}\0{}", user.id, step.id);
    if !services
        .limiter()
        .count_code_post(&step_id, step.expires_at)
        .await?
    {
        return Ok(CodeCheck::TooManyCodes);
    }
    check_code(services, user, typed).await
}

/// Checks `typed`: six digits are an authenticator-app code (its step used once), anything else
/// a recovery code (used once). Each code is counted toward the login's lockout before it is
/// compared, atomically with the lockout's check, as a password is (so that parallel guesses
/// never get more than the threshold compared); a right one takes its count back, a wrong one is
/// audited, and the one that reaches the threshold locks the login.
pub async fn check_code(
    services: &Services,
    user: &User,
    typed: &str,
) -> Result<CodeCheck, ServerError> {
    let policy = &services.policy;
    let now = services.ctx.clock.now();
    let lockout = services.ctx.store.lockout();
    let counted = if policy.lockout_threshold == 0 {
        None
    } else {
        let limit = AttemptLimit {
            threshold: policy.lockout_threshold,
            window_seconds: policy.lockout_window_seconds,
        };
        match lockout
            .register_login_attempt(&user.login, limit, now)
            .await?
        {
            Attempt::Locked => return Ok(CodeCheck::Locked),
            Attempt::Allowed(attempt) => Some(attempt),
        }
    };
    let accepted = accept(services, user, typed, now).await?;
    if accepted != CodeCheck::Wrong {
        if let Some(attempt) = counted {
            // Best effort: the code is spent either way, and an attempt left counted only
            // brings the lockout nearer.
            if let Err(error) = lockout.refund_login_attempt(&user.login, &attempt).await {
                tracing::warn!(%error, "a right code's counted attempt was not taken back");
            }
        }
        return Ok(accepted);
    }
    record(services, user, AuditKind::SecondFactorFailed).await;
    match counted {
        Some(attempt) if attempt.count >= policy.lockout_threshold => {
            crate::measure::lockout();
            record(services, user, AuditKind::LoginLocked).await;
            Ok(CodeCheck::Locked)
        }
        _ => Ok(CodeCheck::Wrong),
    }
}

async fn accept(
    services: &Services,
    user: &User,
    typed: &str,
    now: UnixTime,
) -> Result<CodeCheck, ServerError> {
    let factors = services.ctx.store.second_factors();
    let Some(factor) = factors.get_totp_factor(&user.id).await? else {
        return Ok(CodeCheck::Wrong);
    };
    let typed = typed.trim();
    if typed.len() == crate::domain::TOTP_DIGITS && typed.bytes().all(|b| b.is_ascii_digit()) {
        let key = sealer(services).await?;
        let Some(secret) = key.open(&secret_context(user), &factor.sealed_secret) else {
            return Err(ServerError::internal(
                "a stored authenticator secret does not open with this deployment's key",
            ));
        };
        let secret = TotpSecret::from_bytes(secret);
        return Ok(
            match secret.verify(typed, now, Some(factor.last_used_step)) {
                Some(step) if factors.use_totp_step(&user.id, step).await? => {
                    CodeCheck::Totp(SpentStep {
                        step,
                        previous: factor.last_used_step,
                    })
                }
                _ => CodeCheck::Wrong,
            },
        );
    }
    let hash = TokenHash::of(&normalise_recovery_code(typed));
    Ok(if factors.use_recovery_code(&user.id, &hash).await? {
        CodeCheck::Recovery
    } else {
        CodeCheck::Wrong
    })
}

async fn record(services: &Services, user: &User, kind: AuditKind) {
    let event = audit::event(&services.ctx, kind).principal(PrincipalType::User, user.id);
    audit::record(&services.ctx, event).await;
}
