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
mod state;
#[cfg(test)]
mod tests;

use std::net::IpAddr;

use crate::auth::authenticate_user_from;
use crate::clock::UnixTime;
use crate::domain::{AuthMethod, PrincipalId, SessionId, StartedSession, User};
use crate::errors::{Denial, GrantError, Refusal, ServerError};
use crate::flows::passkeys::{self, PASSKEY_AMR};
use crate::flows::second_factor::{
    self, AfterPassword, CodeCheck, Confirmation, Enrolment, EnrolmentBinding, PasswordStep,
    SpentStep,
};
use crate::flows::sessions;
use crate::limits::Exceeded;
use crate::services::Services;

pub use carrier::STEP_TTL_SECONDS;
pub use forms::{
    form_token, nonce_form_token, page_keys, verify_form_token, PageKeys, WeakSecret, CSRF_FIELD,
    MIN_SECRET_BYTES,
};
pub use messages::{sign_in_message, NOT_THE_EXPECTED_ACCOUNT, TOO_MANY_CODES, WRONG_CODE};
pub use state::{Continue, Interaction, State};

/// What the user sent. Holds a password: no `Debug`.
pub enum Input<'a> {
    /// The sign-in form: a login and password, or a passkey's answer (its ceremony id and the
    /// browser's answer). A company's upstream identity provider is one more way here.
    Identify {
        login: &'a str,
        password: &'a str,
        passkey: Option<(&'a str, &'a str)>,
    },
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
        }
    }
}

/// What the page shows next, `carried` being the sealed [`State`] its form sends back.
#[derive(Debug)]
pub enum Shown {
    /// The sign-in form, `login` filled in, with why the last try was refused.
    Identify {
        login: String,
        error: Option<&'static str>,
    },
    /// One of the interaction's own pages.
    Step { carried: String, step: Step },
}

/// The interaction's own pages, rendered alike on every page that runs it.
#[derive(Debug)]
pub enum Step {
    /// An authenticator-app or recovery code.
    SecondFactor { error: Option<&'static str> },
    /// The company requires a second factor and the user has none: an authenticator app, set
    /// up now and confirmed by its first code.
    Enrol {
        enrolment: Enrolment,
        error: Option<&'static str>,
    },
    /// That enrolment is stored: its recovery codes, shown once, and the button that continues.
    RecoveryCodes { codes: Vec<String> },
}

fn shown(carried: String, step: Step) -> Next {
    Next::Show(Shown::Step { carried, step })
}

/// The user proved who they are: the session (started, or signed in again), and what to do.
#[derive(Debug)]
pub struct SignedIn {
    pub started: StartedSession,
    pub then: Continue,
    /// The authenticator-app code step this sign-in used, to give back if what the page does
    /// next fails (a 503 must not spend the code).
    spent: Option<(User, SpentStep)>,
}

impl SignedIn {
    /// What the page continued with failed and answers 503: the code typed may be typed again.
    pub async fn give_back_code(self, services: &Services) {
        if let Some((user, spent)) = self.spent {
            second_factor::give_back(services, &user, spent).await;
        }
    }

    pub fn user(&self) -> PrincipalId {
        self.started.session.principal_id
    }

    pub fn sid(&self) -> &SessionId {
        &self.started.session.sid
    }

    pub fn amr(&self) -> &[AuthMethod] {
        &self.started.session.amr
    }

    pub fn auth_time(&self) -> UnixTime {
        self.started.session.authenticated_at
    }
}

#[derive(Debug)]
pub enum Next {
    Show(Shown),
    SignedIn(Box<SignedIn>),
    /// The carried state or the enrolment is not this service's, is another browser's, or is
    /// no longer valid (expired, its user gone): nothing was compared. The page shows its
    /// sign-in form again, or refuses a form it cannot have made (the authorize page's 400).
    Restart,
}

/// Too many sign-in posts from the source address: the page answers 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Too many sign-in attempts from your network. Please wait a minute and try again.")]
pub struct SlowDown {
    pub retry_after: i64,
}

impl Denial for SlowDown {}

impl From<Exceeded> for SlowDown {
    fn from(exceeded: Exceeded) -> Self {
        Self {
            retry_after: exceeded.retry_after,
        }
    }
}

pub type SignInError = Refusal<SlowDown>;

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
                Ok(user) => signed_in(services, interaction, user.id, PASSKEY_AMR).await?,
                Err(Refusal::Denied(denial)) => identify(login, Some(denial.message())),
                Err(Refusal::Server(error)) => return Err(error.into()),
            },
        ),
        Input::Identify {
            login, password, ..
        } => match authenticate_user_from(services, login, password, source).await {
            Ok(user) if !is_expected(interaction, &user) => {
                Ok(identify(login, Some(NOT_THE_EXPECTED_ACCOUNT)))
            }
            Ok(user) => after_password(services, interaction, &user).await,
            Err(GrantError::Denied(denial)) => {
                Ok(identify(login, Some(sign_in_message(denial.code))))
            }
            Err(GrantError::Server(error)) => Err(error.into()),
        },
        Input::Code { carried, code } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::SecondFactor { step, .. }, Some(user)) = (&opened.state, opened.user)
            else {
                return Ok(Next::Restart);
            };
            let step = PasswordStep {
                id: step,
                expires_at: opened.expires_at,
            };
            code_step(services, interaction, &user, carried, code, step).await
        }
        Input::Enrol {
            carried,
            enrolment,
            code,
        } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::Enrol { .. }, Some(user)) = (&opened.state, opened.user) else {
                return Ok(Next::Restart);
            };
            enrol_step(services, interaction, &user, carried, enrolment, code).await
        }
        Input::Enrolled { carried } => {
            let Some(opened) = carrier::open(services, interaction, carried).await? else {
                return Ok(Next::Restart);
            };
            let (State::Enrolled { .. }, Some(user)) = (&opened.state, opened.user) else {
                return Ok(Next::Restart);
            };
            let amr = AuthMethod::PASSWORD_AND_CODE;
            Ok(signed_in(services, interaction, user.id, amr).await?)
        }
    }
}

fn is_expected(interaction: Interaction<'_>, user: &User) -> bool {
    interaction
        .expected_user
        .is_none_or(|expected| expected == user.id)
}

/// The sign-in form again.
pub fn identify(login: &str, error: Option<&'static str>) -> Next {
    Next::Show(Shown::Identify {
        login: login.to_owned(),
        error,
    })
}

/// After a correct password: the session, or the second factor's step the user must take.
async fn after_password(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
) -> Result<Next, SignInError> {
    match second_factor::after_password(services, user).await? {
        AfterPassword::SignedIn => {
            Ok(signed_in(services, interaction, user.id, AuthMethod::PASSWORD).await?)
        }
        AfterPassword::Code => code_page(services, interaction, user).await,
        AfterPassword::Enrol => {
            let state = State::Enrol { user: user.id };
            let carried = carrier::seal(services, interaction, &state).await?;
            let binding = EnrolmentBinding::SignIn(interaction.browser);
            let enrolment = second_factor::begin_enrolment(services, binding, user).await?;
            Ok(shown(
                carried,
                Step::Enrol {
                    enrolment,
                    error: None,
                },
            ))
        }
        AfterPassword::UsePasskey => Ok(identify(
            user.login.as_str(),
            Some(second_factor::USE_YOUR_PASSKEY),
        )),
    }
}

/// The code page of a new password step: its own id, which the codes typed after it count
/// against.
async fn code_page(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
) -> Result<Next, SignInError> {
    let step = second_factor::new_step_id(services.ctx.random.as_ref());
    let state = State::SecondFactor {
        user: user.id,
        step,
    };
    let carried = carrier::seal(services, interaction, &state).await?;
    Ok(shown(carried, Step::SecondFactor { error: None }))
}

async fn code_step(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    carried: &str,
    code: &str,
    step: PasswordStep<'_>,
) -> Result<Next, SignInError> {
    match second_factor::check_code_after(services, user, code, step).await? {
        check @ (CodeCheck::Totp(_) | CodeCheck::Recovery) => {
            let amr = AuthMethod::PASSWORD_AND_CODE;
            let spent = match check {
                CodeCheck::Totp(spent) => Some((user.clone(), spent)),
                _ => None,
            };
            match signed_in(services, interaction, user.id, amr).await {
                Ok(Next::SignedIn(mut signed_in)) => {
                    signed_in.spent = spent;
                    Ok(Next::SignedIn(signed_in))
                }
                Ok(next) => Ok(next),
                Err(error) => {
                    // A 503 must not spend the code: the user's retry types the same one.
                    if let Some((user, spent)) = spent {
                        second_factor::give_back(services, &user, spent).await;
                    }
                    Err(error.into())
                }
            }
        }
        CodeCheck::Wrong => Ok(shown(
            carried.to_owned(),
            Step::SecondFactor {
                error: Some(WRONG_CODE),
            },
        )),
        CodeCheck::Locked => Ok(identify(
            "",
            Some(sign_in_message(crate::errors::ErrorCode::AccountLocked)),
        )),
        CodeCheck::TooManyCodes => Ok(identify("", Some(TOO_MANY_CODES))),
    }
}

async fn enrol_step(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    carried: &str,
    enrolment: &str,
    code: &str,
) -> Result<Next, SignInError> {
    let binding = EnrolmentBinding::SignIn(interaction.browser);
    match second_factor::confirm_enrolment(services, binding, user, enrolment, code).await? {
        Confirmation::Enrolled(codes) => {
            let state = State::Enrolled { user: user.id };
            let carried = carrier::seal(services, interaction, &state).await?;
            Ok(shown(carried, Step::RecoveryCodes { codes }))
        }
        Confirmation::WrongCode(enrolment) => Ok(shown(
            carried.to_owned(),
            Step::Enrol {
                enrolment,
                error: Some("That code was not right. Please type the code your app shows now."),
            },
        )),
        // Too old, or an app set up meanwhile (another tab): the code page, for that app.
        Confirmation::Stale if second_factor::is_enrolled(services, user).await? => {
            code_page(services, interaction, user).await
        }
        Confirmation::Stale => Ok(Next::Restart),
    }
}

async fn signed_in(
    services: &Services,
    interaction: Interaction<'_>,
    user: PrincipalId,
    amr: &[AuthMethod],
) -> Result<Next, ServerError> {
    let started = session_for(services, user, amr, interaction.session_cookie).await?;
    Ok(Next::SignedIn(Box::new(SignedIn {
        started,
        then: interaction.then.clone(),
        spent: None,
    })))
}

/// The session a credential sign-in continues or starts: the browser's own session of the same
/// user signs in again (same `sid`, new cookie and `auth_time`); otherwise a new one.
pub async fn session_for(
    services: &Services,
    user: PrincipalId,
    amr: &[AuthMethod],
    session_cookie: Option<&str>,
) -> Result<StartedSession, ServerError> {
    let current = sessions::current(services, session_cookie)
        .await?
        .filter(|session| session.principal_id == user);
    if let Some(session) = current {
        if let Some(again) = sessions::reauthenticate(services, &session, amr).await? {
            return Ok(again);
        }
    }
    sessions::start(services, user, amr).await
}
