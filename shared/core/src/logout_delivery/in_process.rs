//! Deliveries by background tasks of this process: the local server, tokenctl and tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::{Attempt, Deliverer, LogoutDelivery, LogoutQueue};
use crate::errors::ServerError;

/// The waits between attempts: one attempt more than there are waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule {
    waits: Vec<Duration>,
}

impl RetrySchedule {
    pub fn new(waits: Vec<Duration>) -> Self {
        Self { waits }
    }

    /// Three attempts, at 0, 30 and 70 seconds: spread over more than a minute, so that a
    /// client restarting or briefly unreachable still hears of the logout, and all within the
    /// logout token's two minutes (`jwt::LOGOUT_TOKEN_TTL_SECONDS`).
    pub fn production() -> Self {
        Self::new(vec![Duration::from_secs(30), Duration::from_secs(40)])
    }

    pub fn attempts(&self) -> u32 {
        u32::try_from(self.waits.len()).unwrap_or(u32::MAX - 1) + 1
    }

    /// From the first attempt to the last.
    pub fn span(&self) -> Duration {
        self.waits.iter().sum()
    }
}

/// Each delivery a spawned task that retries on its own schedule.
#[derive(Debug)]
pub struct InProcessLogoutQueue {
    deliverer: Deliverer,
    schedule: RetrySchedule,
    pending: Arc<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    count: AtomicUsize,
    idle: Notify,
}

/// One delivery's share of [`Pending`], given back however its task ends.
struct InFlight(Arc<Pending>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl InProcessLogoutQueue {
    pub fn new(deliverer: Deliverer, schedule: RetrySchedule) -> Self {
        Self {
            deliverer,
            schedule,
            pending: Arc::default(),
        }
    }
}

#[async_trait::async_trait]
impl LogoutQueue for InProcessLogoutQueue {
    async fn enqueue(&self, deliveries: Vec<LogoutDelivery>) -> Result<(), ServerError> {
        for delivery in deliveries {
            self.pending.count.fetch_add(1, Ordering::SeqCst);
            let in_flight = InFlight(self.pending.clone());
            let deliverer = self.deliverer.clone();
            let schedule = self.schedule.clone();
            tokio::spawn(async move {
                deliver(&deliverer, &schedule, &delivery).await;
                drop(in_flight);
            });
        }
        Ok(())
    }

    async fn drain(&self) {
        loop {
            let idle = self.pending.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.pending.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

async fn deliver(deliverer: &Deliverer, schedule: &RetrySchedule, delivery: &LogoutDelivery) {
    let mut attempts = 0;
    loop {
        let outcome = deliverer.attempt(delivery).await;
        attempts += 1;
        let retry = match outcome {
            Attempt::Delivered => None,
            Attempt::Failed { reason, .. } if !reason.is_retryable() => None,
            Attempt::Failed { .. } => schedule.waits.get(attempts as usize - 1),
        };
        match retry {
            Some(wait) => tokio::time::sleep(*wait).await,
            None => return deliverer.record(delivery, attempts, outcome).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_production_schedule_makes_three_attempts_over_more_than_a_minute() {
        let schedule = RetrySchedule::production();
        assert!(schedule.attempts() >= 3);
        assert!(schedule.span() >= Duration::from_secs(60));
        let within = Duration::from_secs(crate::jwt::LOGOUT_TOKEN_TTL_SECONDS as u64);
        // The last attempt may take the outbound timeout too.
        assert!(schedule.span() + crate::outbound::TIMEOUT < within);
    }
}
