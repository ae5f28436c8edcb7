//! The interaction's steps after the first: which way a login goes (an identity provider or
//! the password), the second factor a first factor leads to, and the session at the end. A
//! first factor from a company's identity provider travels through the code and enrolment steps
//! as [`UpstreamProof`], so that the session says how it was started.

use super::carrier;
use super::messages::{sign_in_message, TOO_MANY_CODES, WRONG_CODE};
use super::outcome::{identify, shown, IdpChoice, Next, Shown, SignInError, SignedIn, Step};
use super::state::{Interaction, State, UpstreamProof};
use super::upstream::{self, leave_for};
use crate::domain::{
    AuthMethod, IdentityProvider, IdpId, PrincipalId, StartedSession, UpstreamSession, User,
};
use crate::errors::{ErrorCode, ServerError};
use crate::flows::second_factor::{
    self, AfterPassword, CodeCheck, Confirmation, EnrolmentBinding, PasswordStep,
};
use crate::flows::sessions;
use crate::services::Services;

/// A login without a password: its company's identity provider (one: at once; several: a
/// button each, `chosen` the one pressed), else the password step, the same page whether or
/// not the login exists.
pub(super) async fn discover(
    services: &Services,
    interaction: Interaction<'_>,
    login: &str,
    chosen: Option<&str>,
) -> Result<Next, SignInError> {
    // A button pressed: the IdP it names (any IdP may be asked to sign someone in; only it can).
    if let Some(chosen) = chosen.and_then(|id| IdpId::parse(id).ok()) {
        let found = services
            .ctx
            .store
            .federation()
            .get_identity_provider(&chosen);
        return match found.await.map_err(ServerError::from)? {
            Some(idp) => leave_for(services, interaction, &idp, login).await,
            None => Ok(identify(login, None)),
        };
    }
    let idps = upstream::idps_for(services, login).await?;
    match idps.as_slice() {
        [] => Ok(identify(login, None)),
        [only] => leave_for(services, interaction, only, login).await,
        several => Ok(Next::Show(Shown::ChooseIdp {
            login: login.to_owned(),
            choices: several.iter().map(choice).collect(),
        })),
    }
}

/// A user whose company signs its people in only through its identity providers, and who is
/// no break-glass user, proved who they are here: no session, but their company's IdP (one: at
/// once; several: a button each; none: the sentence of code 181).
pub(super) async fn to_company_idp(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
) -> Result<Next, SignInError> {
    let login = user.login.as_str();
    let Some(company) = user.company_id else {
        return Ok(identify(
            login,
            Some(sign_in_message(ErrorCode::SsoRequired)),
        ));
    };
    let idps = services
        .ctx
        .store
        .federation()
        .list_identity_providers(&company)
        .await
        .map_err(ServerError::from)?;
    match idps.as_slice() {
        [] => Ok(identify(
            login,
            Some(sign_in_message(ErrorCode::SsoRequired)),
        )),
        [only] => leave_for(services, interaction, only, login).await,
        several => Ok(Next::Show(Shown::ChooseIdp {
            login: login.to_owned(),
            choices: several.iter().map(choice).collect(),
        })),
    }
}

fn choice(idp: &IdentityProvider) -> IdpChoice {
    IdpChoice {
        id: idp.id.to_string(),
        name: idp.name.clone(),
    }
}

/// An authorization request's `idp_hint`: that IdP at once, else the sign-in form, saying so.
pub async fn leave_for_hinted(
    services: &Services,
    interaction: Interaction<'_>,
    idp: &str,
    login_hint: &str,
) -> Result<Next, SignInError> {
    let found = match IdpId::parse(idp) {
        Ok(id) => {
            services
                .ctx
                .store
                .federation()
                .get_identity_provider(&id)
                .await
        }
        Err(_) => Ok(None),
    };
    match found.map_err(ServerError::from)? {
        Some(idp) => leave_for(services, interaction, &idp, login_hint).await,
        None => Ok(identify(login_hint, Some(UNKNOWN_IDP))),
    }
}

/// An `idp_hint` naming no IdP.
pub const UNKNOWN_IDP: &str =
    "The sign-in service the application asked for is not known here. Please sign in below.";

/// After a correct password: the session, or the second factor's step the user must take.
pub(super) async fn after_password(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
) -> Result<Next, SignInError> {
    after_first_factor(services, interaction, user, None).await
}

/// Back from the company's identity provider: the session, or, when the sign-in there does not
/// count as two factors and one is needed, the second factor's step.
pub(super) async fn after_upstream(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    proof: UpstreamProof,
    two_factors: bool,
) -> Result<Next, SignInError> {
    if two_factors {
        let mut amr = proof.amr.clone();
        if !amr.contains(&AuthMethod::Mfa) {
            amr.push(AuthMethod::Mfa);
        }
        return Ok(signed_in_with(services, interaction, user.id, &amr, Some(&proof)).await?);
    }
    after_first_factor(services, interaction, user, Some(proof)).await
}

async fn after_first_factor(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    upstream: Option<UpstreamProof>,
) -> Result<Next, SignInError> {
    match second_factor::after_password(services, user).await? {
        AfterPassword::SignedIn => {
            let amr = upstream
                .as_ref()
                .map_or_else(|| AuthMethod::PASSWORD.to_vec(), |proof| proof.amr.clone());
            Ok(signed_in_with(services, interaction, user.id, &amr, upstream.as_ref()).await?)
        }
        AfterPassword::Code => code_page(services, interaction, user, upstream).await,
        AfterPassword::Enrol => {
            let state = State::Enrol {
                user: user.id,
                upstream,
            };
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

/// The code page of a new first-factor step: its own id, which the codes typed after it count
/// against.
async fn code_page(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    upstream: Option<UpstreamProof>,
) -> Result<Next, SignInError> {
    let step = second_factor::new_step_id(services.ctx.random.as_ref());
    let state = State::SecondFactor {
        user: user.id,
        step,
        upstream,
    };
    let carried = carrier::seal(services, interaction, &state).await?;
    Ok(shown(carried, Step::SecondFactor { error: None }))
}

/// The methods of a first factor followed by a code here.
pub(super) fn with_code(upstream: Option<&UpstreamProof>) -> Vec<AuthMethod> {
    let Some(proof) = upstream else {
        return AuthMethod::PASSWORD_AND_CODE.to_vec();
    };
    let mut amr = proof.amr.clone();
    for method in [AuthMethod::Otp, AuthMethod::Mfa] {
        if !amr.contains(&method) {
            amr.push(method);
        }
    }
    amr
}

pub(super) async fn code_step(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    carried: &str,
    code: &str,
    step: PasswordStep<'_>,
    upstream: Option<&UpstreamProof>,
) -> Result<Next, SignInError> {
    match second_factor::check_code_after(services, user, code, step).await? {
        check @ (CodeCheck::Totp(_) | CodeCheck::Recovery) => {
            let amr = with_code(upstream);
            let spent = match check {
                CodeCheck::Totp(spent) => Some((user.clone(), spent)),
                _ => None,
            };
            match signed_in_with(services, interaction, user.id, &amr, upstream).await {
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

pub(super) async fn enrol_step(
    services: &Services,
    interaction: Interaction<'_>,
    user: &User,
    carried: &str,
    enrolment: &str,
    code: &str,
    upstream: Option<&UpstreamProof>,
) -> Result<Next, SignInError> {
    let binding = EnrolmentBinding::SignIn(interaction.browser);
    match second_factor::confirm_enrolment(services, binding, user, enrolment, code).await? {
        Confirmation::Enrolled(codes) => {
            let state = State::Enrolled {
                user: user.id,
                upstream: upstream.cloned(),
            };
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
            code_page(services, interaction, user, upstream.cloned()).await
        }
        Confirmation::Stale => Ok(Next::Restart),
    }
}

pub(super) async fn signed_in(
    services: &Services,
    interaction: Interaction<'_>,
    user: PrincipalId,
    amr: &[AuthMethod],
) -> Result<Next, ServerError> {
    signed_in_with(services, interaction, user, amr, None).await
}

pub(super) async fn signed_in_with(
    services: &Services,
    interaction: Interaction<'_>,
    user: PrincipalId,
    amr: &[AuthMethod],
    upstream: Option<&UpstreamProof>,
) -> Result<Next, ServerError> {
    let session_upstream = match upstream {
        Some(proof) => {
            Some(sessions::upstream_session(services, proof.idp, &proof.id_token).await?)
        }
        None => None,
    };
    let auth_time = upstream.and_then(|proof| proof.auth_time);
    let started = session_for_with(
        services,
        user,
        amr,
        interaction.session_cookie,
        session_upstream,
        auth_time,
    )
    .await?;
    Ok(Next::SignedIn(Box::new(SignedIn {
        started,
        then: interaction.then.clone(),
        spent: None,
    })))
}

/// The session a sign-in continues or starts: the browser's own session of the same user, started
/// the same way (by a password, or by the same IdP), signs in again (same `sid`, new cookie and
/// `auth_time`); otherwise a new one, authenticated at the IdP's `auth_time` when it said.
async fn session_for_with(
    services: &Services,
    user: PrincipalId,
    amr: &[AuthMethod],
    session_cookie: Option<&str>,
    upstream: Option<UpstreamSession>,
    auth_time: Option<crate::clock::UnixTime>,
) -> Result<StartedSession, ServerError> {
    let idp = upstream.as_ref().map(|upstream| upstream.idp);
    let current = sessions::current(services, session_cookie)
        .await?
        .filter(|session| session.principal_id == user)
        .filter(|session| session.upstream.as_ref().map(|upstream| upstream.idp) == idp);
    if let Some(session) = current {
        if let Some(again) = sessions::reauthenticate(services, &session, amr).await? {
            return Ok(again);
        }
    }
    sessions::start_with(services, user, amr, upstream, auth_time).await
}
