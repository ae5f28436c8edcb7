//! The injected dependencies every operation needs: where data lives, what time it is, and
//! where randomness comes from.

use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::random::{OsRandom, RandomSource};
use crate::store::Store;

#[derive(Debug, Clone)]
pub struct Context {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub random: Arc<dyn RandomSource>,
}

impl Context {
    /// Real time and the operating system's randomness.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            clock: Arc::new(SystemClock),
            random: Arc::new(OsRandom),
        }
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}
