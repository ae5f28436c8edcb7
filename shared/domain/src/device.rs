//! The device authorization grant (RFC 8628): a device that cannot show a browser gets a
//! `device_code` to poll with and a short `user_code` the user types on another device's page.
//!
//! Both codes are stored only as SHA-256 digests. The device code carries 256 random bits; the
//! user code only ~34.6 (8 letters of 20), which is why wrong user codes are counted against the
//! source address and a code lives ten minutes.

use serde::{Deserialize, Serialize};

use crate::amr::AuthMethod;
use crate::clock::UnixTime;
use crate::ids::{ClientId, PrincipalId};
use crate::random::RandomSource;
use crate::resource::Resource;
use crate::scopes::Scopes;
use crate::secrets::TokenHash;
use crate::session::SessionId;

/// `expires_in` of the device authorization response.
pub const DEVICE_CODE_TTL_SECONDS: UnixTime = 600;

/// `interval` of the device authorization response: the least time between two polls.
pub const DEVICE_POLL_INTERVAL_SECONDS: UnixTime = 5;

/// How much each `slow_down` adds to the interval (RFC 8628 §3.5).
pub const DEVICE_SLOW_DOWN_SECONDS: UnixTime = 5;

/// How long a device authorization is kept after its codes expire, so that a late poll reads
/// "expired" (173) or "already used" (174) rather than "unknown": the record's TTL is
/// `issued_at` + [`DEVICE_CODE_TTL_SECONDS`] + this.
pub const DEVICE_CODE_RETENTION_SECONDS: UnixTime = 86_400;

/// The user code's alphabet (RFC 8628 §6.1): consonants only, so that no word is spelled and no
/// letter is mistaken for a digit.
pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";

/// Letters in a user code.
pub const USER_CODE_LENGTH: usize = 8;

/// A user code in its canonical form: 8 upper-case letters of [`USER_CODE_ALPHABET`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCode(String);

impl UserCode {
    /// A fresh code. Each letter takes one random byte below 240 (a multiple of 20), so every
    /// letter is equally likely.
    pub fn generate(random: &dyn RandomSource) -> Self {
        let mut code = String::with_capacity(USER_CODE_LENGTH);
        while code.len() < USER_CODE_LENGTH {
            let mut byte = [0u8; 1];
            random.fill(&mut byte);
            if byte[0] < 240 {
                code.push(char::from(USER_CODE_ALPHABET[usize::from(byte[0] % 20)]));
            }
        }
        Self(code)
    }

    /// What a user typed: case does not matter, and a dash, spaces and other separators are
    /// ignored. `None` unless exactly 8 letters of the alphabet remain.
    pub fn parse(typed: &str) -> Option<Self> {
        let code: String = typed
            .chars()
            .filter(|c| !matches!(c, '-' | ' ' | '\t'))
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let valid =
            code.len() == USER_CODE_LENGTH && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b));
        valid.then_some(Self(code))
    }

    /// The form shown to the user: `XXXX-XXXX`.
    pub fn display(&self) -> String {
        format!("{}-{}", &self.0[..4], &self.0[4..])
    }

    /// The stored digest, of the canonical form.
    pub fn hash(&self) -> TokenHash {
        TokenHash::of(&self.0)
    }
}

/// Where a device authorization stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceStatus {
    /// Waiting for the user.
    Pending,
    /// The user approved; the next poll redeems it.
    Approved,
    /// The user denied.
    Denied,
    /// A poll redeemed it for tokens.
    Redeemed,
}

impl DeviceStatus {
    /// The stored value, which conditional writes compare.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Redeemed => "redeemed",
        }
    }
}

/// The user's decision on the page, with who approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceDecision {
    Approved {
        user_id: PrincipalId,
        /// When the user signed in: the ID token's `auth_time`.
        auth_time: UnixTime,
        /// The sign-in session the user approved in: the ID token's `sid`.
        sid: Option<SessionId>,
        /// How the user signed in (RFC 8176): the ID token's `amr`.
        amr: Vec<AuthMethod>,
    },
    Denied,
}

/// The stored side of one device authorization request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceAuthorization {
    /// The device code's digest, the record's key.
    pub device_code_hash: TokenHash,
    /// The user code's digest (of its canonical form), its second key.
    pub user_code_hash: TokenHash,
    pub client_id: ClientId,
    pub scopes: Scopes,
    pub issued_at: UnixTime,
    /// The record's TTL: [`DEVICE_CODE_RETENTION_SECONDS`] after the codes expire
    /// ([`Self::valid_until`]).
    pub expires_at: UnixTime,
    /// The least seconds between polls; grows with each `slow_down`. Every instance holds the
    /// device to it.
    pub interval: UnixTime,
    /// The last poll answered `slow_down`. Other polls are not written: their pace is kept in
    /// the memory of the instance that answered them (docs/decisions.md, "Device
    /// authorization grant").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_polled_at: Option<UnixTime>,
    pub status: DeviceStatus,
    /// Who approved (set with [`DeviceStatus::Approved`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<PrincipalId>,
    /// When the approving user signed in: the ID token's `auth_time`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// The sign-in session the user approved in: the ID token's `sid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// How the user signed in then (RFC 8176): the ID token's `amr`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// The resources (RFC 8707) the device authorization request named: the family's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

/// What a poll of a known device code answers, before any write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PollVerdict {
    /// Expired (173): the validity ended and nothing was redeemed.
    Expired,
    /// Already redeemed (174).
    Redeemed,
    /// Polled sooner than the interval after the last poll (171): the interval grows.
    TooFast,
    /// Still waiting for the user (170).
    Pending,
    /// The user denied (172).
    Denied,
    /// Approved: the poll may redeem it.
    Approved,
}

impl DeviceAuthorization {
    /// The poll's answer at `now`, from the stored record alone. Pace is checked for pending
    /// codes only: `slow_down` is "a variant of `authorization_pending`" (RFC 8628 §3.5), so a
    /// decided code is answered at once, however soon the device polled.
    pub fn poll(&self, now: UnixTime) -> PollVerdict {
        if self.status == DeviceStatus::Redeemed {
            return PollVerdict::Redeemed;
        }
        if now >= self.valid_until() {
            return PollVerdict::Expired;
        }
        match self.status {
            DeviceStatus::Pending
                if self
                    .last_polled_at
                    .is_some_and(|last| now < last + self.interval) =>
            {
                PollVerdict::TooFast
            }
            DeviceStatus::Pending => PollVerdict::Pending,
            DeviceStatus::Denied => PollVerdict::Denied,
            DeviceStatus::Approved => PollVerdict::Approved,
            DeviceStatus::Redeemed => PollVerdict::Redeemed,
        }
    }

    /// Pending and unexpired at `now`: the page may still approve or deny it.
    pub fn awaits_user(&self, now: UnixTime) -> bool {
        self.status == DeviceStatus::Pending && now < self.valid_until()
    }

    /// When the codes expire (`expires_in` after issue).
    pub fn valid_until(&self) -> UnixTime {
        self.issued_at + DEVICE_CODE_TTL_SECONDS
    }

    /// The record's TTL for codes issued at `issued_at`.
    pub fn retained_until(issued_at: UnixTime) -> UnixTime {
        issued_at + DEVICE_CODE_TTL_SECONDS + DEVICE_CODE_RETENTION_SECONDS
    }
}

#[cfg(test)]
mod tests;
