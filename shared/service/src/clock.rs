//! Time as an injected dependency, so expiry is tested by moving a clock rather than sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch. Every stored expiry (`expires_at`) uses this unit, because it is
/// what DynamoDB's TTL expects.
pub type UnixTime = i64;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> UnixTime;
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
