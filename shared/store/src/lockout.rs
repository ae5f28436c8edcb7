//! Password lockout: password attempts per login, counted atomically before the password is
//! compared (docs/decisions.md, "Lockout").
//!
//! Each login has one counter. Its window opens at the first attempt after the previous window
//! ended and lasts `window_seconds`; an attempt is let through only while fewer than
//! `threshold` attempts were let through in the window, and the check and the increment are one
//! atomic step. So however many guesses run in parallel (on as many Lambda instances), at most
//! `threshold` reach the password comparison per window. A window anchored at its first
//! attempt, rather than a sliding one, is what a single conditional counter can enforce: the
//! lock lasts until the window that filled up ends.
//!
//! An attempt whose password turns out correct is refunded
//! ([`LockoutStore::refund_login_attempt`]), so correct logins never count towards a lockout;
//! failures are never forgotten before their window ends. Attempts in flight count, though: more
//! than `threshold` simultaneous logins of one user may be answered "locked" until the first ones
//! are refunded.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::Login;

/// How many attempts a login gets per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptLimit {
    /// Attempts per window; at least 1 (a threshold of 0, "never lock", is the caller's to
    /// honour by not counting at all).
    pub threshold: u32,
    pub window_seconds: i64,
}

/// The answer to one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Counted: the password may be compared.
    Allowed(AllowedAttempt),
    /// `threshold` attempts were already let through in the current window: not counted.
    Locked,
}

/// An attempt that was let through, as needed to refund it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowedAttempt {
    /// Attempts let through in this window, this one included.
    pub count: u32,
    /// When the window this attempt was counted in opened.
    pub window_start: UnixTime,
}

/// An allowed attempt to take back in the same write as the family its correct password starts
/// (a batch's [`WriteOp::LoginRefund`](super::WriteOp::LoginRefund)), rather than in a write of
/// its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginRefund {
    pub login: Login,
    pub attempt: AllowedAttempt,
}

#[async_trait]
pub trait LockoutStore: Send + Sync {
    /// Counts one attempt for `login` at `now`, atomically with the check against `limit`. The
    /// counter is kept (DynamoDB TTL `expires_at`) until its window ends.
    async fn register_login_attempt(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<Attempt>;

    /// Whether `login` is locked at `now` (its window holds `limit.threshold` attempts), without
    /// counting anything: for sign-ins that must honour a lock they may not cause.
    async fn is_login_locked(
        &self,
        login: &Login,
        limit: AttemptLimit,
        now: UnixTime,
    ) -> StoreResult<bool>;

    /// Takes back an attempt whose password was correct. Does nothing if its window has ended
    /// (a new window is not charged for an old attempt).
    async fn refund_login_attempt(
        &self,
        login: &Login,
        attempt: &AllowedAttempt,
    ) -> StoreResult<()>;
}
