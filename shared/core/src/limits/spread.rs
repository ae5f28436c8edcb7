//! A busy subject's count spread over several counters, and refusals remembered until their
//! window ends (docs/decisions.md, "Abuse limits"): so that no one stored item takes more than
//! a few hundred writes a second, whether a client is busy within its limit or floods past it.
//!
//! - **Shards**: a limit of `max` hits a window is kept in [`shard_count`] counters of
//!   [`shard_limit`] hits each; each request counts on one of them, in turn, so they fill
//!   evenly. At most `max + shards - 1` requests pass a window. A refused shard is remembered and
//!   the request tries one more, so a request is refused early only when both shards it tried
//!   were full while another still had room: near the limit, by less than a shard's share.
//! - **Refusals**: a counter that refused is full until its window ends (counts only grow), so
//!   this process refuses it from memory from then on, without a write. A flood past the limit
//!   costs each process at most one write per shard and window.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crate::clock::UnixTime;
use crate::store::{Hit, RateKey, RateLimit};

/// Hits one shard is meant to hold before the count is spread over another.
pub const HITS_PER_SHARD: u32 = 100;
/// The most counters one subject's count is spread over.
pub const MAX_SHARDS: u32 = 16;
/// Counters one request may try: the first, then one more if the first was full.
const ATTEMPTS: usize = 2;
/// Remembered refusals kept before the ended ones are dropped (and, if all are live, all).
const MEMORY_CAPACITY: usize = 4096;

/// How many counters a limit of `max` hits a window is spread over.
pub fn shard_count(max: u32) -> u32 {
    max.div_ceil(HITS_PER_SHARD).clamp(1, MAX_SHARDS)
}

/// The limit each of `shards` counters enforces: its share of `rate.max`, rounded up.
pub fn shard_limit(rate: RateLimit, shards: u32) -> RateLimit {
    RateLimit {
        max: rate.max.div_ceil(shards),
        ..rate
    }
}

/// The counters of one subject's window known full, as a bit set.
#[derive(Debug, Clone, Copy)]
struct Full {
    shards: u32,
    window_end: UnixTime,
}

/// Counters this process saw refuse, until their window ends; and whose turn is next.
#[derive(Debug, Default)]
pub struct RefusalMemory {
    full: Mutex<HashMap<(String, UnixTime), Full>>,
    turn: AtomicU32,
}

impl RefusalMemory {
    fn full_shards(&self, key: &RateKey, window_start: UnixTime) -> u32 {
        self.lock()
            .get(&(key.stored(), window_start))
            .map_or(0, |full| full.shards)
    }

    fn mark_full(&self, key: &RateKey, rate: RateLimit, shard: u32, now: UnixTime) {
        let mut full = self.lock();
        if full.len() >= MEMORY_CAPACITY {
            full.retain(|_, entry| entry.window_end > now);
            if full.len() >= MEMORY_CAPACITY {
                // Forgetting is safe: the store still refuses, at one write each.
                full.clear();
            }
        }
        let entry = full
            .entry((key.stored(), rate.window_start(now)))
            .or_insert(Full {
                shards: 0,
                window_end: rate.window_end(now),
            });
        entry.shards |= 1 << shard;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, UnixTime), Full>> {
        self.full
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one hit of `key` against `rate` through `attempt` (one store write on the counter
    /// it is given, with the share that counter enforces), on the next shard not known full;
    /// refused without a write when every shard is.
    pub async fn count<E, F, Fut>(
        &self,
        key: &RateKey,
        rate: RateLimit,
        spread: bool,
        now: UnixTime,
        mut attempt: F,
    ) -> Result<Hit, E>
    where
        F: FnMut(RateKey, RateLimit) -> Fut,
        Fut: std::future::Future<Output = Result<Hit, E>>,
    {
        let shards = if spread { shard_count(rate.max) } else { 1 };
        let share = shard_limit(rate, shards);
        let window_start = rate.window_start(now);
        for _ in 0..ATTEMPTS {
            let full = self.full_shards(key, window_start);
            let open: Vec<u32> = (0..shards).filter(|s| full & (1 << s) == 0).collect();
            if open.is_empty() {
                break;
            }
            let next = self.turn.fetch_add(1, Ordering::Relaxed) as usize % open.len();
            let shard = open[next];
            match attempt(key.shard(shard), share).await? {
                counted @ Hit::Counted { .. } => return Ok(counted),
                Hit::Refused { .. } => self.mark_full(key, rate, shard, now),
            }
        }
        Ok(Hit::Refused {
            retry_after: crate::store::rate_limits::retry_after(rate.window_end(now), now),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const MINUTE: i64 = 60;

    fn rate(max: u32) -> RateLimit {
        RateLimit {
            max,
            window_seconds: MINUTE,
        }
    }

    #[test]
    fn small_limits_keep_one_counter_and_large_ones_spread_up_to_sixteen() {
        assert_eq!(shard_count(1), 1);
        assert_eq!(shard_count(100), 1);
        assert_eq!(shard_count(101), 2);
        assert_eq!(shard_count(6000), 16);
        assert_eq!(shard_count(u32::MAX), 16);
        assert_eq!(shard_limit(rate(6000), 16).max, 375);
        assert_eq!(shard_limit(rate(101), 2).max, 51);
    }

    /// A store of counters in memory, each holding `share.max` hits, that counts its writes.
    #[derive(Default)]
    struct Counters {
        hits: Mutex<HashMap<String, u32>>,
        writes: AtomicUsize,
    }

    impl Counters {
        async fn hit(&self, key: RateKey, share: RateLimit) -> Result<Hit, ()> {
            self.writes.fetch_add(1, Ordering::SeqCst);
            let mut hits = self.hits.lock().unwrap();
            let count = hits.entry(key.stored()).or_default();
            if *count >= share.max {
                return Ok(Hit::Refused { retry_after: 1 });
            }
            *count += 1;
            Ok(Hit::Counted { count: *count })
        }
    }

    async fn requests(memory: &RefusalMemory, counters: &Counters, max: u32, n: u32) -> u32 {
        let key = RateKey::new("client", "a busy client");
        let mut counted = 0;
        for _ in 0..n {
            let hit = memory
                .count(&key, rate(max), true, 120, |key, share| {
                    counters.hit(key, share)
                })
                .await
                .unwrap();
            if matches!(hit, Hit::Counted { .. }) {
                counted += 1;
            }
        }
        counted
    }

    #[tokio::test]
    async fn every_shard_fills_and_a_flood_past_the_limit_costs_one_write_per_shard() {
        let (memory, counters) = (RefusalMemory::default(), Counters::default());
        let counted = requests(&memory, &counters, 6000, 6000).await;
        assert_eq!(
            counted, 6000,
            "in turn, every shard fills before any refusal"
        );
        let per_shard = counters
            .hits
            .lock()
            .unwrap()
            .values()
            .copied()
            .collect::<Vec<_>>();
        assert_eq!(per_shard, vec![375; 16], "16 counters of 375");

        let before = counters.writes.load(Ordering::SeqCst);
        assert_eq!(requests(&memory, &counters, 6000, 5000).await, 0);
        let flood_writes = counters.writes.load(Ordering::SeqCst) - before;
        assert_eq!(flood_writes, 16, "one refused write per shard, then memory");
    }

    #[tokio::test]
    async fn a_small_limit_is_one_counter_and_its_refusal_is_remembered_for_its_window() {
        let (memory, counters) = (RefusalMemory::default(), Counters::default());
        assert_eq!(requests(&memory, &counters, 5, 100).await, 5);
        assert_eq!(
            counters.writes.load(Ordering::SeqCst),
            6,
            "5 counted, 1 refused"
        );
        // The next window starts afresh.
        let key = RateKey::new("client", "a busy client");
        let next = memory
            .count(&key, rate(5), true, 180, |key, share| {
                counters.hit(key, share)
            })
            .await
            .unwrap();
        assert_eq!(
            next,
            Hit::Refused { retry_after: 60 },
            "refused by the store"
        );
        assert_eq!(
            counters.writes.load(Ordering::SeqCst),
            7,
            "the new window is tried"
        );
    }
}
