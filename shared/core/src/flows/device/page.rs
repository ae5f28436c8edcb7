//! The verification page of the device grant, free of HTTP: the user enters the code the device
//! shows, signs in (the pages' one sign-in interaction: a password or a passkey, then the
//! second factor or its enrolment) unless the browser holds a live session, sees the consent
//! screen naming the client and scopes, approves or denies, and is told to return to the
//! device.
//!
//! The page keeps no state of its own between steps: each form carries the typed user code,
//! which is looked up again. CSRF: before sign-in the forms carry an HMAC of a random nonce the
//! browser holds in a cookie of this path only (as the account page's sign-in form); the consent
//! form one of the session id and the user code, so it is useless in another session or for
//! another code. A wrong or dead user code counts against the source address like a wrong
//! one-time password, and the address is refused for a day once the limit is reached.

use std::net::IpAddr;

use crate::domain::DEVICE_CODE_TTL_SECONDS;
use crate::domain::{Client, DeviceAuthorization, DeviceDecision, SignInSession, UserCode};
use crate::errors::{Denial, Refusal};
use crate::flows::sessions;
use crate::flows::sign_in::{
    self, form_token, nonce_form_token, verify_form_token, Continue, IdpChoice, Input, Interaction,
    Next, PageKeys, Shown, Step,
};
use crate::limits::{source_subject, Exceeded};
use crate::services::Services;

pub const DEVICE_PATH: &str = "/oauth2/v0/device";
/// The pre-sign-in forms' nonce, sent to this page only.
pub const DEVICE_NONCE_COOKIE: &str = "device_form";
pub const DEVICE_NONCE_TTL_SECONDS: i64 = 900;

const CODE_FORM: &[u8] = b"device-code";
const CONSENT_FORM: &[u8] = b"device-consent";

/// What the browser is shown next.
#[derive(Debug)]
pub enum DeviceStep {
    /// The form to type the user code. `new_nonce`: the nonce cookie to set, when new.
    EnterCode {
        csrf_token: String,
        new_nonce: Option<String>,
        user_code: String,
        error: Option<&'static str>,
    },
    /// The sign-in form for the code `user_code`.
    SignIn {
        csrf_token: String,
        new_nonce: Option<String>,
        user_code: String,
        app_name: String,
        login: String,
        error: Option<&'static str>,
        /// The company identity providers the login may continue with, a button each.
        idp_choices: Vec<IdpChoice>,
    },
    /// `303` to the company's identity provider.
    Upstream { location: String },
    /// One of the sign-in interaction's own pages (the code, the enrolment, the recovery
    /// codes) for the code `user_code`, its forms carrying the sealed state `carried`.
    SignInStep {
        csrf_token: String,
        user_code: String,
        app_name: String,
        carried: String,
        step: Step,
    },
    /// The consent screen. `session_cookie`: set when a sign-in on this page started one.
    Consent {
        csrf_token: String,
        user_code: String,
        app_name: String,
        scopes: Vec<String>,
        /// The client registered itself (part 17): marked as not verified.
        self_registered: bool,
        session_cookie: Option<String>,
    },
    /// "Return to your device", after approving (`true`) or denying.
    Done { approved: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DeviceDenial {
    #[error("The form could not be accepted. Please open the page again.")]
    BadForm,
    #[error("Too many attempts from your network. Please try again later.")]
    SlowDown { retry_after: i64 },
}

impl Denial for DeviceDenial {}

impl From<Exceeded> for DeviceDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::SlowDown {
            retry_after: exceeded.retry_after,
        }
    }
}

/// The sign-in interaction's refusal: this page's 429.
impl From<crate::flows::sign_in::SlowDown> for DeviceDenial {
    fn from(slow: crate::flows::sign_in::SlowDown) -> Self {
        Self::SlowDown {
            retry_after: slow.retry_after,
        }
    }
}

pub type DevicePageError = Refusal<DeviceDenial>;

const WRONG_CODE: &str = "That code is not valid or has expired. Check the code on your device.";

/// The fields the page's forms post. Holds a password: no `Debug`.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
pub struct DeviceForm {
    pub csrf_token: Option<String>,
    /// `code`, `sign_in`, `sign_in_code`, `sign_in_totp_confirm`, `sign_in_enrolled`,
    /// `approve` or `deny`.
    pub action: Option<String>,
    pub user_code: Option<String>,
    pub login: Option<String>,
    pub password: Option<String>,
    /// `sign_in_code`, `sign_in_totp_confirm`: an authenticator-app or recovery code, or the
    /// enrolment's first code.
    pub code: Option<String>,
    /// `sign_in_totp_confirm`: the sealed enrolment the enrolment page carries.
    pub enrolment: Option<String>,
    /// The sign-in's sealed state the code, enrolment and recovery-codes pages carry.
    pub pending: Option<String>,
    /// A passkey sign-in (the page's script fills them in): the ceremony id and the browser's
    /// answer (JSON), in place of `login` and `password`.
    pub passkey_ceremony: Option<String>,
    pub passkey_answer: Option<String>,
    /// The sign-in form's company identity provider button: its id.
    pub idp: Option<String>,
}

/// The cookies the page reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeviceCookies<'a> {
    pub session: Option<&'a str>,
    pub nonce: Option<&'a str>,
}

/// `GET`: the code form, `user_code` pre-filled from the query.
pub fn show(services: &Services, keys: &PageKeys, user_code: Option<&str>) -> DeviceStep {
    let typed = user_code
        .map(|code| UserCode::parse(code).map_or_else(|| code.to_owned(), |c| c.display()))
        .unwrap_or_default();
    enter_code(services, keys, None, typed, None)
}

/// `POST`: one of the forms.
pub async fn act(
    services: &Services,
    keys: &PageKeys,
    cookies: DeviceCookies<'_>,
    form: &DeviceForm,
    source: Option<IpAddr>,
) -> Result<DeviceStep, DevicePageError> {
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    let typed = form.user_code.as_deref().unwrap_or_default();
    let action = form.action.as_deref().unwrap_or("code");
    if matches!(action, "approve" | "deny") {
        return decide(services, keys, cookies, typed, csrf, action == "approve").await;
    }
    let nonce = cookies.nonce.unwrap_or_default();
    if nonce.is_empty() || !verify_form_token(keys, CODE_FORM, nonce, csrf) {
        return Err(DeviceDenial::BadForm.into());
    }
    let Some((code, record, client)) = lookup(services, typed, source).await? else {
        return Ok(enter_code(
            services,
            keys,
            Some(nonce),
            typed.to_owned(),
            Some(WRONG_CODE),
        ));
    };
    match action {
        "code" => match sessions::current(services, cookies.session).await? {
            Some(session) => Ok(consent(keys, &session, &code, &record, &client, None)),
            None => Ok(sign_in_form(
                keys,
                nonce,
                &code,
                &client,
                String::new(),
                None,
            )),
        },
        "sign_in" | "sign_in_code" | "sign_in_totp_confirm" | "sign_in_enrolled" => {
            sign_in(
                services,
                keys,
                nonce,
                (action, form),
                source,
                (&code, &record, &client),
            )
            .await
        }
        _ => Err(DeviceDenial::BadForm.into()),
    }
}

/// The authorization a typed code names, if it still awaits the user, with its client. Each
/// guess is counted against the address before the lookup (a right code takes its count back),
/// so that parallel guesses never get more than the limit looked up; a blocked address is
/// refused before anything is read.
async fn lookup(
    services: &Services,
    typed: &str,
    source: Option<IpAddr>,
) -> Result<Option<(UserCode, DeviceAuthorization, Client)>, DevicePageError> {
    let now = services.ctx.clock.now();
    let limiter = services.limiter();
    let guess = match source {
        Some(source) => {
            let guesser = format!("device#{}", source_subject(source));
            limiter.count_guess(&guesser, now).await?
        }
        None => None,
    };
    let found = find(services, typed, now).await?;
    if let Some(guess) = guess {
        limiter.settle_guess(guess, found.is_some()).await?;
    }
    Ok(found)
}

async fn find(
    services: &Services,
    typed: &str,
    now: crate::clock::UnixTime,
) -> Result<Option<(UserCode, DeviceAuthorization, Client)>, DevicePageError> {
    let Some(code) = UserCode::parse(typed) else {
        return Ok(None);
    };
    let Some(record) = services
        .ctx
        .store
        .device_authorizations()
        .find_device_authorization(&code.hash(), now)
        .await?
        .filter(|record| record.awaits_user(now))
    else {
        return Ok(None);
    };
    let client = services
        .ctx
        .store
        .clients()
        .get_client(&record.client_id)
        .await?
        .filter(|client| client.enabled);
    Ok(client.map(|client| (code, record, client)))
}

/// One of the sign-in's forms for the code `code`: the pages' one interaction, continuing with
/// the device's consent.
async fn sign_in(
    services: &Services,
    keys: &PageKeys,
    nonce: &str,
    (action, form): (&str, &DeviceForm),
    source: Option<IpAddr>,
    (code, record, client): (&UserCode, &DeviceAuthorization, &Client),
) -> Result<DeviceStep, DevicePageError> {
    let carried = form.pending.as_deref().unwrap_or_default();
    let typed = form.code.as_deref().unwrap_or_default();
    let input = match action {
        "sign_in" => Input::identify(
            &form.login,
            &form.password,
            &form.passkey_ceremony,
            &form.passkey_answer,
        )
        .choosing(&form.idp),
        "sign_in_code" => Input::Code {
            carried,
            code: typed,
        },
        "sign_in_totp_confirm" => Input::Enrol {
            carried,
            enrolment: form.enrolment.as_deref().unwrap_or_default(),
            code: typed,
        },
        _ => Input::Enrolled { carried },
    };
    let then = Continue::DeviceCode(code.hash().to_hex());
    let resume = resume_query(code);
    let interaction = Interaction {
        browser: nonce,
        then: &then,
        session_cookie: None,
        expected_user: None,
        resume: Some(&resume),
    };
    let next = sign_in::advance(services, interaction, input, source)
        .await
        .map_err(Refusal::widen)?;
    Ok(step_of(keys, nonce, (code, record, client), next))
}

/// The device page's address, besides the step, after a company identity provider.
fn resume_query(code: &UserCode) -> String {
    format!("user_code={}", code.display())
}

/// `GET ?upstream=…&user_code=…`: back from the company's identity provider, the sign-in this
/// browser started for the code continues with the device's consent. Without the page's nonce
/// cookie, or for a code that no longer awaits the user: the code form.
pub async fn resume_upstream(
    services: &Services,
    keys: &PageKeys,
    cookies: DeviceCookies<'_>,
    carried: &str,
    user_code: Option<&str>,
) -> Result<DeviceStep, DevicePageError> {
    let typed = user_code.unwrap_or_default();
    let nonce = cookies.nonce.unwrap_or_default();
    let now = services.ctx.clock.now();
    let found = if nonce.is_empty() {
        None
    } else {
        find(services, typed, now).await?
    };
    let Some((code, record, client)) = found else {
        return Ok(enter_code(services, keys, None, typed.to_owned(), None));
    };
    let then = Continue::DeviceCode(code.hash().to_hex());
    let resume = resume_query(&code);
    let interaction = Interaction {
        browser: nonce,
        then: &then,
        session_cookie: None,
        expected_user: None,
        resume: Some(&resume),
    };
    let next = sign_in::advance_counted(services, interaction, Input::Upstream { carried }, None)
        .await
        .map_err(Refusal::widen)?;
    Ok(step_of(keys, nonce, (&code, &record, &client), next))
}

fn step_of(
    keys: &PageKeys,
    nonce: &str,
    (code, record, client): (&UserCode, &DeviceAuthorization, &Client),
    next: Next,
) -> DeviceStep {
    match next {
        Next::SignedIn(signed_in) => {
            let started = signed_in.started;
            let cookie = Some(started.cookie);
            consent(keys, &started.session, code, record, client, cookie)
        }
        Next::Upstream { location } => DeviceStep::Upstream { location },
        Next::Show(Shown::Identify { login, error }) => {
            sign_in_form(keys, nonce, code, client, login, error)
        }
        Next::Show(Shown::ChooseIdp { login, choices }) => {
            match sign_in_form(keys, nonce, code, client, login, None) {
                DeviceStep::SignIn {
                    csrf_token,
                    new_nonce,
                    user_code,
                    app_name,
                    login,
                    error,
                    ..
                } => DeviceStep::SignIn {
                    csrf_token,
                    new_nonce,
                    user_code,
                    app_name,
                    login,
                    error,
                    idp_choices: choices,
                },
                other => other,
            }
        }
        Next::Restart => sign_in_form(keys, nonce, code, client, String::new(), None),
        Next::Show(Shown::Step { carried, step }) => DeviceStep::SignInStep {
            csrf_token: form_token(keys, CODE_FORM, nonce),
            user_code: code.display(),
            app_name: client.name.clone(),
            carried,
            step,
        },
    }
}

/// The consent form's approval or denial, in the browser's live session.
async fn decide(
    services: &Services,
    keys: &PageKeys,
    cookies: DeviceCookies<'_>,
    typed: &str,
    csrf: &str,
    approved: bool,
) -> Result<DeviceStep, DevicePageError> {
    let session = sessions::current(services, cookies.session)
        .await?
        .ok_or(DeviceDenial::BadForm)?;
    let code = UserCode::parse(typed).ok_or(DeviceDenial::BadForm)?;
    if !verify_form_token(keys, CONSENT_FORM, &consent_id(&session, &code), csrf) {
        return Err(DeviceDenial::BadForm.into());
    }
    let now = services.ctx.clock.now();
    let devices = services.ctx.store.device_authorizations();
    let record = devices
        .find_device_authorization(&code.hash(), now)
        .await?
        .ok_or(DeviceDenial::BadForm)?;
    let decision = if approved {
        DeviceDecision::Approved {
            user_id: session.principal_id,
            auth_time: session.authenticated_at,
            sid: Some(session.sid.clone()),
            amr: session.amr.clone(),
        }
    } else {
        DeviceDecision::Denied
    };
    let decided = devices
        .decide_device_authorization(
            &record.device_code_hash,
            &decision,
            now - DEVICE_CODE_TTL_SECONDS,
        )
        .await?;
    if !decided {
        // Decided in another tab, or expired meanwhile.
        return Err(DeviceDenial::BadForm.into());
    }
    if approved {
        sessions::remember_client(
            services,
            &session.principal_id,
            &session.sid,
            record.client_id,
        )
        .await?;
    }
    Ok(DeviceStep::Done { approved })
}

fn consent_id(session: &SignInSession, code: &UserCode) -> String {
    format!("{}\0{}", session.sid, code.hash().to_hex())
}

fn consent(
    keys: &PageKeys,
    session: &SignInSession,
    code: &UserCode,
    record: &DeviceAuthorization,
    client: &Client,
    session_cookie: Option<String>,
) -> DeviceStep {
    DeviceStep::Consent {
        csrf_token: form_token(keys, CONSENT_FORM, &consent_id(session, code)),
        user_code: code.display(),
        app_name: client.name.clone(),
        scopes: record.scopes.iter().map(str::to_owned).collect(),
        self_registered: client.is_self_registered(),
        session_cookie,
    }
}

fn enter_code(
    services: &Services,
    keys: &PageKeys,
    nonce: Option<&str>,
    user_code: String,
    error: Option<&'static str>,
) -> DeviceStep {
    let (csrf_token, new_nonce) =
        nonce_form_token(keys, CODE_FORM, nonce, services.ctx.random.as_ref());
    DeviceStep::EnterCode {
        csrf_token,
        new_nonce,
        user_code,
        error,
    }
}

fn sign_in_form(
    keys: &PageKeys,
    nonce: &str,
    code: &UserCode,
    client: &Client,
    login: String,
    error: Option<&'static str>,
) -> DeviceStep {
    DeviceStep::SignIn {
        csrf_token: form_token(keys, CODE_FORM, nonce),
        new_nonce: None,
        user_code: code.display(),
        app_name: client.name.clone(),
        login,
        error,
        idp_choices: Vec::new(),
    }
}
