//! A small map whose entries go stale after a deadline read from the injected clock.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};

use crate::clock::UnixTime;

/// Entries are kept until `fresh_until` (exclusive). Bounded: when full, stale entries are
/// dropped, and if that frees nothing the map starts over, so an instance never grows without
/// limit however many distinct keys it is asked about.
#[derive(Debug)]
pub(super) struct TtlMap<K, V> {
    entries: Mutex<HashMap<K, Entry<V>>>,
    capacity: usize,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    fresh_until: UnixTime,
}

impl<K: Eq + Hash, V: Clone> TtlMap<K, V> {
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    /// The value, if it is still fresh at `now`.
    pub(super) fn get(&self, key: &K, now: UnixTime) -> Option<V> {
        let entries = self.lock();
        entries
            .get(key)
            .filter(|entry| now < entry.fresh_until)
            .map(|entry| entry.value.clone())
    }

    /// Stores `value`, fresh until `fresh_until`; `now` decides which entries are stale when
    /// the map is full.
    pub(super) fn insert(&self, key: K, value: V, now: UnixTime, fresh_until: UnixTime) {
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, entry| now < entry.fresh_until);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, Entry { value, fresh_until });
    }

    /// Replaces the value of a present entry, keeping its deadline.
    pub(super) fn update(&self, key: &K, value: V) {
        if let Some(entry) = self.lock().get_mut(key) {
            entry.value = value;
        }
    }

    pub(super) fn remove(&self, key: &K) {
        self.lock().remove(key);
    }

    /// The lock guards only map operations (no await, no I/O), so a poisoned map is still a
    /// consistent map.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Entry<V>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
