//! The key ring's states and times, and the rules that move keys between them. Pure: no store,
//! no key material beyond what is published, no clock but the `now` passed in.
//!
//! A key is `next` (published in the JWK Set, not signing), then `active` (the one key that
//! signs), then `retired` (published, not signing), then removed. The waits between the steps
//! come from how long others may hold an old view of the ring:
//! - a relying party caches the JWK Set for up to [`JWKS_MAX_AGE_SECONDS`] (the
//!   `Cache-Control: max-age` of the JWKS responses);
//! - a function instance uses the ring it read for up to [`RING_MAX_STALENESS_SECONDS`] before
//!   it must have read it again (it refreshes every [`RING_REFRESH_SECONDS`]);
//! - a token lives [`TOKEN_LIFETIME_SECONDS`] (access and ID tokens alike).
//!
//! So a key may start signing only once every JWK Set any instance served in the last
//! `max-age` contained it, and it stays published until every token any instance may still
//! have signed with it has expired. Both waits carry [`MARGIN_SECONDS`] for clock skew.

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;

pub const JWKS_MAX_AGE_SECONDS: i64 = 300;
pub const RING_REFRESH_SECONDS: i64 = 60;
pub const RING_MAX_STALENESS_SECONDS: i64 = 120;
pub const TOKEN_LIFETIME_SECONDS: i64 = 3600;
pub const MARGIN_SECONDS: i64 = 300;

/// How long a key stays `next` at least before it may become `active`.
pub const MIN_NEXT_SECONDS: i64 =
    RING_MAX_STALENESS_SECONDS + JWKS_MAX_AGE_SECONDS + MARGIN_SECONDS;
/// How long a key stays published at least once it is `retired`.
pub const RETIRED_KEPT_SECONDS: i64 =
    RING_MAX_STALENESS_SECONDS + TOKEN_LIFETIME_SECONDS + MARGIN_SECONDS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyState {
    Next,
    Active,
    Retired,
}

/// Where a key's private half is.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum PrivateKey {
    /// A PKCS#8 document sealed with a key derived from the server secret (`seal.rs`).
    Sealed { sealed: String },
    /// An AWS KMS key (`ECC_NIST_P256`, `SIGN_VERIFY`); the private half never leaves KMS.
    Kms { key_arn: String },
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sealed { .. } => f.write_str("Sealed(<redacted>)"),
            Self::Kms { key_arn } => f.debug_tuple("Kms").field(key_arn).finish(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingKey {
    /// RFC 7638 thumbprint of the public key.
    pub kid: String,
    pub state: KeyState,
    pub created: UnixTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activated: Option<UnixTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retired: Option<UnixTime>,
    /// The public point's coordinates, base64url, as in the JWK.
    pub x: String,
    pub y: String,
    pub private: PrivateKey,
}

/// The ring as stored: every published key, in the order they were created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingDocument {
    pub keys: Vec<RingKey>,
}

/// What [`RingDocument::plan`] found the ring needs at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No `next` key: one is added (nothing is promoted; it will be, a rotation later).
    AddNext,
    /// The `next` key has been published long enough: it becomes `active`, the active key
    /// `retired`, and a new `next` key is added.
    Promote,
    /// The `next` key is too recent to sign: until `eligible_at`, a rotation changes nothing
    /// (this is what makes a second rotation run at the same time a no-op).
    NotDue {
        next_kid: String,
        eligible_at: UnixTime,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    #[error(
        "the signing key ring has no active key (it holds {0} keys); run `tokenctl keys rotate` \
         to give it one"
    )]
    NoActiveKey(usize),
    #[error("the signing key ring has {0} active keys; exactly one must sign")]
    SeveralActiveKeys(usize),
}

impl RingDocument {
    pub fn active(&self) -> Result<&RingKey, RingError> {
        let mut active = self.keys.iter().filter(|k| k.state == KeyState::Active);
        match (active.next(), active.count()) {
            (Some(key), 0) => Ok(key),
            (Some(_), more) => Err(RingError::SeveralActiveKeys(more + 1)),
            (None, _) => Err(RingError::NoActiveKey(self.keys.len())),
        }
    }

    pub fn next_key(&self) -> Option<&RingKey> {
        self.keys.iter().find(|k| k.state == KeyState::Next)
    }

    pub fn plan(&self, now: UnixTime) -> Plan {
        match self.next_key() {
            None => Plan::AddNext,
            Some(next) if now >= next.created + MIN_NEXT_SECONDS => Plan::Promote,
            Some(next) => Plan::NotDue {
                next_kid: next.kid.clone(),
                eligible_at: next.created + MIN_NEXT_SECONDS,
            },
        }
    }

    /// Applies [`Self::plan`] with `new_next` (a fresh key in state `next`, created `now`),
    /// after removing the retired keys whose tokens have all expired. Returns the plan applied;
    /// on [`Plan::NotDue`] nothing changes and `new_next` is unused.
    pub fn rotate(&mut self, now: UnixTime, new_next: RingKey) -> Plan {
        let plan = self.plan(now);
        if matches!(plan, Plan::NotDue { .. }) {
            return plan;
        }
        self.remove_expired(now);
        if plan == Plan::Promote {
            for key in &mut self.keys {
                match key.state {
                    KeyState::Active => {
                        key.state = KeyState::Retired;
                        key.retired = Some(now);
                    }
                    KeyState::Next => {
                        key.state = KeyState::Active;
                        key.activated = Some(now);
                    }
                    KeyState::Retired => {}
                }
            }
        }
        debug_assert_eq!(new_next.state, KeyState::Next);
        self.keys.push(new_next);
        plan
    }

    /// Removes, and returns, the retired keys that no unexpired token can name any more.
    pub fn remove_expired(&mut self, now: UnixTime) -> Vec<RingKey> {
        let (gone, kept) = std::mem::take(&mut self.keys)
            .into_iter()
            .partition(|k| removable(k, now));
        self.keys = kept;
        gone
    }

    /// The keys a JWK Set published at `now` carries: all but the retired keys past their time.
    pub fn published(&self, now: UnixTime) -> impl Iterator<Item = &RingKey> {
        self.keys.iter().filter(move |k| !removable(k, now))
    }
}

fn removable(key: &RingKey, now: UnixTime) -> bool {
    key.state == KeyState::Retired
        && key
            .retired
            .is_some_and(|retired| now >= retired + RETIRED_KEPT_SECONDS)
}
