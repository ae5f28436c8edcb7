//! The account page (docs/decisions.md, "Sign-in sessions"), free of HTTP: a signed-in user
//! sees their sign-in sessions and the applications they hold tokens for or approved, signs out
//! one session or every one, and disconnects an application (its families revoked as `DELETE
//! /app-mgmt/v0/connections` does, its consent forgotten). Without a session it is a sign-in
//! form first, with the sign-in page's checks and limits.
//!
//! CSRF: the signed-in forms carry an HMAC of the session id; the sign-in form one of a random
//! nonce the browser holds in a cookie of this path only. Every action is audited.

mod fresh;
mod page;
pub mod passkeys;
mod sign_in;

use std::net::IpAddr;

use sign_in::{sign_in, sign_in_form};

use crate::audit;
use crate::domain::audit::{AuditKind, RevocationReason, SessionEndReason};
use crate::domain::{ClientId, PrincipalType, Scopes, SessionId, SignInSession};
use crate::flows::second_factor::{self, CodeCheck, Confirmation, EnrolmentBinding};
use crate::flows::sessions;
use crate::flows::sign_in::{form_token, verify_form_token, PageKeys};
use crate::issuance::FamilyOwner;
use crate::services::Services;

pub use fresh::{FRESH_SIGN_IN_SECONDS, SIGN_IN_AGAIN};
pub(crate) use page::ACCOUNT_FORM;
use page::SIGN_IN_FORM;
pub use page::{
    AccountCookies, AccountDenial, AccountError, AccountForm, AccountStep, ConnectedApp,
    ListedSession, Overview, ACCOUNT_PATH, SIGN_IN_NONCE_COOKIE, SIGN_IN_NONCE_TTL_SECONDS,
};

/// `GET`: the overview for a signed-in browser, else the sign-in form.
pub async fn show(
    services: &Services,
    keys: &PageKeys,
    cookies: AccountCookies<'_>,
) -> Result<AccountStep, AccountError> {
    match sessions::current(services, cookies.session).await? {
        Some(session) => Ok(AccountStep::Overview(
            overview(services, keys, &session).await?,
        )),
        None => Ok(sign_in_form(services, keys, None, String::new(), None)),
    }
}

/// `GET ?upstream=…`: the sign-in this browser started here, back from the company's identity
/// provider. Without the page's nonce cookie (another browser, or too late): the sign-in form.
pub async fn resume_upstream(
    services: &Services,
    keys: &PageKeys,
    cookies: AccountCookies<'_>,
    carried: &str,
) -> Result<AccountStep, AccountError> {
    let Some(nonce) = cookies.sign_in_nonce.filter(|nonce| !nonce.is_empty()) else {
        return Ok(sign_in_form(services, keys, None, String::new(), None));
    };
    let signing_in = sign_in::SigningIn {
        nonce,
        session_cookie: cookies.session,
    };
    sign_in::resume_upstream(services, keys, signing_in, carried).await
}

/// `POST`: the sign-in form, or one of the signed-in actions.
pub async fn act(
    services: &Services,
    keys: &PageKeys,
    cookies: AccountCookies<'_>,
    form: &AccountForm,
    source: Option<IpAddr>,
) -> Result<AccountStep, AccountError> {
    let csrf = form.csrf_token.as_deref().unwrap_or_default();
    let Some(action) = form.action.as_deref() else {
        return Err(AccountDenial::BadForm.into());
    };
    if matches!(
        action,
        "sign_in" | "sign_in_code" | "sign_in_totp_confirm" | "sign_in_enrolled"
    ) {
        let nonce = cookies.sign_in_nonce.unwrap_or_default();
        if nonce.is_empty() || !verify_form_token(keys, SIGN_IN_FORM, nonce, csrf) {
            return Err(AccountDenial::BadForm.into());
        }
        let signing_in = sign_in::SigningIn {
            nonce,
            session_cookie: cookies.session,
        };
        return sign_in(services, keys, signing_in, action, form, source).await;
    }
    let Some(session) = sessions::current(services, cookies.session).await? else {
        // Signed out meanwhile: the sign-in form again.
        return Ok(sign_in_form(services, keys, None, String::new(), None));
    };
    if !verify_form_token(keys, ACCOUNT_FORM, session.sid.as_str(), csrf) {
        return Err(AccountDenial::BadForm.into());
    }
    let user = session.principal_id;
    if fresh::changes_factors(action) && !fresh::may_change_factors(services, &session).await? {
        return fresh::sign_in_again(services, keys, &session).await;
    }
    match action {
        "reauthenticate" => fresh::sign_in_again(services, keys, &session).await,
        "sign_out" => {
            let sid = form
                .sid
                .as_deref()
                .and_then(SessionId::parse)
                .ok_or(AccountDenial::BadForm)?;
            sessions::end(services, &user, &sid, SessionEndReason::SignedOut).await?;
            Ok(if sid == session.sid {
                signed_out(services, &session).await?
            } else {
                AccountStep::Reload {
                    session_cookie: None,
                }
            })
        }
        "sign_out_everywhere" => {
            let reason = SessionEndReason::SignedOutEverywhere;
            sessions::end_all(services, &user, reason).await?;
            signed_out(services, &session).await
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
            match self::passkeys::act(services, &session, action, form).await? {
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

/// The browser's own session ended: the signed-out page, after the company's IdP's own sign-out
/// when one started the session.
async fn signed_out(
    services: &Services,
    session: &SignInSession,
) -> Result<AccountStep, AccountError> {
    Ok(
        match crate::flows::upstream_logout::via_idp(services, session, None).await? {
            Some(location) => AccountStep::SignedOutVia { location },
            None => AccountStep::SignedOut,
        },
    )
}

/// The authenticator-app forms: start an enrolment, confirm it with a first code, remove it
/// with a current code or a recovery code.
async fn authenticator(
    services: &Services,
    keys: &PageKeys,
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
            CodeCheck::Wrong | CodeCheck::Locked | CodeCheck::TooManyCodes => {
                Err(AccountDenial::WrongCode.into())
            }
        },
    }
}

async fn overview(
    services: &Services,
    keys: &PageKeys,
    current: &SignInSession,
) -> Result<Overview, AccountError> {
    let user = current.principal_id;
    let now = services.ctx.clock.now();
    let store = &services.ctx.store;
    let mut sessions = store
        .sessions()
        .list_sessions(&user, now)
        .await?
        .into_iter()
        .map(|session| ListedSession {
            current: session.sid == current.sid,
            session,
            started_with: None,
        })
        .collect::<Vec<_>>();
    // How each was started: the IdP's name, read once per IdP.
    let mut names = std::collections::BTreeMap::new();
    for listed in &mut sessions {
        let Some(idp) = listed
            .session
            .upstream
            .as_ref()
            .map(|upstream| upstream.idp)
        else {
            continue;
        };
        if let std::collections::btree_map::Entry::Vacant(entry) = names.entry(idp) {
            let found = store.federation().get_identity_provider(&idp).await?;
            entry.insert(found.map(|idp| idp.name));
        }
        listed.started_with.clone_from(&names[&idp]);
    }
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
        passkeys: crate::flows::passkeys::list(services, &user).await?,
        error: None,
        factors_unlocked: fresh::may_change_factors(services, current).await?,
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
