//! Sign-in sessions (docs/decisions.md, "Sign-in sessions"), free of HTTP: the cookie that
//! carries one, finding the live session a request's cookie opens, starting one at a sign-in,
//! signing in again within one, and ending them (which tells the clients that were given an
//! authorization in them, by back-channel logout).
//!
//! The cookie is `__Host-session`: `Secure`, `Path=/` and no `Domain`, so no other host or path
//! can set or shadow it; `HttpOnly`; `SameSite=Lax`, so a cross-site POST never carries it (a
//! top-level GET to the authorize endpoint does, which single sign-on needs). Browsers treat
//! loopback addresses as secure, so the local server over plain HTTP keeps the same name.
//!
//! Its value is opaque: `<principal>.<sid>.<secret>` (what locates the session, and what its
//! stored hash is of) sealed with a key of the deployment's own, so whoever reads a cookie (a
//! log, a proxy, a shared machine) learns nobody's id, and opening it costs no read. A cookie
//! of the plain form, set before sealing, still opens its session until that session ends (at
//! most `SESSION_MAX_SECONDS`): its secret is checked against the hash as before.

use crate::audit;
use crate::auth::principal::user_status_denial;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditKind, RequestFacts, SessionEndReason};
use crate::domain::{
    AuthMethod, ClientId, IdpId, PrincipalId, PrincipalType, SealedSecret, SessionCookie,
    SessionId, SessionOrigin, SignInSession, StartedSession, UpstreamSession,
};
use crate::errors::ServerError;
use crate::services::Services;
use crate::signing::seal::Sealer;
use crate::store::StoreError;

mod backchannel;

pub use backchannel::announce_session_end;

pub const SESSION_COOKIE_NAME: &str = "__Host-session";

/// The key ring's derivation purpose for the session cookie's sealer: a key of its own.
const COOKIE_KEY_PURPOSE: &str = "session-cookie-v1";
/// The sealed value's associated data: a value sealed for anything else opens no session.
const COOKIE_SEAL_CONTEXT: &str = SESSION_COOKIE_NAME;

async fn cookie_sealer(services: &Services) -> Result<Sealer, ServerError> {
    let key = services.codec.keys().derive_key(COOKIE_KEY_PURPOSE).await?;
    Ok(Sealer::new(key))
}

/// The plain value inside a cookie: opened, or (set before sealing) as it came.
fn plain_value(sealer: &Sealer, cookie: &str) -> Option<String> {
    match sealer.open(COOKIE_SEAL_CONTEXT, cookie) {
        Some(plain) => String::from_utf8(plain).ok(),
        None => SessionCookie::parse(cookie).map(|_| cookie.to_owned()),
    }
}

/// The session's record of the IdP that started it: its ID token sealed under the cookie key,
/// bound to the IdP, for the `id_token_hint` of the IdP's logout.
pub async fn upstream_session(
    services: &Services,
    idp: IdpId,
    id_token: &str,
) -> Result<UpstreamSession, ServerError> {
    let sealer = cookie_sealer(services).await?;
    let sealed = sealer.seal(
        &format!("upstream-id-token\0{idp}"),
        id_token.as_bytes(),
        services.ctx.random.as_ref(),
    );
    Ok(UpstreamSession {
        idp,
        id_token: Some(SealedSecret::new(sealed)),
    })
}

/// The IdP's ID token a session started by it keeps, opened.
pub async fn upstream_id_token(
    services: &Services,
    upstream: &UpstreamSession,
) -> Result<Option<String>, ServerError> {
    let Some(sealed) = &upstream.id_token else {
        return Ok(None);
    };
    let sealer = cookie_sealer(services).await?;
    let context = format!("upstream-id-token\0{}", upstream.idp);
    Ok(sealer
        .open(&context, sealed.as_str())
        .and_then(|bytes| String::from_utf8(bytes).ok()))
}

/// The plain value inside a browser's cookie, the one its session's stored hash is of: for
/// tools and tests that match a cookie to its record. `None`: no cookie of ours.
pub async fn plain_cookie(
    services: &Services,
    cookie: &str,
) -> Result<Option<String>, ServerError> {
    Ok(plain_value(&cookie_sealer(services).await?, cookie))
}

/// `started` with its cookie sealed, as the browser gets it.
fn sealed(services: &Services, sealer: &Sealer, started: StartedSession) -> StartedSession {
    let random = services.ctx.random.as_ref();
    StartedSession {
        cookie: sealer.seal(COOKIE_SEAL_CONTEXT, started.cookie.as_bytes(), random),
        ..started
    }
}

/// The live session `cookie` opens, if any. A session is live only while its user is: every use
/// reads the user (through the read cache, so within its few seconds of a change made by
/// another process) and a disabled, logon-denied or deleted user's session answers as ended,
/// however the status changed. Its last-seen time is written when stale (at most once a
/// minute); a failure of that write is logged, not answered: the user is still signed in.
pub async fn current(
    services: &Services,
    cookie: Option<&str>,
) -> Result<Option<SignInSession>, ServerError> {
    let Some(cookie) = cookie.filter(|cookie| !cookie.is_empty()) else {
        return Ok(None);
    };
    let Some(plain) = plain_value(&cookie_sealer(services).await?, cookie) else {
        return Ok(None);
    };
    let Some(parsed) = SessionCookie::parse(&plain) else {
        return Ok(None);
    };
    let now = services.ctx.clock.now();
    let Some(mut session) = services
        .ctx
        .store
        .sessions()
        .get_session(&parsed.principal_id, &parsed.sid, now)
        .await?
        .filter(|session| session.opened_by(parsed.value))
    else {
        return Ok(None);
    };
    let user = services
        .ctx
        .store
        .principals()
        .get_user(&session.principal_id)
        .await?;
    if user.is_none_or(|user| user_status_denial(&user).is_some()) {
        return Ok(None);
    }
    if let Some(expires_at) = session.touch(services.policy.sessions, now) {
        let touched = services
            .ctx
            .store
            .sessions()
            .touch_session(&session.principal_id, &session.sid, now, expires_at)
            .await;
        match touched {
            Ok(_) => {
                session.last_seen = now;
                session.expires_at = expires_at;
            }
            Err(error) => tracing::warn!(%error, "a session's last-seen time was not written"),
        }
    }
    Ok(Some(session))
}

/// Starts a session for `user`, who just signed in with the methods `amr` (RFC 8176), from the
/// request being served (its browser and address, for the account page).
pub async fn start(
    services: &Services,
    user: PrincipalId,
    amr: &[AuthMethod],
) -> Result<StartedSession, ServerError> {
    start_with(services, user, amr, None, None).await
}

/// [`start`] for a sign-in through a company's identity provider (`upstream`), which says when
/// the user authenticated there (`auth_time`, never later than now).
pub async fn start_with(
    services: &Services,
    user: PrincipalId,
    amr: &[AuthMethod],
    upstream: Option<UpstreamSession>,
    auth_time: Option<UnixTime>,
) -> Result<StartedSession, ServerError> {
    let sealer = cookie_sealer(services).await?;
    let facts = RequestFacts::current();
    let origin = SessionOrigin {
        user_agent: facts.user_agent.map(|agent| agent.as_str().to_owned()),
        source: facts.source_address.map(|address| address.to_string()),
    };
    let now = services.ctx.clock.now();
    let mut started = SignInSession::start(
        user,
        amr,
        origin,
        services.policy.sessions,
        services.ctx.random.as_ref(),
        now,
    );
    if let Some(at) = auth_time.filter(|at| *at <= now) {
        started.session.authenticated_at = at;
    }
    started.session.upstream = upstream;
    services
        .ctx
        .store
        .sessions()
        .put_session(&started.session)
        .await?;
    let sid = started.session.sid.clone();
    let event = audit::event(&services.ctx, AuditKind::SessionStarted { sid });
    audit::record(&services.ctx, event.principal(PrincipalType::User, user)).await;
    Ok(sealed(services, &sealer, started))
}

/// The user signed in again within `session` (`prompt=login`, `max_age`): a new cookie and
/// `auth_time`, the same `sid`. `None` if the session ended meanwhile (the caller starts one).
pub async fn reauthenticate(
    services: &Services,
    session: &SignInSession,
    amr: &[AuthMethod],
) -> Result<Option<StartedSession>, ServerError> {
    let sealer = cookie_sealer(services).await?;
    let now = services.ctx.clock.now();
    let random = services.ctx.random.as_ref();
    let again = session.reauthenticated(amr, services.policy.sessions, random, now);
    let written = services
        .ctx
        .store
        .sessions()
        .reauthenticate_session(&again.session, now)
        .await?;
    Ok(written.then(|| sealed(services, &sealer, again)))
}

/// Notes that `client` was given an authorization in the session, so that it is told when the
/// session ends. No write when it was noted before.
pub async fn remember_client(
    services: &Services,
    principal: &PrincipalId,
    sid: &SessionId,
    client: ClientId,
) -> Result<(), StoreError> {
    services
        .ctx
        .store
        .sessions()
        .add_session_client(principal, sid, &client, services.ctx.clock.now())
        .await?;
    Ok(())
}

/// Ends one session of `principal`: deleted, audited with `reason`, its clients told. `false`
/// when it had already ended (nothing is told twice).
pub async fn end(
    services: &Services,
    principal: &PrincipalId,
    sid: &SessionId,
    reason: SessionEndReason,
) -> Result<bool, ServerError> {
    let now = services.ctx.clock.now();
    let Some(ended) = services
        .ctx
        .store
        .sessions()
        .delete_session(principal, sid, now)
        .await?
    else {
        return Ok(false);
    };
    let kind = AuditKind::SessionEnded {
        sid: ended.sid.clone(),
        reason,
    };
    let event = audit::event(&services.ctx, kind).principal(PrincipalType::User, *principal);
    audit::record(&services.ctx, event).await;
    announce_session_end(services, &ended).await?;
    Ok(true)
}

/// Ends every live session of `principal`; answers how many.
pub async fn end_all(
    services: &Services,
    principal: &PrincipalId,
    reason: SessionEndReason,
) -> Result<usize, ServerError> {
    end_where(services, principal, reason, |_| true).await
}

/// Ends every live session of `principal` that the identity provider `idp` started; answers how
/// many.
pub async fn end_started_by(
    services: &Services,
    principal: &PrincipalId,
    idp: &IdpId,
    reason: SessionEndReason,
) -> Result<usize, ServerError> {
    let started_by_idp =
        |session: &SignInSession| session.upstream.as_ref().is_some_and(|up| up.idp == *idp);
    end_where(services, principal, reason, started_by_idp).await
}

async fn end_where(
    services: &Services,
    principal: &PrincipalId,
    reason: SessionEndReason,
    which: impl Fn(&SignInSession) -> bool,
) -> Result<usize, ServerError> {
    let now = services.ctx.clock.now();
    let sessions = services
        .ctx
        .store
        .sessions()
        .list_sessions(principal, now)
        .await?;
    let mut ended = 0;
    for session in sessions.iter().filter(|session| which(session)) {
        if end(services, principal, &session.sid, reason).await? {
            ended += 1;
        }
    }
    Ok(ended)
}
