//! The pace of device polls (RFC 8628 §3.5), kept in this instance's memory so that a well-paced
//! pending poll writes nothing (docs/decisions.md, "Device authorization grant").
//!
//! The store keeps only what a `slow_down` grew: the interval (a floor every instance applies)
//! and that poll's time. Between two `slow_down`s the last poll's time lives here, per warm
//! instance: a device whose polls land on different instances is held to the interval only
//! where it polled before, and to the stored floor everywhere.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::clock::UnixTime;
use crate::domain::DEVICE_SLOW_DOWN_SECONDS;
use crate::secrets::TokenHash;

/// How many device codes one instance keeps the pace of. An entry is about 80 bytes, so the
/// bound is under a megabyte; past it the entry polled longest ago goes first (its device is
/// then held to the stored floor only, as on a fresh instance).
pub const DEVICE_PACES_KEPT: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Pace {
    last_polled_at: UnixTime,
    interval: UnixTime,
    /// When the code expires: the entry is useless after.
    forget_at: UnixTime,
}

/// Whether a poll came in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paced {
    InTime,
    /// Sooner than the interval after the last poll: answered `slow_down`, and `interval` (grown
    /// by 5 s) holds from this poll on.
    TooFast {
        interval: UnixTime,
    },
}

/// The last poll of each live device code this instance answered, bounded in size. Owned by
/// the service ([`crate::services::Services`]); times come from its clock.
#[derive(Debug)]
pub struct DevicePacer {
    paces: Mutex<HashMap<TokenHash, Pace>>,
    capacity: usize,
}

impl Default for DevicePacer {
    fn default() -> Self {
        Self::with_capacity(DEVICE_PACES_KEPT)
    }
}

/// What the store says of a code's pace: the time of its last recorded `slow_down` and the
/// interval it left.
#[derive(Debug, Clone, Copy)]
pub struct StoredPace {
    pub last_slow_down: Option<UnixTime>,
    pub interval: UnixTime,
    /// When the code expires.
    pub valid_until: UnixTime,
}

impl DevicePacer {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            paces: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Records a poll of the code `hash` at `now` and says whether it came in time: after the
    /// interval (the larger of the stored one and this instance's) from the later of the last
    /// poll seen here and the stored `slow_down`. Check and record are one step, so of two
    /// polls racing on this instance the second is the fast one.
    pub fn poll(&self, hash: &TokenHash, now: UnixTime, stored: StoredPace) -> Paced {
        let mut paces = self.paces.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = paces.get(hash).copied();
        let last = seen.map(|p| p.last_polled_at).max(stored.last_slow_down);
        let interval = seen.map_or(stored.interval, |p| p.interval.max(stored.interval));
        let paced = if last.is_some_and(|last| now < last + interval) {
            Paced::TooFast {
                interval: interval + DEVICE_SLOW_DOWN_SECONDS,
            }
        } else {
            Paced::InTime
        };
        let interval = match paced {
            Paced::TooFast { interval } => interval,
            Paced::InTime => interval,
        };
        if seen.is_none() && paces.len() >= self.capacity {
            make_room(&mut paces, now, self.capacity);
        }
        paces.insert(
            hash.clone(),
            Pace {
                last_polled_at: now,
                interval,
                forget_at: stored.valid_until,
            },
        );
        paced
    }

    /// How many codes' paces are kept.
    pub fn len(&self) -> usize {
        self.paces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Drops the expired codes' entries, then, if still full, the one polled longest ago.
fn make_room(paces: &mut HashMap<TokenHash, Pace>, now: UnixTime, capacity: usize) {
    paces.retain(|_, pace| pace.forget_at > now);
    if paces.len() >= capacity {
        let oldest = paces
            .iter()
            .min_by_key(|(_, pace)| pace.last_polled_at)
            .map(|(hash, _)| hash.clone());
        if let Some(oldest) = oldest {
            paces.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUED: UnixTime = 1_000;

    fn fresh() -> StoredPace {
        StoredPace {
            last_slow_down: None,
            interval: 5,
            valid_until: ISSUED + 600,
        }
    }

    #[test]
    fn polls_within_the_interval_grow_it_by_5_seconds_each() {
        let pacer = DevicePacer::default();
        let code = TokenHash::of("device code");
        assert_eq!(pacer.poll(&code, ISSUED, fresh()), Paced::InTime);
        assert_eq!(pacer.poll(&code, ISSUED + 5, fresh()), Paced::InTime);
        assert_eq!(
            pacer.poll(&code, ISSUED + 7, fresh()),
            Paced::TooFast { interval: 10 }
        );
        assert_eq!(
            pacer.poll(&code, ISSUED + 16, fresh()),
            Paced::TooFast { interval: 15 }
        );
        assert_eq!(pacer.poll(&code, ISSUED + 31, fresh()), Paced::InTime);
        assert_eq!(
            pacer.poll(&code, ISSUED + 45, fresh()),
            Paced::TooFast { interval: 20 },
            "the grown interval stays"
        );
    }

    #[test]
    fn the_stored_slow_down_and_interval_hold_on_an_instance_that_never_saw_the_code() {
        let pacer = DevicePacer::default();
        let code = TokenHash::of("device code");
        let stored = StoredPace {
            last_slow_down: Some(ISSUED + 10),
            interval: 15,
            valid_until: ISSUED + 600,
        };
        assert_eq!(
            pacer.poll(&code, ISSUED + 24, stored),
            Paced::TooFast { interval: 20 }
        );
        let other = TokenHash::of("another device code");
        assert_eq!(pacer.poll(&other, ISSUED + 25, stored), Paced::InTime);
        assert_eq!(
            pacer.poll(&other, ISSUED + 39, stored),
            Paced::TooFast { interval: 20 },
            "the stored interval is the floor"
        );
    }

    #[test]
    fn the_bound_drops_expired_codes_then_the_one_polled_longest_ago() {
        let pacer = DevicePacer::with_capacity(2);
        let (a, b, c) = (TokenHash::of("a"), TokenHash::of("b"), TokenHash::of("c"));
        let expiring = StoredPace {
            valid_until: ISSUED + 10,
            ..fresh()
        };
        pacer.poll(&a, ISSUED, expiring);
        pacer.poll(&b, ISSUED + 19, fresh());
        pacer.poll(&c, ISSUED + 20, fresh());
        assert_eq!(pacer.len(), 2);
        assert_eq!(
            pacer.poll(&b, ISSUED + 22, fresh()),
            Paced::TooFast { interval: 10 },
            "b was kept"
        );
        pacer.poll(&a, ISSUED + 23, fresh());
        assert_eq!(pacer.len(), 2);
        assert_eq!(
            pacer.poll(&c, ISSUED + 24, fresh()),
            Paced::InTime,
            "c, polled longest ago, made room for a"
        );
    }
}
