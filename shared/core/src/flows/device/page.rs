//! The verification page of the device grant, free of HTTP: the user enters the code the device
//! shows, signs in (the sign-in pages' check, lockout and limits, or a passkey as on the other
//! sign-in pages) unless the browser holds a live session, sees the consent screen naming the
//! client and scopes, approves or denies, and is told to return to the device.
//!
//! The page keeps no state of its own between steps: each form carries the typed user code,
//! which is looked up again. CSRF: before sign-in the forms carry an HMAC of a random nonce the
//! browser holds in a cookie of this path only (as the account page's sign-in form); the consent
//! form one of the session id and the user code, so it is useless in another session or for
//! another code. A wrong or dead user code counts against the source address like a wrong
//! one-time password, and the address is refused for a day once the limit is reached.

use crate::flows::second_factor::{self, AfterPassword};
use std::net::IpAddr;

/// What the device page says to a user with an authenticator app.
const NEEDS_SECOND_FACTOR: &str = "Your account uses an authenticator app. Please sign in on your account page (/oauth2/v0/account) first, then come back to this page.";
/// What it says to a user whose company requires a second factor they have not set up.
const MUST_ENROL: &str = "Your company requires a second factor. Please sign in on your account page (/oauth2/v0/account) to set up an authenticator app, then come back to this page.";

use crate::auth::authenticate_user_from;
use crate::domain::DEVICE_CODE_TTL_SECONDS;
use crate::domain::{
    AuthMethod, Client, DeviceAuthorization, DeviceDecision, SignInSession, UserCode,
};
use crate::errors::{Denial, GrantError, Refusal};
use crate::flows::authorize::{
    form_token, nonce_form_token, sign_in_message, verify_form_token, AuthorizeKeys,
};
use crate::flows::passkeys::{self, PasskeySignIn};
use crate::flows::sessions;
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
    },
    /// The consent screen. `session_cookie`: set when a sign-in on this page started one.
    Consent {
        csrf_token: String,
        user_code: String,
        app_name: String,
        scopes: Vec<String>,
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

pub type DevicePageError = Refusal<DeviceDenial>;

const WRONG_CODE: &str = "That code is not valid or has expired. Check the code on your device.";

/// The fields the page's forms post. Holds a password: no `Debug`.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
pub struct DeviceForm {
    pub csrf_token: Option<String>,
    /// `code`, `sign_in`, `approve` or `deny`.
    pub action: Option<String>,
    pub user_code: Option<String>,
    pub login: Option<String>,
    pub password: Option<String>,
    /// A passkey sign-in (the page's script fills them in): the ceremony id and the browser's
    /// answer (JSON), in place of `login` and `password`.
    pub passkey_ceremony: Option<String>,
    pub passkey_answer: Option<String>,
}

/// The cookies the page reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeviceCookies<'a> {
    pub session: Option<&'a str>,
    pub nonce: Option<&'a str>,
}

/// `GET`: the code form, `user_code` pre-filled from the query.
pub fn show(services: &Services, keys: &AuthorizeKeys, user_code: Option<&str>) -> DeviceStep {
    let typed = user_code
        .map(|code| UserCode::parse(code).map_or_else(|| code.to_owned(), |c| c.display()))
        .unwrap_or_default();
    enter_code(services, keys, None, typed, None)
}

/// `POST`: one of the forms.
pub async fn act(
    services: &Services,
    keys: &AuthorizeKeys,
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
        "sign_in" => {
            sign_in(
                services,
                keys,
                nonce,
                form,
                source,
                (&code, &record, &client),
            )
            .await
        }
        _ => Err(DeviceDenial::BadForm.into()),
    }
}

/// The authorization a typed code names, if it still awaits the user, with its client. A wrong
/// or dead code is counted against the address; a blocked address is refused first.
async fn lookup(
    services: &Services,
    typed: &str,
    source: Option<IpAddr>,
) -> Result<Option<(UserCode, DeviceAuthorization, Client)>, DevicePageError> {
    let now = services.ctx.clock.now();
    let guesser = source.map(|source| format!("device#{}", source_subject(source)));
    let limiter = services.limiter();
    if let Some(guesser) = &guesser {
        limiter.check_otp_block(guesser, now).await?;
    }
    let found = match UserCode::parse(typed) {
        Some(code) => services
            .ctx
            .store
            .device_authorizations()
            .find_device_authorization(&code.hash(), now)
            .await?
            .filter(|record| record.awaits_user(now))
            .map(|record| (code, record)),
        None => None,
    };
    let client = match &found {
        Some((_, record)) => services
            .ctx
            .store
            .clients()
            .get_client(&record.client_id)
            .await?
            .filter(|client| client.enabled),
        None => None,
    };
    match (found, client) {
        (Some((code, record)), Some(client)) => Ok(Some((code, record, client))),
        _ => {
            if let Some(guesser) = &guesser {
                limiter.count_otp_failure(guesser, now).await?;
            }
            Ok(None)
        }
    }
}

async fn sign_in(
    services: &Services,
    keys: &AuthorizeKeys,
    nonce: &str,
    form: &DeviceForm,
    source: Option<IpAddr>,
    (code, record, client): (&UserCode, &DeviceAuthorization, &Client),
) -> Result<DeviceStep, DevicePageError> {
    let now = services.ctx.clock.now();
    services
        .limiter()
        .count_sign_in_attempt(source, now)
        .await?;
    let login = form.login.as_deref().unwrap_or_default();
    let (ceremony, answer) = (&form.passkey_ceremony, &form.passkey_answer);
    let started = match passkeys::sign_in(services, ceremony.as_deref(), answer.as_deref()).await? {
        Some(PasskeySignIn::Started(started)) => Ok(*started),
        Some(PasskeySignIn::Refused(message)) => Err(Some(message)),
        None => {
            let password = form.password.as_deref().unwrap_or_default();
            match authenticate_user_from(services, login, password, source).await {
                Ok(user) => match second_factor::after_password(services, &user).await? {
                    AfterPassword::SignedIn => {
                        Ok(sessions::start(services, user.id, AuthMethod::PASSWORD).await?)
                    }
                    // This page has no code or enrolment step: such a user signs in on the
                    // account page (which asks for the code, or enrols them), and this page
                    // then uses that session; or with their passkey.
                    AfterPassword::Code => Err(Some(NEEDS_SECOND_FACTOR)),
                    AfterPassword::Enrol => Err(Some(MUST_ENROL)),
                    AfterPassword::UsePasskey => Err(Some(second_factor::USE_YOUR_PASSKEY)),
                },
                Err(GrantError::Denied(denial)) => Err(Some(sign_in_message(denial.code))),
                Err(GrantError::Server(error)) => return Err(error.into()),
            }
        }
    };
    Ok(match started {
        Err(message) => sign_in_form(keys, nonce, code, client, login.to_owned(), message),
        Ok(started) => {
            let cookie = Some(started.cookie);
            consent(keys, &started.session, code, record, client, cookie)
        }
    })
}

/// The consent form's approval or denial, in the browser's live session.
async fn decide(
    services: &Services,
    keys: &AuthorizeKeys,
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
    keys: &AuthorizeKeys,
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
        session_cookie,
    }
}

fn enter_code(
    services: &Services,
    keys: &AuthorizeKeys,
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
    keys: &AuthorizeKeys,
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
    }
}

/// The `Set-Cookie` value of the pre-sign-in forms' nonce.
pub fn set_device_nonce_cookie(nonce: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{DEVICE_NONCE_COOKIE}={nonce}; Path={DEVICE_PATH}; Max-Age={DEVICE_NONCE_TTL_SECONDS}; HttpOnly; SameSite=Lax{secure}"
    )
}
