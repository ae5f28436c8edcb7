//! The account page (docs/decisions.md, "Sign-in sessions"), free of HTTP: a signed-in user
//! sees their sign-in sessions and the applications they hold tokens for or approved, signs out
//! one session or every one, and disconnects an application (its families revoked as `DELETE
//! /app-mgmt/v0/connections` does, its consent forgotten). Without a session it is a sign-in
//! form first, with the sign-in page's checks and limits.
//!
//! CSRF: the signed-in forms carry an HMAC of the session id; the sign-in form one of a random
//! nonce the browser holds in a cookie of this path only. Every action is audited.

mod sign_in;

use std::net::IpAddr;

use sign_in::{sign_in, sign_in_code, sign_in_enrol, sign_in_enrolled, sign_in_form};

use crate::audit;
use crate::domain::audit::{AuditKind, RevocationReason, SessionEndReason};
use crate::domain::{ClientId, PasskeyCredential, PrincipalType, Scopes, SessionId, SignInSession};
use crate::errors::{Denial, Refusal};
use crate::flows::authorize::{form_token, verify_form_token, AuthorizeKeys};
use crate::flows::second_factor::{self, CodeCheck, Confirmation, Enrolment, EnrolmentBinding};
use crate::flows::{passkeys, sessions};
use crate::issuance::FamilyOwner;
use crate::limits::Exceeded;
use crate::services::Services;

pub const ACCOUNT_PATH: &str = "/oauth2/v0/account";
/// The sign-in form's nonce, sent to the account page only.
pub const SIGN_IN_NONCE_COOKIE: &str = "account_sign_in";
pub const SIGN_IN_NONCE_TTL_SECONDS: i64 = 600;

const SIGN_IN_FORM: &[u8] = b"account-sign-in";
pub(crate) const ACCOUNT_FORM: &[u8] = b"account";

/// What the browser is shown or sent to next.
#[derive(Debug)]
pub enum AccountStep {
    /// The sign-in form. `new_nonce` is the nonce cookie's value to set, when it changed.
    SignIn {
        csrf_token: String,
        new_nonce: Option<String>,
        login: String,
        error: Option<&'static str>,
    },
    Overview(Overview),
    /// `303` to the account page; `session_cookie` set when a sign-in started one.
    Reload {
        session_cookie: Option<String>,
    },
    /// The browser's own session ended: the signed-out page, the cookie removed.
    SignedOut,
    /// The authenticator-app enrolment page (a new secret, or the same after a wrong code).
    TotpEnrol {
        csrf_token: String,
        enrolment: Enrolment,
        error: Option<&'static str>,
    },
    /// The enrolment is stored: its recovery codes, shown this once.
    RecoveryCodes(Vec<String>),
    /// The sign-in's second step: the code form, carrying the sealed password step.
    SecondFactor {
        csrf_token: String,
        pending: String,
        error: Option<&'static str>,
    },
    /// The sign-in of a user whose company requires a second factor and who has none: the
    /// enrolment page (action `sign_in_totp_confirm`), carrying the sealed password step.
    SignInEnrol {
        csrf_token: String,
        pending: String,
        enrolment: Enrolment,
        error: Option<&'static str>,
    },
    /// That enrolment is stored: its recovery codes, and the form (action `sign_in_enrolled`,
    /// carrying `pending`, the sealed proof of both factors) that starts the session.
    SignInRecoveryCodes {
        csrf_token: String,
        pending: String,
        codes: Vec<String>,
    },
}

/// The account page's content.
#[derive(Debug)]
pub struct Overview {
    pub csrf_token: String,
    /// Oldest first; `current` marks this browser's.
    pub sessions: Vec<ListedSession>,
    pub apps: Vec<ConnectedApp>,
    /// Whether the user has an authenticator app.
    pub totp_enrolled: bool,
    /// Oldest first.
    pub passkeys: Vec<PasskeyCredential>,
    /// Why the last passkey form was refused.
    pub error: Option<&'static str>,
}

#[derive(Debug)]
pub struct ListedSession {
    pub session: SignInSession,
    pub current: bool,
}

#[derive(Debug)]
pub struct ConnectedApp {
    pub client_id: ClientId,
    pub name: String,
    pub scopes: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccountDenial {
    #[error("The form could not be accepted. Please open your account page again.")]
    BadForm,
    #[error("Too many sign-in attempts from your network. Please wait a minute and try again.")]
    SlowDown { retry_after: i64 },
    #[error("That code was not accepted. Please open your account page and try again.")]
    WrongCode,
}

impl Denial for AccountDenial {}

impl From<Exceeded> for AccountDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self::SlowDown {
            retry_after: exceeded.retry_after,
        }
    }
}

pub type AccountError = Refusal<AccountDenial>;

/// The fields the page's forms post. Holds a password: no `Debug`.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
pub struct AccountForm {
    pub csrf_token: Option<String>,
    /// `sign_in`, `sign_out` (with `sid`), `sign_out_everywhere`, `disconnect` (with
    /// `client_id`).
    pub action: Option<String>,
    pub login: Option<String>,
    pub password: Option<String>,
    pub sid: Option<String>,
    pub client_id: Option<String>,
    /// `totp_confirm`, `totp_remove`: an authenticator-app code (or, to remove, a recovery
    /// code).
    pub code: Option<String>,
    /// `totp_confirm`: the sealed enrolment the enrolment page carries.
    pub enrolment: Option<String>,
    /// `sign_in_code`, `sign_in_totp_confirm`: the sealed password step the code and
    /// enrolment pages carry; `sign_in_enrolled`: the sealed proof of both factors.
    pub pending: Option<String>,
    /// A passkey sign-in or the `add_passkey` form: the ceremony id and the browser's answer
    /// (JSON), filled in by the page's script.
    pub passkey_ceremony: Option<String>,
    pub passkey_answer: Option<String>,
    /// `rename_passkey`, `remove_passkey`.
    pub credential_id: Option<String>,
    /// `add_passkey`, `rename_passkey`: the passkey's name.
    pub name: Option<String>,
}

/// The cookies the page reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct AccountCookies<'a> {
    pub session: Option<&'a str>,
    pub sign_in_nonce: Option<&'a str>,
}

/// `GET`: the overview for a signed-in browser, else the sign-in form.
pub async fn show(
    services: &Services,
    keys: &AuthorizeKeys,
    cookies: AccountCookies<'_>,
) -> Result<AccountStep, AccountError> {
    match sessions::current(services, cookies.session).await? {
        Some(session) => Ok(AccountStep::Overview(
            overview(services, keys, &session).await?,
        )),
        None => Ok(sign_in_form(services, keys, None, String::new(), None)),
    }
}

/// `POST`: the sign-in form, or one of the signed-in actions.
pub async fn act(
    services: &Services,
    keys: &AuthorizeKeys,
    cookies: AccountCookies<'_>,
    form: &AccountForm,
    source: Option<IpAddr>,
) -> Result<AccountStep, AccountError> {
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    let Some(action) = form.action.as_deref() else {
        return Err(AccountDenial::BadForm.into());
    };
    if action == "sign_in" {
        let nonce = cookies.sign_in_nonce.unwrap_or_default();
        if nonce.is_empty() || !verify_form_token(keys, SIGN_IN_FORM, nonce, csrf) {
            return Err(AccountDenial::BadForm.into());
        }
        return sign_in(services, keys, nonce, form, source).await;
    }
    if matches!(
        action,
        "sign_in_code" | "sign_in_totp_confirm" | "sign_in_enrolled"
    ) {
        let nonce = cookies.sign_in_nonce.unwrap_or_default();
        if nonce.is_empty() || !verify_form_token(keys, SIGN_IN_FORM, nonce, csrf) {
            return Err(AccountDenial::BadForm.into());
        }
        return match action {
            "sign_in_code" => sign_in_code(services, keys, nonce, form).await,
            "sign_in_totp_confirm" => sign_in_enrol(services, keys, nonce, form).await,
            _ => sign_in_enrolled(services, keys, nonce, form).await,
        };
    }
    let Some(session) = sessions::current(services, cookies.session).await? else {
        // Signed out meanwhile: the sign-in form again.
        return Ok(sign_in_form(services, keys, None, String::new(), None));
    };
    if !verify_form_token(keys, ACCOUNT_FORM, session.sid.as_str(), csrf) {
        return Err(AccountDenial::BadForm.into());
    }
    let user = session.principal_id;
    match action {
        "sign_out" => {
            let sid = form
                .sid
                .as_deref()
                .and_then(SessionId::parse)
                .ok_or(AccountDenial::BadForm)?;
            sessions::end(services, &user, &sid, SessionEndReason::SignedOut).await?;
            Ok(if sid == session.sid {
                AccountStep::SignedOut
            } else {
                AccountStep::Reload {
                    session_cookie: None,
                }
            })
        }
        "sign_out_everywhere" => {
            let reason = SessionEndReason::SignedOutEverywhere;
            sessions::end_all(services, &user, reason).await?;
            Ok(AccountStep::SignedOut)
        }
        "disconnect" => {
            let client = form
                .client_id
                .as_deref()
                .and_then(|id| ClientId::parse(id).ok())
                .ok_or(AccountDenial::BadForm)?;
            disconnect(services, &session, client).await?;
            Ok(AccountStep::Reload {
                session_cookie: None,
            })
        }
        "totp_start" | "totp_confirm" | "totp_remove" => {
            authenticator(services, keys, &session, action, form).await
        }
        "add_passkey" | "rename_passkey" | "remove_passkey" => {
            match passkeys::account::act(services, &session, action, form).await? {
                Ok(step) => Ok(step),
                Err(message) => {
                    let mut page = overview(services, keys, &session).await?;
                    page.error = Some(message);
                    Ok(AccountStep::Overview(page))
                }
            }
        }
        _ => Err(AccountDenial::BadForm.into()),
    }
}

/// The authenticator-app forms: start an enrolment, confirm it with a first code, remove it
/// with a current code or a recovery code.
async fn authenticator(
    services: &Services,
    keys: &AuthorizeKeys,
    session: &SignInSession,
    action: &str,
    form: &AccountForm,
) -> Result<AccountStep, AccountError> {
    let Some(user) = services
        .ctx
        .store
        .principals()
        .get_user(&session.principal_id)
        .await?
    else {
        return Err(AccountDenial::BadForm.into());
    };
    let csrf_token = form_token(keys, ACCOUNT_FORM, session.sid.as_str());
    let code = form.code.as_deref().unwrap_or_default();
    match action {
        "totp_start" => {
            if second_factor::is_enrolled(services, &user).await? {
                return Ok(AccountStep::Reload {
                    session_cookie: None,
                });
            }
            let enrolment =
                second_factor::begin_enrolment(services, EnrolmentBinding::Session(session), &user)
                    .await?;
            Ok(AccountStep::TotpEnrol {
                csrf_token,
                enrolment,
                error: None,
            })
        }
        "totp_confirm" => {
            let sealed = form.enrolment.as_deref().unwrap_or_default();
            match second_factor::confirm_enrolment(
                services,
                EnrolmentBinding::Session(session),
                &user,
                sealed,
                code,
            )
            .await?
            {
                Confirmation::Enrolled(codes) => Ok(AccountStep::RecoveryCodes(codes)),
                Confirmation::WrongCode(enrolment) => Ok(AccountStep::TotpEnrol {
                    csrf_token,
                    enrolment,
                    error: Some(
                        "That code was not right. Please type the code your app shows now.",
                    ),
                }),
                Confirmation::Stale => Ok(AccountStep::Reload {
                    session_cookie: None,
                }),
            }
        }
        _ => match second_factor::remove(services, &user, code).await? {
            CodeCheck::Totp(_) | CodeCheck::Recovery => Ok(AccountStep::Reload {
                session_cookie: None,
            }),
            CodeCheck::Wrong | CodeCheck::Locked => Err(AccountDenial::WrongCode.into()),
        },
    }
}

async fn overview(
    services: &Services,
    keys: &AuthorizeKeys,
    current: &SignInSession,
) -> Result<Overview, AccountError> {
    let user = current.principal_id;
    let now = services.ctx.clock.now();
    let store = &services.ctx.store;
    let sessions = store
        .sessions()
        .list_sessions(&user, now)
        .await?
        .into_iter()
        .map(|session| ListedSession {
            current: session.sid == current.sid,
            session,
        })
        .collect();
    // Connected: a live family (any grant: code, password, one-time password, device) or a
    // remembered consent without one; the scopes shown are those of both.
    let mut connected = std::collections::BTreeMap::<ClientId, Scopes>::new();
    for connection in store.revocation().user_connections(&user, now).await? {
        connected.insert(connection.client_id, connection.scopes);
    }
    for consent in store.consents().list_consents(&user).await? {
        let scopes = connected.entry(consent.client_id).or_default();
        *scopes = scopes.union(&consent.scopes);
    }
    let mut apps = Vec::with_capacity(connected.len());
    for (client_id, scopes) in connected {
        // A client ID metadata document's client while it is kept: its name, else its id.
        let name = services
            .known_client(&client_id)
            .await?
            .map_or_else(|| client_id.to_string(), |client| client.name);
        apps.push(ConnectedApp {
            client_id,
            name,
            scopes: scopes.iter().map(str::to_owned).collect(),
        });
    }
    let totp_enrolled = store
        .second_factors()
        .get_totp_factor(&user)
        .await?
        .is_some();
    Ok(Overview {
        csrf_token: form_token(keys, ACCOUNT_FORM, current.sid.as_str()),
        sessions,
        apps,
        totp_enrolled,
        passkeys: passkeys::list(services, &user).await?,
        error: None,
    })
}

/// Revokes every family the user holds with the client and forgets the consent, so that the
/// next authorization asks again.
async fn disconnect(
    services: &Services,
    session: &SignInSession,
    client: ClientId,
) -> Result<(), AccountError> {
    let user = session.principal_id;
    let owner = FamilyOwner {
        client_id: client,
        principal_type: PrincipalType::User,
        principal_id: user,
    };
    services
        .issuer()
        .revoke_connection_for(owner, i64::MAX, RevocationReason::AccountPage)
        .await?;
    if services
        .ctx
        .store
        .consents()
        .delete_consent(&user, &client)
        .await?
    {
        let event = audit::event(&services.ctx, AuditKind::ConsentForgotten)
            .client(client)
            .principal(PrincipalType::User, user);
        audit::record(&services.ctx, event).await;
    }
    Ok(())
}

/// The `Set-Cookie` value of the sign-in form's nonce.
pub fn set_sign_in_nonce_cookie(nonce: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{SIGN_IN_NONCE_COOKIE}={nonce}; Path={ACCOUNT_PATH}; Max-Age={SIGN_IN_NONCE_TTL_SECONDS}; HttpOnly; SameSite=Lax{secure}"
    )
}
