//! The pending authorization between the first GET and the consent, kept in the browser as an
//! encrypted and authenticated cookie.
//!
//! Why a cookie and not the store: on Lambda each call may reach another instance, and the
//! cookie needs nothing but the shared secret to be read back anywhere; an unauthenticated GET
//! writes nothing server-side, so nobody can fill the store by opening the page in a loop; and
//! the record is only ever needed by the browser that started it. AES-256-GCM keeps its content
//! (state, nonce, PKCE challenge, who signed in) unreadable and unforgeable; the expiry inside
//! bounds a stolen cookie's use to [`PENDING_TTL_SECONDS`].

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

use super::request::ValidatedAuthorization;
use crate::clock::UnixTime;
use crate::domain::{AuthMethod, IdpId, PrincipalId, SessionId};
use crate::flows::sign_in::PageKeys as AuthorizeKeys;
use crate::random::RandomSource;
use crate::signing::seal::Sealer;

/// Time to read the page and type a password.
pub const PENDING_TTL_SECONDS: i64 = 600;

pub const PENDING_COOKIE_NAME: &str = "authorize_pending";

/// The path the cookie is sent to: only the authorize endpoint reads it.
pub const PENDING_COOKIE_PATH: &str = "/oauth2/v0/authorize";

/// Browsers keep cookies up to 4096 bytes; refusing earlier keeps a long `state` from making
/// the flow fail silently.
const MAX_COOKIE_VALUE_BYTES: usize = 3_800;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAuthorization {
    /// Random, unique per authorize request; the CSRF tokens are bound to it.
    pub id: String,
    pub request: ValidatedAuthorization,
    pub expires_at: UnixTime,
    /// Set once the sign-in form succeeded; the consent form requires it.
    pub signed_in_user: Option<PrincipalId>,
    /// When that sign-in happened: the ID token's `auth_time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_in_at: Option<UnixTime>,
    /// The user a verified `id_token_hint` named: only they may sign in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_user: Option<PrincipalId>,
    /// The sign-in session the user is signed in with (started or found), once signed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// The session already lists the client (told when it ends): issuing a code writes nothing
    /// to it. Known only when answered from a live session, never carried in the cookie.
    #[serde(skip)]
    pub session_lists_client: bool,
    /// The sign-in interaction's state between its steps (a code, an enrolment), sealed by it
    /// ([`crate::flows::sign_in`]); cleared once signed in or back at the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<String>,
    /// How the user signed in (RFC 8176), once signed in: the ID token's `amr`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// The company identity provider the user signed in through, once signed in through one:
    /// the ID token's `idp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpId>,
    /// How long the code lives when not the usual 5 minutes: 60 seconds under the FAPI 2.0
    /// profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_ttl: Option<UnixTime>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PendingCookieError {
    #[error("the pending authorization no longer fits in a cookie")]
    TooLarge,
    #[error("the pending authorization cookie is malformed or was not sealed by this service")]
    Invalid,
    #[error("the pending authorization has expired")]
    Expired,
}

impl PendingAuthorization {
    pub fn new(request: ValidatedAuthorization, random: &dyn RandomSource, now: UnixTime) -> Self {
        let mut id = [0u8; 16];
        random.fill(&mut id);
        Self {
            id: URL_SAFE_NO_PAD.encode(id),
            request,
            expires_at: now + PENDING_TTL_SECONDS,
            signed_in_user: None,
            signed_in_at: None,
            expected_user: None,
            sid: None,
            session_lists_client: false,
            sign_in: None,
            amr: Vec::new(),
            idp: None,
            code_ttl: None,
        }
    }

    /// The cookie value: base64url(nonce ‖ AES-256-GCM ciphertext), the cookie name as
    /// associated data so the value cannot be replayed under another cookie.
    pub fn seal(
        &self,
        keys: &AuthorizeKeys,
        random: &dyn RandomSource,
    ) -> Result<String, PendingCookieError> {
        let plaintext = serde_json::to_vec(self).expect("the pending record serialises");
        let value = sealer(keys).seal(PENDING_COOKIE_NAME, &plaintext, random);
        if value.len() > MAX_COOKIE_VALUE_BYTES {
            return Err(PendingCookieError::TooLarge);
        }
        Ok(value)
    }

    /// Decrypts, authenticates and checks the expiry against `now`.
    pub fn open(
        value: &str,
        keys: &AuthorizeKeys,
        now: UnixTime,
    ) -> Result<Self, PendingCookieError> {
        let plaintext = sealer(keys)
            .open(PENDING_COOKIE_NAME, value)
            .ok_or(PendingCookieError::Invalid)?;
        let pending: Self =
            serde_json::from_slice(&plaintext).map_err(|_| PendingCookieError::Invalid)?;
        if pending.expires_at <= now {
            return Err(PendingCookieError::Expired);
        }
        Ok(pending)
    }
}

fn sealer(keys: &AuthorizeKeys) -> Sealer {
    Sealer::new(keys.cookie)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    fn pending(state: &str) -> PendingAuthorization {
        let request = ValidatedAuthorization {
            state: Some(state.into()),
            nonce: Some("n-1".into()),
            ..ValidatedAuthorization::for_tests("openid read")
        };
        PendingAuthorization::new(request, &OsRandom, 1_000)
    }

    fn keys(byte: u8) -> AuthorizeKeys {
        AuthorizeKeys::derive(&[byte; 32]).unwrap()
    }

    #[test]
    fn round_trip_hides_the_content() {
        let pending = pending("visible-state");
        let sealed = pending.seal(&keys(1), &OsRandom).unwrap();
        assert!(!sealed.contains("visible"));
        let decoded = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        assert!(!String::from_utf8_lossy(&decoded).contains("visible-state"));
        assert_eq!(
            PendingAuthorization::open(&sealed, &keys(1), 1_001),
            Ok(pending)
        );
    }

    #[test]
    fn other_keys_tampering_and_expiry_are_refused() {
        let sealed = pending("s").seal(&keys(1), &OsRandom).unwrap();
        let invalid = Err(PendingCookieError::Invalid);
        assert_eq!(
            PendingAuthorization::open(&sealed, &keys(2), 1_001),
            invalid
        );
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let tampered = URL_SAFE_NO_PAD.encode(bytes);
        assert_eq!(
            PendingAuthorization::open(&tampered, &keys(1), 1_001),
            invalid
        );
        assert_eq!(PendingAuthorization::open("", &keys(1), 1_001), invalid);
        assert_eq!(
            PendingAuthorization::open(&sealed, &keys(1), 1_000 + PENDING_TTL_SECONDS),
            Err(PendingCookieError::Expired)
        );
    }

    #[test]
    fn an_oversized_state_is_refused_rather_than_dropped_by_the_browser() {
        let huge = "x".repeat(4_000);
        assert_eq!(
            pending(&huge).seal(&keys(1), &OsRandom),
            Err(PendingCookieError::TooLarge)
        );
    }
}
