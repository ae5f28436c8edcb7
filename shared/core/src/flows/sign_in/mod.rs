//! The pages' one sign-in interaction, free of HTTP: who the user is (a password or a passkey),
//! then, when they have or must have one, their second factor (an authenticator-app or recovery
//! code) or its enrolment, until they are signed in, with a session, and the page continues
//! with what it was opened for ([`Continue`]). The account page and the device page run it as
//! it is; each keeps only its own steps (the overview, the device's approval).
//!
//! Between steps the interaction's [`State`] travels in the page's form, sealed and bound to
//! what the browser holds for this sign-in (its form nonce) and to what it continues with, so
//! that one browser's step is useless in another or for another device's code. Each step is
//! counted against the source address's sign-in limit before anything is compared, as a
//! password is; the codes after one password step are counted against it too.

mod carrier;
mod forms;
mod messages;
mod outcome;
mod saml_return;
mod state;
mod steps;
#[cfg(test)]
mod tests;
mod upstream;

use std::net::IpAddr;

use crate::auth::{authenticate_user_from, requires_company_idp};
use crate::domain::User;
use crate::errors::{GrantError, Refusal};
use crate::flows::passkeys::{self, PASSKEY_AMR};
use crate::flows::second_factor::PasswordStep;
use crate::services::Services;
use steps::{
    after_password, after_upstream, code_step, discover, enrol_step, signed_in, signed_in_with,
    to_company_idp, with_code,
};

pub use carrier::STEP_TTL_SECONDS;
pub use forms::{
    form_token, nonce_form_token, page_keys, verify_form_token, PageKeys, WeakSecret, CSRF_FIELD,
    MIN_SECRET_BYTES,
};
pub use messages::{sign_in_message, NOT_THE_EXPECTED_ACCOUNT, TOO_MANY_CODES, WRONG_CODE};
pub use outcome::{identify, IdpChoice, Next, Shown, SignInError, SignedIn, SlowDown, Step};
pub use saml_return::{returned_from_saml, AcsPost};
pub use state::{Continue, Interaction, State, UpstreamProof};
pub use steps::{leave_for_hinted, UNKNOWN_IDP};
pub use upstream::{returned, Callback, Returned, IDP_UNREACHABLE};

/// What the user sent. Holds a password: no `Debug`.
pub enum Input<'a> {
    /// The sign-in form: a login and password, or a passkey's answer (its ceremony id and the
    /// browser's answer). A company's upstream identity provider is one more way here.
    Identify {
        login: &'a str,
        password: &'a str,
        passkey: Option<(&'a str, &'a str)>,
        /// The company identity provider's button the user pressed, of those the login's
        /// domain offered.
        idp: Option<&'a str>,
    },
    /// Back from the company's identity provider, with the step our callback sealed.
    Upstream { carried: &'a str },
    /// The code page: an authenticator-app or recovery code, with the carried state.
    Code { carried: &'a str, code: &'a str },
    /// The enrolment page: the sealed enrolment and its first code, with the carried state.
    Enrol {
        carried: &'a str,
        enrolment: &'a str,
        code: &'a str,
    },
    /// The recovery codes page's button, with the carried state.
    Enrolled { carried: &'a str },
}

impl<'a> Input<'a> {
    /// The sign-in form's fields as the pages' forms read them (each absent one empty): a
    /// passkey's ceremony and answer when both were sent, else the login and password.
    pub fn identify(
        login: &'a Option<String>,
        password: &'a Option<String>,
        passkey_ceremony: &'a Option<String>,
        passkey_answer: &'a Option<String>,
    ) -> Self {
        Self::Identify {
            login: login.as_deref().unwrap_or_default(),
            password: password.as_deref().unwrap_or_default(),
            passkey: passkey_ceremony.as_deref().zip(passkey_answer.as_deref()),
            idp: None,
        }
    }

    /// The sign-in form with the identity provider button the user pressed, if one.
    #[must_use]
    pub fn choosing(self, chosen: &'a Option<String>) -> Self {
        match self {
            Self::Identify {
                login,
                password,
                passkey,
                ..
            } => Self::Identify {
                login,
                password,
                passkey,
                idp: chosen.as_deref().filter(|idp| !idp.is_empty()),
            },
            other => other,
        }
    }
}

/// One step of the interaction: `input` from `source`, counted against its sign-in limit first.
pub async fn advance(
    services: &Services,
    interaction: Interaction<'_>,
    input: Input<'_>,
    source: Option<IpAddr>,
) -> Result<Next, SignInError> {
    services
        .limiter()
        .count_sign_in_attempt(source, services.ctx.clock.now())
        .await?;
    advance_counted(services, interaction, input, source).await
}

/// [`advance`] for a page that counted the post itself (the authorize page counts it against
/// the pending request too, and not the recovery codes page's button).
pub async fn advance_counted(
    services: &Services,
    interaction: Interaction<'_>,
    input: Input<'_>,
    source: Option<IpAddr>,
) -> Result<Next, SignInError> {
    match input {
        Input::Identify {
            login,
            passkey: Some((ceremony, answer)),
            ..
        } => Ok(
            match passkeys::authenticate(services, ceremony, answer).await {
                Ok(user) if !is_expected(interaction, &user) => {
                    identify(login, Some(NOT_THE_EXPECTED_ACCOUNT))
                }
                Ok(user) if requires_company_idp(services, &user).await? => {
                    to_company_idp(services, interaction, &user).await?
                }
                Ok(user) => signed_in(services, interaction, user.id, PASSKEY_AMR).await?,
                Err(Refusal::Denied(denial)) => identify(login, Some(denial.message())),
                Err(Refusal::Server(error)) => return Err(error.into()),
            },
        ),
        Input::Identify {
            login,
            password: "",
            idp,
            ..
        } => discover(services, interaction, login, idp).await,
        Input::Identify {
            login, password, ..
        } => match authenticate_user_from(services, login, password, source).await {
            Ok(user) if !is_expected(interaction, &user) => {
                Ok(identify(login, Some(NOT_THE_EXPECTED_ACCOUNT)))
            }
            Ok(user) if requires_company_idp(services, &user).await? => {
                to_company_idp(services, interaction, &user).await
            }
            Ok(user) => after_password(services, interaction, &user).await,
            Err(GrantError::Denied(denial)) => {
                Ok(identify(login, Some(sign_in_message(denial.code))))
            }
            Err(GrantError::Server(error)) => Err(error.into()),
        },
        Input::Upstream { carried } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (
                State::Upstream {
                    proof, two_factors, ..
                },
                Some(user),
            ) = (opened.state, opened.user)
            else {
                return Ok(Next::Restart);
            };
            if !is_expected(interaction, &user) {
                return Ok(identify("", Some(NOT_THE_EXPECTED_ACCOUNT)));
            }
            after_upstream(services, interaction, &user, proof, two_factors).await
        }
        Input::Code { carried, code } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::SecondFactor { step, upstream, .. }, Some(user)) =
                (&opened.state, opened.user)
            else {
                return Ok(Next::Restart);
            };
            let step = PasswordStep {
                id: step,
                expires_at: opened.expires_at,
            };
            let upstream = upstream.as_ref();
            code_step(services, interaction, &user, carried, code, step, upstream).await
        }
        Input::Enrol {
            carried,
            enrolment,
            code,
        } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::Enrol { upstream, .. }, Some(user)) = (&opened.state, opened.user) else {
                return Ok(Next::Restart);
            };
            let upstream = upstream.as_ref();
            enrol_step(
                services,
                interaction,
                &user,
                carried,
                enrolment,
                code,
                upstream,
            )
            .await
        }
        Input::Enrolled { carried } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::Enrolled { upstream, .. }, Some(user)) = (&opened.state, opened.user)
            else {
                return Ok(Next::Restart);
            };
            let upstream = upstream.as_ref();
            let amr = with_code(upstream);
            Ok(signed_in_with(services, interaction, user.id, &amr, upstream).await?)
        }
    }
}

fn is_expected(interaction: Interaction<'_>, user: &User) -> bool {
    interaction
        .expected_user
        .is_none_or(|expected| expected == user.id)
}
