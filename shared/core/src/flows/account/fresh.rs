//! A factor change needs a fresh sign-in (docs/decisions.md, "Sign-in factors"): adding or
//! removing a passkey or the authenticator app is refused to a session alone. The session's
//! sign-in must be at most [`FRESH_SIGN_IN_SECONDS`] old and, for a user who has a second
//! factor, have used two (its `amr` has `mfa`). Otherwise the page asks the user to sign in
//! again (their own login filled in), which renews the same session, and the user comes back
//! to the page.

use super::page::{AccountError, AccountStep};
use super::sign_in::sign_in_form;
use crate::auth::has_own_second_factor;
use crate::domain::{AuthMethod, SignInSession};
use crate::errors::ServerError;
use crate::flows::sign_in::PageKeys;
use crate::services::Services;

/// How recent a sign-in must be to change the user's factors: ten minutes.
pub const FRESH_SIGN_IN_SECONDS: i64 = 600;

/// What the sign-in form says when it asks again.
pub const SIGN_IN_AGAIN: &str = "To change how you sign in, please sign in again.";

/// The account page's forms that add or remove a factor (renaming a passkey changes none).
pub(super) fn changes_factors(action: &str) -> bool {
    matches!(
        action,
        "totp_start" | "totp_confirm" | "totp_remove" | "add_passkey" | "remove_passkey"
    )
}

/// Whether `session`'s sign-in is fresh enough, and strong enough, to change factors.
pub(crate) async fn may_change_factors(
    services: &Services,
    session: &SignInSession,
) -> Result<bool, ServerError> {
    if session.age(services.ctx.clock.now()) > FRESH_SIGN_IN_SECONDS {
        return Ok(false);
    }
    if session.amr.contains(&AuthMethod::Mfa) {
        return Ok(true);
    }
    Ok(!has_own_second_factor(services, &session.principal_id).await?)
}

/// The sign-in form again, the session's user's login filled in.
pub(super) async fn sign_in_again(
    services: &Services,
    keys: &PageKeys,
    session: &SignInSession,
) -> Result<AccountStep, AccountError> {
    let login = services
        .ctx
        .store
        .principals()
        .get_user(&session.principal_id)
        .await?
        .map(|user| user.login.as_str().to_owned())
        .unwrap_or_default();
    Ok(sign_in_form(
        services,
        keys,
        None,
        login,
        Some(SIGN_IN_AGAIN),
    ))
}
