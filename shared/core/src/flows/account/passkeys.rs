//! The account page's passkey actions (docs/decisions.md, "Passkeys"): the registration options
//! its script asks for, and the forms that add, rename and remove a passkey. The same CSRF token
//! as the page's other forms (an HMAC of the session id) guards each of them.

use super::page::{AccountDenial, AccountError, AccountForm, AccountStep, ACCOUNT_FORM};
use crate::domain::SignInSession;
use crate::errors::Refusal;
use crate::flows::passkeys::{
    add, authentication_options, registration_options, remove, rename, CeremonyStart, PasskeyDenial,
};
use crate::flows::sessions;
use crate::flows::sign_in::{verify_form_token, PageKeys};
use crate::limits::{source_subject, Limit};
use crate::services::Services;

/// `POST /oauth2/v0/account/passkeys/options`: a registration for the signed-in browser whose
/// page's CSRF token `csrf` is, if its sign-in is fresh enough to add a factor.
pub async fn registration_options_for(
    services: &Services,
    keys: &PageKeys,
    session_cookie: Option<&str>,
    csrf: &str,
) -> Result<CeremonyStart, AccountError> {
    let session = sessions::current(services, session_cookie)
        .await?
        .filter(|session| verify_form_token(keys, ACCOUNT_FORM, session.sid.as_str(), csrf))
        .ok_or(AccountDenial::BadForm)?;
    if !super::fresh::may_change_factors(services, &session).await? {
        return Err(AccountDenial::SignInAgain.into());
    }
    registration_options(services, &session)
        .await
        .map_err(|error| match error {
            Refusal::Denied(_) => AccountDenial::BadForm.into(),
            Refusal::Server(error) => error.into(),
        })
}

/// The account page's passkey forms (`add_passkey`, `rename_passkey`, `remove_passkey`), for a
/// session whose CSRF token was checked. A refusal is shown on the page (`Err(message)`).
pub async fn act(
    services: &Services,
    session: &SignInSession,
    action: &str,
    form: &AccountForm,
) -> Result<Result<AccountStep, &'static str>, AccountError> {
    let user = session.principal_id;
    let credential = form.credential_id.as_deref().unwrap_or_default();
    let name = form.name.as_deref().unwrap_or_default();
    let outcome = match action {
        "add_passkey" => {
            let ceremony = form.passkey_ceremony.as_deref().unwrap_or_default();
            let answer = form.passkey_answer.as_deref().unwrap_or_default();
            add(services, session, ceremony, answer, name)
                .await
                .map(|_| ())
        }
        "rename_passkey" => rename(services, &user, credential, name).await.map(|_| ()),
        "remove_passkey" => {
            remove(services, &user, credential).await?;
            Ok(())
        }
        _ => return Err(AccountDenial::BadForm.into()),
    };
    match outcome {
        Ok(()) => Ok(Ok(AccountStep::Reload {
            session_cookie: None,
        })),
        Err(Refusal::Denied(denial)) => Ok(Err(denial.message())),
        Err(Refusal::Server(error)) => Err(error.into()),
    }
}

impl PasskeyDenial {
    /// The sentence a page shows.
    pub fn message(self) -> &'static str {
        match self {
            Self::SignIn(_) => "This passkey could not be used to sign in. Please try again, or sign in with your password.",
            Self::Registration(_) => "The passkey could not be added. Please try again.",
            Self::NoName => "Please give the passkey a name.",
            Self::Unavailable => "Passkeys cannot be used at this address.",
        }
    }
}

/// `POST /oauth2/v0/passkeys/options`: a sign-in ceremony for a sign-in page. Each one is a
/// stored item, so they count toward the source address's sign-in limit.
pub async fn sign_in_options(
    services: &Services,
    source: Option<std::net::IpAddr>,
) -> Result<CeremonyStart, AccountError> {
    if let Some(source) = source {
        let now = services.ctx.clock.now();
        services
            .limiter()
            .count(Limit::AddressPasswordAttempts, &source_subject(source), now)
            .await?;
    }
    authentication_options(services)
        .await
        .map_err(|error| match error {
            Refusal::Denied(_) => AccountDenial::BadForm.into(),
            Refusal::Server(error) => error.into(),
        })
}
