//! One-time passwords (docs/decisions.md, "One-time passwords"): the records and what the flow
//! ([`crate::flows::otp`]) needs from storage. Both backends implement [`OtpStore`]; the rules of
//! [`crate::store`] apply (expiry checked on read against `now`, conditional writes that lose are
//! outcomes, not errors).

use std::fmt;

use async_trait::async_trait;
use uuid::Uuid;

use crate::clock::UnixTime;
use crate::domain::{AddressKey, ClientId, OtpHash};
use crate::secrets::TokenHash;
use crate::StoreResult;

/// How far back the request cap looks ([`OtpStore::count_otp_requests`]): backends keep a record
/// countable for this long after its creation, consumed or not.
pub const REQUEST_WINDOW_SECONDS: i64 = 15 * 60;

/// One one-time-password record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OtpId(pub Uuid);

impl fmt::Display for OtpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// Only this digest of the facts ([`crate::flows::otp::OtpFacts`]) is stored: equality is all
/// verification needs, and the store then keeps no names in the clear.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FactsHash(pub TokenHash);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtpRecord {
    pub id: OtpId,
    pub address: AddressKey,
    /// The client that requested it; only that client may redeem it.
    pub client_id: ClientId,
    pub password: OtpHash,
    pub facts: FactsHash,
    pub created_at: UnixTime,
    /// `created_at` + 600; also the TTL attribute.
    pub expires_at: UnixTime,
    /// Tries still allowed; 0 closes the record.
    pub tries_left: u32,
    /// Set once the record has been redeemed; it is closed from then on.
    pub consumed: bool,
}

impl OtpRecord {
    /// Redeemable: not consumed, tries left, not expired.
    pub fn is_open(&self, now: UnixTime) -> bool {
        !self.consumed && self.tries_left > 0 && now < self.expires_at
    }
}

/// The one-time passwords aggregate (docs/decisions.md, "One-time passwords"); one of
/// [`crate::Store`]'s parts.
#[async_trait]
pub trait OtpStore: Send + Sync {
    /// Stores a new record (its id is fresh; the write need not be conditional).
    async fn create_otp(&self, record: &OtpRecord) -> StoreResult<()>;

    /// Records of `client` for `address` created at or after `since` that were not consumed,
    /// whatever their state otherwise: expired and tried-out ones count too, or an attacker could
    /// close a record with five guesses and ask for the next without limit (the cap, code 82).
    /// Another client's requests never count: one client must not use up another's cap.
    async fn count_otp_requests(
        &self,
        address: &AddressKey,
        client: &ClientId,
        since: UnixTime,
    ) -> StoreResult<u32>;

    /// The newest record of `client` for `address` (greatest `created_at`, ties broken by
    /// anything stable) if that record is open at `now` ([`OtpRecord::is_open`]); `None`
    /// otherwise. Only the client's newest counts: its new request supersedes its earlier ones,
    /// and another client's request hides none of them.
    async fn find_open_otp(
        &self,
        address: &AddressKey,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>>;

    /// Atomically, if the record is open at `now`: decrement `tries_left` and return the tries
    /// left after this one (`Some(0)` means this try was the last). `None` if it was not open
    /// (consumed, tried out or expired in the meantime). The try is spent before the password
    /// is compared, so parallel guesses can never exceed five (as the lockout of part 11).
    /// `record` is as [`OtpStore::find_open_otp`] returned it: backends find the stored record by
    /// its id, address and creation time.
    async fn spend_otp_try(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<Option<u32>>;

    /// Atomically marks the record consumed if it is not yet consumed and `now < expires_at`
    /// (`tries_left` may be 0: the last try may be the right one). `false` if another request
    /// consumed it first or it expired: a password redeems once.
    async fn consume_otp(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<bool>;
}
