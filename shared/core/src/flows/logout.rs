//! OpenID Connect RP-Initiated Logout 1.0, independent of HTTP: the relying party sends the
//! browser here with the ID token it holds (`id_token_hint`); the families that user holds with
//! that client are revoked, and the browser goes back to a registered
//! `post_logout_redirect_uri` (with `state`) or sees a signed-out page.
//!
//! Signing out ends the browser's sign-in session (its cookie) when it is the hinted user's or
//! no hint names anyone, and the session the hint's `sid` names; each ended session's clients
//! are told by back-channel logout. It also revokes the hint's client's token families: those
//! started at or before the hint was issued, since a hint speaks for the sign-ins it has seen,
//! not for later ones. A hint older than [`HINT_MAX_AGE_SECONDS`] is refused (§2 lets the
//! provider decline a hint that stands for no recent session): an ID token travels in query
//! strings and browser histories, and must not stay a sign-out switch for good. An address that
//! is not registered for the client is never redirected to.
//!
//! Without a valid hint (none, one that does not verify, one too old) nothing ends at once: a
//! browser with a session is shown a confirmation page, and only its form, posted with a CSRF
//! token bound to that session, signs the browser out. A cross-site link or image therefore signs
//! nobody out, and neither does a cross-site form (it cannot know the token).

use serde::Deserialize;
use url::Url;

use crate::clock::UnixTime;
use crate::domain::audit::{RevocationReason, SessionEndReason};
use crate::domain::{ClientId, SignInSession};
use crate::errors::{Denial, Refusal};
use crate::flows::sign_in::{form_token, page_keys, verify_form_token};
use crate::flows::{sessions, upstream_logout};
use crate::issuance::FamilyOwner;
use crate::jwt::HintedPrincipal;
use crate::services::Services;

/// How long after its issue an ID token is still accepted as a logout hint: the longest a
/// sign-in session may last (`SESSION_MAX_SECONDS`' default), so a hint of any session that could
/// still be open is honoured, long after the token's own hour.
pub const HINT_MAX_AGE_SECONDS: UnixTime = 86_400;

/// The query (GET) or form (POST) parameters of `/oauth2/v0/logout`, as sent.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LogoutParams {
    pub id_token_hint: Option<String>,
    pub client_id: Option<String>,
    pub post_logout_redirect_uri: Option<String>,
    pub state: Option<String>,
    /// The confirmation form's token: only a `POST` of that form carries it.
    pub csrf_token: Option<String>,
}

/// How the parameters came: only a form post may confirm a sign-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogoutMethod {
    Get,
    Post,
}

/// What the confirmation page's form posts back, the hint left out (it did not verify).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutConfirmation {
    pub client_id: Option<String>,
    pub post_logout_redirect_uri: Option<String>,
    pub state: Option<String>,
    pub csrf_token: String,
}

/// Where the browser goes next, and whether its session cookie is to be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutAnswer {
    pub outcome: LogoutOutcome,
    pub clear_session_cookie: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogoutOutcome {
    /// `302` to the registered address, with `state` when one was sent.
    Redirect(String),
    /// The signed-out page.
    SignedOut,
    /// The page that asks the user to confirm: nothing has ended yet.
    Confirm(LogoutConfirmation),
}

/// The label of the confirmation form's CSRF token (an HMAC of the session id).
const CONFIRM_FORM: &[u8] = b"logout-confirm";

/// Why nothing was done: an HTML page with status 400, never a redirect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LogoutDenial {
    /// The hint names another client than `client_id`, or the form is unreadable.
    #[error("The sign-out request could not be accepted.")]
    BadRequest,
    #[error("The application that sent you here is not known.")]
    UnknownClient,
    #[error("The address to return to is not registered for this application.")]
    RedirectNotRegistered,
}

impl Denial for LogoutDenial {}

pub type LogoutError = Refusal<LogoutDenial>;

pub async fn logout(
    services: &Services,
    params: &LogoutParams,
    session_cookie: Option<&str>,
    method: LogoutMethod,
) -> Result<LogoutAnswer, LogoutError> {
    let verified = match non_empty(&params.id_token_hint) {
        Some(hint) => services.codec.verify_id_token_hint(hint).await?.ok(),
        None => None,
    };
    // A hint too old to end anything still says, signed, which client sent the browser.
    let client_id = client_of(params, verified.as_ref())?;
    let hinted = verified.filter(|hinted| is_recent(hinted, services.ctx.clock.now()));
    let redirect = match non_empty(&params.post_logout_redirect_uri) {
        Some(uri) => Some(registered_address(services, client_id, uri).await?),
        None => None,
    };
    let ended = match &hinted {
        Some(hinted) => {
            let ended = end_sessions(services, Some(hinted), session_cookie).await?;
            end_connection(services, hinted).await?;
            ended
        }
        None => match confirmed(services, params, session_cookie, method).await? {
            Confirmed::Yes => end_sessions(services, None, session_cookie).await?,
            Confirmed::NothingToEnd => None,
            Confirmed::Ask(confirmation) => {
                return Ok(LogoutAnswer {
                    outcome: LogoutOutcome::Confirm(confirmation),
                    clear_session_cookie: false,
                })
            }
        },
    };
    let then = redirect.map(|uri| with_state(uri, non_empty(&params.state)));
    // A session a company's IdP started ends there too, then where it was to end.
    let upstream = match &ended {
        Some(session) => upstream_logout::via_idp(services, session, then.clone()).await?,
        None => None,
    };
    let outcome = match (upstream, then) {
        (Some(idp), _) => LogoutOutcome::Redirect(idp),
        (None, Some(uri)) => LogoutOutcome::Redirect(uri),
        (None, None) => LogoutOutcome::SignedOut,
    };
    Ok(LogoutAnswer {
        outcome,
        clear_session_cookie: ended.is_some(),
    })
}

enum Confirmed {
    /// The confirmation form, posted with its token for the browser's session.
    Yes,
    /// The browser has no session: there is nothing to confirm.
    NothingToEnd,
    Ask(LogoutConfirmation),
}

/// Without a hint, whether the browser's user confirmed the sign-out on our own page.
async fn confirmed(
    services: &Services,
    params: &LogoutParams,
    session_cookie: Option<&str>,
    method: LogoutMethod,
) -> Result<Confirmed, LogoutError> {
    let Some(session) = sessions::current(services, session_cookie).await? else {
        return Ok(Confirmed::NothingToEnd);
    };
    let keys = page_keys(services).await?;
    let sid = session.sid.as_str();
    let submitted = non_empty(&params.csrf_token);
    if method == LogoutMethod::Post
        && submitted.is_some_and(|token| verify_form_token(&keys, CONFIRM_FORM, sid, token))
    {
        return Ok(Confirmed::Yes);
    }
    Ok(Confirmed::Ask(LogoutConfirmation {
        client_id: params.client_id.clone(),
        post_logout_redirect_uri: params.post_logout_redirect_uri.clone(),
        state: params.state.clone(),
        csrf_token: form_token(&keys, CONFIRM_FORM, sid),
    }))
}

/// Ends the browser's session unless the hint names another user, and the hint's own session.
/// Answers the session the browser's cookie opened, if it ended.
async fn end_sessions(
    services: &Services,
    hinted: Option<&HintedPrincipal>,
    session_cookie: Option<&str>,
) -> Result<Option<SignInSession>, LogoutError> {
    let browser = sessions::current(services, session_cookie)
        .await?
        .filter(|session| hinted.is_none_or(|hinted| hinted.principal == session.principal_id));
    if let Some(session) = &browser {
        let reason = SessionEndReason::Logout;
        sessions::end(services, &session.principal_id, &session.sid, reason).await?;
    }
    let hinted_session = hinted.and_then(|hinted| Some((hinted.principal, hinted.sid.clone()?)));
    if let Some((principal, sid)) = hinted_session {
        if browser.as_ref().is_none_or(|session| session.sid != sid) {
            sessions::end(services, &principal, &sid, SessionEndReason::Logout).await?;
        }
    }
    Ok(browser)
}

fn is_recent(hinted: &HintedPrincipal, now: UnixTime) -> bool {
    now.saturating_sub(hinted.issued_at) <= HINT_MAX_AGE_SECONDS
}

/// The client named by `client_id` and by the hint's audience, which must agree.
fn client_of(
    params: &LogoutParams,
    hinted: Option<&HintedPrincipal>,
) -> Result<Option<ClientId>, LogoutDenial> {
    let named = match non_empty(&params.client_id) {
        Some(text) => Some(ClientId::from_wire(text).map_err(|_| LogoutDenial::UnknownClient)?),
        None => None,
    };
    match (named, hinted.map(|h| h.client_id)) {
        (Some(named), Some(audience)) if named != audience => Err(LogoutDenial::BadRequest),
        (named, audience) => Ok(named.or(audience)),
    }
}

/// `uri` if the client registered it with `--post-logout-redirect-uri` (exact match).
async fn registered_address<'a>(
    services: &Services,
    client_id: Option<ClientId>,
    uri: &'a str,
) -> Result<&'a str, LogoutError> {
    // Without a client there is no registration to match against.
    let client_id = client_id.ok_or(LogoutDenial::RedirectNotRegistered)?;
    let client = services
        .registered_client(&client_id, || {
            LogoutError::from(LogoutDenial::UnknownClient)
        })
        .await?;
    if client.post_logout_redirect_uris.iter().any(|r| r == uri) {
        Ok(uri)
    } else {
        Err(LogoutDenial::RedirectNotRegistered.into())
    }
}

/// Revokes the families the hinted user (or company) started with the hint's client before the
/// hint was issued.
async fn end_connection(services: &Services, hinted: &HintedPrincipal) -> Result<(), LogoutError> {
    let owner = FamilyOwner {
        client_id: hinted.client_id,
        principal_type: hinted.principal_type,
        principal_id: hinted.principal,
    };
    services
        .issuer()
        .revoke_connection_for(owner, hinted.issued_at, RevocationReason::Logout)
        .await?;
    tracing::info!(client_id = %hinted.client_id, "RP-initiated logout: connection revoked");
    Ok(())
}

fn with_state(uri: &str, state: Option<&str>) -> String {
    let Some(state) = state else {
        return uri.to_owned();
    };
    match Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().append_pair("state", state);
            url.to_string()
        }
        // Registered URIs are validated at registration.
        Err(_) => uri.to_owned(),
    }
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::PrincipalId;

    #[test]
    fn state_is_appended_to_the_registered_query() {
        assert_eq!(
            with_state("https://app.example/out?keep=1", Some("a b")),
            "https://app.example/out?keep=1&state=a+b"
        );
        assert_eq!(
            with_state("https://app.example/out", None),
            "https://app.example/out"
        );
    }

    #[test]
    fn a_hint_is_recent_up_to_its_maximum_age() {
        let hinted = HintedPrincipal {
            principal: PrincipalId::parse("8f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap(),
            principal_type: crate::domain::PrincipalType::User,
            client_id: ClientId::parse("6f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap(),
            issued_at: 1_700_000_000,
            sid: None,
        };
        assert!(is_recent(&hinted, hinted.issued_at));
        assert!(is_recent(&hinted, hinted.issued_at + HINT_MAX_AGE_SECONDS));
        assert!(!is_recent(
            &hinted,
            hinted.issued_at + HINT_MAX_AGE_SECONDS + 1
        ));
    }

    #[test]
    fn client_id_and_hint_must_agree() {
        let id = ClientId::parse("6f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap();
        let other = ClientId::parse("7f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap();
        let hinted = HintedPrincipal {
            principal: PrincipalId::parse("8f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap(),
            principal_type: crate::domain::PrincipalType::User,
            client_id: id,
            issued_at: 1_700_000_000,
            sid: None,
        };
        let params = |client: Option<&ClientId>| LogoutParams {
            client_id: client.map(ToString::to_string),
            ..LogoutParams::default()
        };
        assert_eq!(client_of(&params(None), Some(&hinted)), Ok(Some(id)));
        assert_eq!(client_of(&params(Some(&id)), Some(&hinted)), Ok(Some(id)));
        assert_eq!(
            client_of(&params(Some(&other)), Some(&hinted)),
            Err(LogoutDenial::BadRequest)
        );
        assert_eq!(client_of(&params(Some(&other)), None), Ok(Some(other)));
        assert_eq!(client_of(&params(None), None), Ok(None));
    }
}
