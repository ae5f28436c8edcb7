//! Rate-limit counters: hits per subject over fixed windows, counted atomically, and blocks that
//! last until a given time.
//!
//! A counter is identified by what it counts (a short name, e.g. `client`) and a subject (a
//! client id, a source address, an e-mail address). Only a SHA-256 digest of the subject is
//! stored, so the store keeps no addresses in the clear.
//!
//! Windows are fixed: the window holding `now` starts at `now - now % window_seconds`. Each
//! window has its own counter (kept, DynamoDB TTL `expires_at`, until the window ends), and a
//! hit is one conditional increment: counted only while fewer than `max` hits were counted in
//! the window, so however many requests run in parallel, at most `max` are let through per
//! window. A fixed window is what one conditional write can enforce; a burst straddling two
//! windows can pass up to twice `max`, which the limits' values allow for.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// What is counted, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateKey {
    /// The counter's name: lower-case ASCII letters and `-` (it is part of the stored key).
    pub counter: &'static str,
    /// Digest of the subject.
    pub subject: TokenHash,
    /// Which of the subject's counters, when its count is spread over several (so that no one
    /// item takes every write of a busy subject); 0 for the only one.
    pub shard: u32,
}

impl RateKey {
    pub fn new(counter: &'static str, subject: &str) -> Self {
        debug_assert!(counter.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
        Self {
            counter,
            subject: TokenHash::of(subject),
            shard: 0,
        }
    }

    /// The same subject's counter number `shard`.
    #[must_use]
    pub fn shard(&self, shard: u32) -> Self {
        Self {
            shard,
            ..self.clone()
        }
    }

    /// The stored key: `<counter>#<hex digest>`, then `#<shard>` for a shard other than 0 (so
    /// that a subject counted on one item keeps the key it always had).
    pub fn stored(&self) -> String {
        match self.shard {
            0 => format!("{}#{}", self.counter, self.subject.to_hex()),
            shard => format!("{}#{}#{shard}", self.counter, self.subject.to_hex()),
        }
    }
}

/// At most `max` hits per window of `window_seconds`; `max` is at least 1 (a limit of 0, "off",
/// is the caller's to honour by not counting at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub max: u32,
    pub window_seconds: i64,
}

impl RateLimit {
    /// The start of the window holding `now`.
    pub fn window_start(&self, now: UnixTime) -> UnixTime {
        now - now.rem_euclid(self.window_seconds)
    }

    /// The end of the window holding `now` (exclusive): when its counter may be forgotten.
    pub fn window_end(&self, now: UnixTime) -> UnixTime {
        self.window_start(now) + self.window_seconds
    }
}

/// The answer to one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// Counted; `count` hits in this window, this one included.
    Counted { count: u32 },
    /// `max` hits were already counted in this window: not counted. The window ends
    /// `retry_after` seconds from `now` (at least 1).
    Refused { retry_after: i64 },
}

#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Counts one hit on `key` in the window of `limit` holding `now`, atomically with the
    /// check against `limit.max`.
    async fn count_hit(&self, key: &RateKey, limit: RateLimit, now: UnixTime) -> StoreResult<Hit>;

    /// Takes back one hit counted in the window of `limit` holding `at` (a request whose cost
    /// ended early). Nothing if that window's counter is gone or at zero.
    async fn refund_hit(&self, key: &RateKey, limit: RateLimit, at: UnixTime) -> StoreResult<()>;

    /// Blocks `key` until `until` (kept, TTL, until then). A block never shortens one already
    /// stored.
    async fn block_until(&self, key: &RateKey, until: UnixTime) -> StoreResult<()>;

    /// When the block of `key` ends, if it is blocked at `now`.
    async fn blocked_until(&self, key: &RateKey, now: UnixTime) -> StoreResult<Option<UnixTime>>;
}

/// The seconds a refused caller is told to wait: never 0.
pub fn retry_after(until: UnixTime, now: UnixTime) -> i64 {
    (until - now).max(1)
}
