//! Sign-in sessions (single sign-on) and remembered consent.
//!
//! A session starts when a user signs in on one of the pages and lives in the browser as an
//! opaque cookie, `<principal>.<sid>.<secret>`. The principal and the session id (`sid`, which ID
//! and logout tokens carry) locate the record; the whole value's SHA-256 is all the store keeps,
//! so a copy of the table opens no session. The principal in the cookie is the `sub` the user's
//! applications already see, and it lets the account page list a user's sessions with one query.
//!
//! A session ends at whichever comes first: [`SessionLimits::idle_seconds`] after it was last
//! seen, or [`SessionLimits::max_seconds`] after the sign-in. "Last seen" is written at most once
//! per [`SessionLimits::last_seen_resolution`] (a tenth of the idle limit, at most
//! [`LAST_SEEN_RESOLUTION_SECONDS`]), so a busy user costs no write per page.

use serde::{Deserialize, Serialize};

use crate::amr::AuthMethod;
use crate::clock::UnixTime;
use crate::federation::SealedSecret;
use crate::ids::{ClientId, IdpId, PrincipalId};
use crate::random::{RandomExt, RandomSource};
use crate::resource::Resource;
use crate::scopes::Scopes;
use crate::secrets::TokenHash;

/// The most the stored last-seen time may lag before a request writes it again.
pub const LAST_SEEN_RESOLUTION_SECONDS: UnixTime = 60;

/// The longest user agent kept for the account page's "browser" column.
pub const MAX_USER_AGENT_CHARS: usize = 256;

/// `SESSION_IDLE_SECONDS` and `SESSION_MAX_SECONDS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub idle_seconds: UnixTime,
    pub max_seconds: UnixTime,
}

impl SessionLimits {
    pub const DEFAULT: Self = Self {
        idle_seconds: 28_800,
        max_seconds: 86_400,
    };

    /// How stale the stored last-seen time may be before a request writes it again: a tenth of
    /// the idle limit, from 1 s to [`LAST_SEEN_RESOLUTION_SECONDS`]. Scaled so that a session in
    /// steady use never idles out between two writes, even under a short idle limit.
    pub fn last_seen_resolution(self) -> UnixTime {
        (self.idle_seconds / 10).clamp(1, LAST_SEEN_RESOLUTION_SECONDS)
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A session's public identifier, the `sid` claim: 22 base64url characters (128 bits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    const LENGTH: usize = 22;

    pub fn parse(text: &str) -> Option<Self> {
        let valid = text.len() == Self::LENGTH
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        valid.then(|| Self(text.to_owned()))
    }

    fn random(random: &dyn RandomSource) -> Self {
        Self(random.opaque_token()[..Self::LENGTH].to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("not a session id"))
    }
}

/// One browser's sign-in. Holds no secret: the cookie's hash only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInSession {
    /// The public session id: the `sid` of ID tokens and logout tokens.
    pub sid: SessionId,
    pub principal_id: PrincipalId,
    /// SHA-256 of the whole cookie value.
    pub cookie_hash: TokenHash,
    /// When the user last proved who they are (the password): `auth_time`.
    pub authenticated_at: UnixTime,
    /// How they proved it then (RFC 8176): the ID token's `amr`. Empty in sessions stored
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    pub started_at: UnixTime,
    pub last_seen: UnixTime,
    /// When it ends unless seen again: the store's TTL.
    pub expires_at: UnixTime,
    /// The absolute limit, from the first sign-in; re-authenticating does not move it.
    pub ends_by: UnixTime,
    /// The browser, as it described itself (truncated), for the account page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The address the sign-in came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The clients that were given an authorization in this session: they are told when it
    /// ends (back-channel logout).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientId>,
    /// The company identity provider the user signed in through, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamSession>,
}

/// A session started by a company identity provider: which one, and what its logout needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamSession {
    pub idp: IdpId,
    /// The IdP's ID token (sealed), sent back as `id_token_hint` when the session ends there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<SealedSecret>,
}

/// A new session and the cookie value that opens it (shown once, to the browser).
#[derive(Debug)]
pub struct StartedSession {
    pub session: SignInSession,
    pub cookie: String,
}

/// Where the request came from, for the account page.
#[derive(Debug, Clone, Default)]
pub struct SessionOrigin {
    pub user_agent: Option<String>,
    pub source: Option<String>,
}

impl SignInSession {
    /// A session for `principal`, signed in at `now` with the methods `amr` (RFC 8176; e.g.
    /// [`AuthMethod::PASSWORD`], [`AuthMethod::PASSWORD_AND_CODE`], or a passkey's
    /// `[AuthMethod::Hwk or AuthMethod::Swk, AuthMethod::Mfa]`), which its ID tokens carry.
    pub fn start(
        principal_id: PrincipalId,
        amr: &[AuthMethod],
        origin: SessionOrigin,
        limits: SessionLimits,
        random: &dyn RandomSource,
        now: UnixTime,
    ) -> StartedSession {
        let sid = SessionId::random(random);
        let cookie = cookie_value(&principal_id, &sid, &random.opaque_token());
        let ends_by = now + limits.max_seconds;
        let session = Self {
            sid,
            principal_id,
            cookie_hash: TokenHash::of(&cookie),
            authenticated_at: now,
            amr: amr.to_vec(),
            started_at: now,
            last_seen: now,
            expires_at: (now + limits.idle_seconds).min(ends_by),
            ends_by,
            user_agent: origin.user_agent.map(|agent| truncate(&agent)),
            source: origin.source,
            clients: Vec::new(),
            upstream: None,
        };
        StartedSession { session, cookie }
    }

    /// The same session after the user signed in again (`prompt=login`, `max_age`): a new cookie
    /// (the old one no longer opens it), a new `auth_time` and the methods `amr` of this sign-in;
    /// the absolute limit stays.
    pub fn reauthenticated(
        &self,
        amr: &[AuthMethod],
        limits: SessionLimits,
        random: &dyn RandomSource,
        now: UnixTime,
    ) -> StartedSession {
        let cookie = cookie_value(&self.principal_id, &self.sid, &random.opaque_token());
        let session = Self {
            cookie_hash: TokenHash::of(&cookie),
            authenticated_at: now,
            amr: amr.to_vec(),
            last_seen: now,
            expires_at: (now + limits.idle_seconds).min(self.ends_by),
            ..self.clone()
        };
        StartedSession { session, cookie }
    }

    pub fn is_live(&self, now: UnixTime) -> bool {
        self.expires_at > now
    }

    /// Whether `cookie` is this session's (constant time).
    pub fn opened_by(&self, cookie: &str) -> bool {
        self.cookie_hash.verify(cookie)
    }

    /// When the stored last-seen time is stale enough to write: the new expiry, else `None`.
    pub fn touch(&self, limits: SessionLimits, now: UnixTime) -> Option<UnixTime> {
        (now - self.last_seen >= limits.last_seen_resolution())
            .then(|| (now + limits.idle_seconds).min(self.ends_by))
    }

    /// Seconds since the user last signed in with a credential.
    pub fn age(&self, now: UnixTime) -> UnixTime {
        now - self.authenticated_at
    }
}

/// A cookie value, split into the parts that locate its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionCookie<'a> {
    pub principal_id: PrincipalId,
    pub sid: SessionId,
    pub value: &'a str,
}

impl<'a> SessionCookie<'a> {
    /// `None` for anything that is not of our form: such a cookie opens nothing.
    pub fn parse(value: &'a str) -> Option<Self> {
        let mut parts = value.split('.');
        let (principal, sid, secret) = (parts.next()?, parts.next()?, parts.next()?);
        let url_safe = secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if parts.next().is_some() || secret.len() != 43 || !url_safe {
            return None;
        }
        Some(Self {
            principal_id: PrincipalId::parse(principal).ok()?,
            sid: SessionId::parse(sid)?,
            value,
        })
    }
}

fn cookie_value(principal: &PrincipalId, sid: &SessionId, secret: &str) -> String {
    format!("{principal}.{sid}.{secret}")
}

fn truncate(text: &str) -> String {
    text.chars().take(MAX_USER_AGENT_CHARS).collect()
}

/// What a user approved on the consent page for one client, remembered until they disconnect
/// the app: a later request for these scopes (or fewer) skips the consent page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consent {
    pub principal_id: PrincipalId,
    pub client_id: ClientId,
    pub scopes: Scopes,
    pub granted_at: UnixTime,
    /// The resources (RFC 8707) the user approved the app's access to, as the consent page
    /// named them. Consents remembered before resources were remembered read none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

impl Consent {
    /// Whether a request for `scopes` at `resources` asks for nothing the user has not
    /// approved: every scope and every resource among the approved ones.
    pub fn covers(&self, scopes: &Scopes, resources: &[Resource]) -> bool {
        scopes.is_subset_of(&self.scopes)
            && resources
                .iter()
                .all(|resource| self.resources.contains(resource))
    }

    /// This consent widened by a new approval: the scopes and resources of both.
    pub fn widened(&self, scopes: &Scopes, resources: &[Resource], now: UnixTime) -> Self {
        let mut widened = self.resources.clone();
        for resource in resources {
            if !widened.contains(resource) {
                widened.push(resource.clone());
            }
        }
        Self {
            scopes: self.scopes.union(scopes),
            granted_at: now,
            resources: widened,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn last_seen_is_written_often_enough_for_the_idle_limit() {
        use super::{SessionLimits, LAST_SEEN_RESOLUTION_SECONDS};
        let limits = |idle_seconds| SessionLimits {
            idle_seconds,
            max_seconds: 86_400,
        };
        assert_eq!(
            SessionLimits::DEFAULT.last_seen_resolution(),
            LAST_SEEN_RESOLUTION_SECONDS
        );
        assert_eq!(limits(300).last_seen_resolution(), 30);
        assert_eq!(limits(30).last_seen_resolution(), 3);
        assert_eq!(limits(5).last_seen_resolution(), 1);
    }

    use super::*;
    use crate::random::OsRandom;

    fn principal() -> PrincipalId {
        PrincipalId::new(OsRandom.uuid())
    }

    #[test]
    fn the_cookie_opens_its_session_and_only_its_hash_is_kept() {
        let user = principal();
        let started = SignInSession::start(
            user,
            AuthMethod::PASSWORD,
            SessionOrigin::default(),
            SessionLimits::DEFAULT,
            &OsRandom,
            1_000,
        );
        let parsed = SessionCookie::parse(&started.cookie).expect("our own form");
        assert_eq!(parsed.principal_id, user);
        assert_eq!(parsed.sid, started.session.sid);
        assert!(started.session.opened_by(&started.cookie));
        assert!(!started.session.opened_by(&format!("{}x", started.cookie)));
        let stored = serde_json::to_string(&started.session).unwrap();
        let secret = started.cookie.rsplit('.').next().unwrap();
        assert!(!stored.contains(secret));
    }

    #[test]
    fn foreign_cookies_are_not_parsed() {
        let user = principal();
        for value in [
            String::new(),
            "a.b.c".into(),
            format!("{user}.{}.{}", "s".repeat(22), "x".repeat(42)),
            format!("{user}.{}.{}.x", "s".repeat(22), "x".repeat(43)),
            format!("{user}.{}.{}", "s".repeat(21) + "=", "x".repeat(43)),
        ] {
            assert_eq!(SessionCookie::parse(&value), None, "{value}");
        }
        let good = format!("{user}.{}.{}", "s".repeat(22), "x".repeat(43));
        assert!(SessionCookie::parse(&good).is_some());
    }

    #[test]
    fn expiry_is_the_earlier_of_idle_and_absolute_limits() {
        let limits = SessionLimits {
            idle_seconds: 100,
            max_seconds: 250,
        };
        let started = SignInSession::start(
            principal(),
            AuthMethod::PASSWORD,
            SessionOrigin::default(),
            limits,
            &OsRandom,
            0,
        );
        let session = started.session;
        assert_eq!(session.expires_at, 100);
        // A tenth of the 100 s idle limit: seen within 10 s writes nothing, later extends it (it
        // was written at most once a minute, so steady use idled out).
        assert_eq!(session.touch(limits, 5), None, "seen within 10 s");
        assert_eq!(session.touch(limits, 30), Some(130));
        assert_eq!(session.touch(limits, 90), Some(190));
        let late = SignInSession {
            last_seen: 130,
            ..session.clone()
        };
        assert_eq!(
            late.touch(limits, 200),
            Some(250),
            "capped by the absolute limit"
        );
        let again = session.reauthenticated(AuthMethod::PASSWORD_AND_CODE, limits, &OsRandom, 200);
        assert_eq!(again.session.amr, AuthMethod::PASSWORD_AND_CODE);
        assert_eq!(again.session.sid, session.sid);
        assert_eq!(again.session.authenticated_at, 200);
        assert_eq!(again.session.expires_at, 250);
        assert!(
            !again.session.opened_by(&started.cookie),
            "the old cookie is spent"
        );
        assert!(again.session.opened_by(&again.cookie));
    }

    #[test]
    fn consent_covers_what_was_approved() {
        let consent = Consent {
            principal_id: principal(),
            client_id: ClientId::new(OsRandom.uuid()),
            scopes: Scopes::parse("openid profile").unwrap(),
            granted_at: 0,
            resources: Vec::new(),
        };
        let scopes = |text| Scopes::parse(text).unwrap();
        let resource = |text| Resource::parse(text).unwrap();
        let (mcp, other) = (
            resource("https://mcp.example.com/mcp"),
            resource("https://other.example.com/"),
        );
        assert!(consent.covers(&scopes("openid"), &[]));
        assert!(consent.covers(&Scopes::empty(), &[]));
        assert!(!consent.covers(&scopes("openid email"), &[]));
        assert!(
            !consent.covers(&scopes("openid"), std::slice::from_ref(&mcp)),
            "a resource never approved"
        );
        let wider = consent.widened(&scopes("email"), std::slice::from_ref(&mcp), 5);
        assert!(wider.covers(&scopes("openid email profile"), std::slice::from_ref(&mcp)));
        assert!(wider.covers(&scopes("openid"), &[]));
        assert!(!wider.covers(&scopes("openid"), &[mcp.clone(), other.clone()]));
        let widest = wider.widened(&scopes("openid"), &[other.clone(), mcp.clone()], 6);
        assert_eq!(widest.resources, [mcp, other], "each resource once");
    }
}
