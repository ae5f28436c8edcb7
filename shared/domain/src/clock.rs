//! Time as an injected dependency, so expiry is tested by moving a clock rather than sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch. Every stored expiry (`expires_at`) uses this unit, because it is
/// what DynamoDB's TTL expects.
pub type UnixTime = i64;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> UnixTime;

    /// Milliseconds since the epoch, for identifiers ordered by time (an access token's `jti`).
    /// By default `now()` in milliseconds, which is all a test clock needs.
    fn now_millis(&self) -> u64 {
        u64::try_from(self.now()).unwrap_or_default() * 1000
    }
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixTime {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as UnixTime)
            .unwrap_or_default()
    }

    fn now_millis(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or_default()
    }
}

/// A clock that only moves when told to. Used by tests and by nothing in production.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: UnixTime) -> Self {
        Self(AtomicI64::new(start))
    }

    /// Starts at the real current time, so items written with it carry realistic TTLs.
    pub fn starting_now() -> Self {
        Self::new(SystemClock.now())
    }

    pub fn advance(&self, seconds: i64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn set(&self, to: UnixTime) {
        self.0.store(to, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> UnixTime {
        self.0.load(Ordering::SeqCst)
    }
}
