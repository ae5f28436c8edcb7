//! Abuse limits: what each limit counts, over which window, and the refusal (429 with
//! `Retry-After`, the catalogue's `slow_down` body). The counters are the store's
//! ([`RateLimitStore`]): one conditional write per counted request, atomic across instances of
//! one deployment (see `docs/decisions.md`, "Regions and abuse limits").

mod spread;

use std::net::IpAddr;

use crate::clock::UnixTime;
pub use crate::config::Limit;
use crate::config::{LimitRow, RateLimits};
use crate::domain::AccessTokenRecord;
use crate::errors::{Denial, ErrorCode, Refusal};
use crate::store::{
    Committed, FamilyWrite, Gate, Gated, Hit, RateKey, RateLimit, RateLimitStore, Store,
    StoreError, StoreResult, WriteBatch,
};

pub use spread::RefusalMemory;

/// How long an address stays blocked for one client once that client has sent too many wrong
/// one-time passwords for it.
pub const OTP_FAILURE_BLOCK_SECONDS: i64 = 24 * 3600;

/// Sign-in form posts one pending authorization request may make; the request then ends.
pub const SIGN_IN_POSTS_PER_REQUEST: u32 = 10;

/// Codes one password step may be followed by (an authenticator-app or recovery code each); then
/// the sign-in starts again with the password.
pub const CODE_POSTS_PER_PASSWORD_STEP: u32 = 5;

/// What counts as one source address: an IPv4 address, or an IPv6 /64 prefix. One subscriber
/// is usually given a whole /64, so counting single IPv6 addresses would let one machine step
/// through 2^64 of them. An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is that IPv4 address.
pub fn source_subject(source: IpAddr) -> String {
    match source.to_canonical() {
        IpAddr::V4(address) => address.to_string(),
        IpAddr::V6(address) => {
            let [a, b, c, d, ..] = address.segments();
            format!("{a:x}:{b:x}:{c:x}:{d:x}::/64")
        }
    }
}

impl Limit {
    /// The counter's name in the store.
    fn counter(self) -> &'static str {
        match self {
            Self::ClientTokenRequests => "client",
            Self::AddressPasswordAttempts => "address",
            Self::ClientOtpRequests => "otp-client",
            Self::AddressOtpFailures => "otp-failures",
            Self::AddressRegistrations => "registrations",
            Self::AddressDocumentFetches => "document-fetches",
            Self::CompanyScimRequests => "scim",
        }
    }

    /// The configured limit; `None` when it is turned off (0).
    pub fn of(self, limits: &RateLimits) -> Option<RateLimit> {
        let row = LimitRow::of(self);
        let max = row.max(limits);
        (max > 0).then_some(RateLimit {
            max,
            window_seconds: row.window_seconds,
        })
    }

    /// The catalogue entry a refusal answers with (429, `slow_down`).
    pub fn code(self) -> ErrorCode {
        LimitRow::of(self).code
    }

    /// `subject`'s counter in `deployment`: each regional deployment counts on its own items,
    /// so that a global table's replication, where the last writer wins, never overwrites one
    /// region's count with another's (docs/decisions.md, "Regions and abuse limits").
    fn key(self, deployment: &str, subject: &str) -> RateKey {
        RateKey::new(self.counter(), &format!("{deployment} {subject}"))
    }

    /// Whether a busy subject's count is spread over several counters (`spread`): a client's
    /// token requests, which one client may send thousands of a second. The others are counted
    /// per address or stay small.
    fn spreads(self) -> bool {
        self == Self::ClientTokenRequests
    }
}

/// A request refused by a limit: answered 429 with `Retry-After: retry_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: Limit,
    pub retry_after: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("rate limit exceeded: {:?}", .0.limit)]
    Exceeded(Exceeded),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A limit's refusal becomes any flow's denial that knows how to say it; the store's failure
/// stays a server failure.
impl<D: Denial + From<Exceeded>> From<LimitError> for Refusal<D> {
    fn from(error: LimitError) -> Self {
        match error {
            LimitError::Exceeded(exceeded) => Refusal::Denied(exceeded.into()),
            LimitError::Store(error) => Refusal::Server(error.into()),
        }
    }
}

/// The counters, their configuration, and the refusals this process remembers.
#[derive(Clone, Copy)]
pub struct Limiter<'a> {
    pub store: &'a dyn RateLimitStore,
    pub limits: RateLimits,
    pub memory: &'a RefusalMemory,
    /// The deployment that counts (its geolocation): counters are per deployment.
    pub deployment: &'a str,
}

impl<'a> Limiter<'a> {
    pub fn new(
        store: &'a dyn RateLimitStore,
        limits: RateLimits,
        memory: &'a RefusalMemory,
        deployment: &'a str,
    ) -> Self {
        Self {
            store,
            limits,
            memory,
            deployment,
        }
    }

    /// Counts a sign-in form's post against its source address's limit, shared with password
    /// grants, before any password is hashed or passkey checked (nothing without a source).
    pub async fn count_sign_in_attempt(
        self,
        source: Option<IpAddr>,
        now: UnixTime,
    ) -> Result<(), LimitError> {
        match source {
            Some(source) => {
                self.count(Limit::AddressPasswordAttempts, &source_subject(source), now)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Counts one request of `subject` against `limit` (nothing when the limit is off).
    pub async fn count(self, limit: Limit, subject: &str, now: UnixTime) -> Result<(), LimitError> {
        let Some(rate) = limit.of(&self.limits) else {
            return Ok(());
        };
        let store = self.store;
        let hit = self
            .memory
            .count(
                &limit.key(self.deployment, subject),
                rate,
                limit.spreads(),
                now,
                |key, share| async move { store.count_hit(&key, share, now).await },
            )
            .await?;
        verdict(limit, hit)
    }

    /// Counts one request of `subject` against `limit` and stores `record`, the access token it
    /// asked for, only if it was counted: one batch (one store write on SQLite, a count and a
    /// put on DynamoDB). With the limit off, only stores `record`.
    pub async fn count_with_access_token(
        self,
        store: &dyn Store,
        limit: Limit,
        subject: &str,
        record: &AccessTokenRecord,
        now: UnixTime,
    ) -> Result<(), LimitError> {
        self.count_in(limit, subject, now, |gate| async move {
            let Some(gate) = gate else {
                store.families().put_access_token(record).await?;
                return Ok(Gated::Counted {
                    count: 0,
                    outcome: (),
                });
            };
            let mut batch = WriteBatch::of([FamilyWrite::PutAccessToken(record.clone()).into()]);
            batch.count_first(gate.key, gate.limit, now);
            match store.writes().commit(batch).await? {
                Committed::Limited { retry_after } => Ok(Gated::Limited { retry_after }),
                Committed::Applied { counted, .. } => Ok(Gated::Counted {
                    count: counted.unwrap_or(1),
                    outcome: (),
                }),
                Committed::Refused(_) => Err(StoreError::internal(
                    "an access token's put has no condition",
                )),
            }
        })
        .await
    }

    /// Counts one request of `subject` against `limit` in the store write `write` makes, gated
    /// by the count ([`Gate`]; `None` when the limit is off): one write where a count and the
    /// write would be two. `write` may run once more, on another of a busy subject's counters,
    /// when the first it tried was full (it wrote nothing then).
    pub async fn count_in<T, F, Fut>(
        self,
        limit: Limit,
        subject: &str,
        now: UnixTime,
        mut write: F,
    ) -> Result<T, LimitError>
    where
        F: FnMut(Option<Gate>) -> Fut,
        Fut: std::future::Future<Output = StoreResult<Gated<T>>>,
    {
        let Some(rate) = limit.of(&self.limits) else {
            return match write(None).await? {
                Gated::Counted { outcome, .. } => Ok(outcome),
                Gated::Limited { .. } => {
                    Err(StoreError::internal("a write without a gate was limited").into())
                }
            };
        };
        let outcome = std::sync::Mutex::new(None);
        let hit = self
            .memory
            .count(
                &limit.key(self.deployment, subject),
                rate,
                limit.spreads(),
                now,
                |key, share| {
                    let written = write(Some(Gate {
                        key,
                        limit: share,
                        now,
                    }));
                    let outcome = &outcome;
                    async move {
                        Ok::<_, StoreError>(match written.await? {
                            Gated::Limited { retry_after } => Hit::Refused { retry_after },
                            Gated::Counted {
                                count,
                                outcome: done,
                            } => {
                                *lock(outcome) = Some(done);
                                Hit::Counted { count }
                            }
                        })
                    }
                },
            )
            .await?;
        verdict(limit, hit)?;
        let outcome = outcome
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        outcome.ok_or_else(|| StoreError::internal("a counted write left no outcome").into())
    }

    /// Refuses `guesser` (an address as one client sees it) once blocked for wrong one-time
    /// passwords. A read, no write.
    pub async fn check_otp_block(self, guesser: &str, now: UnixTime) -> Result<(), LimitError> {
        let limit = Limit::AddressOtpFailures;
        if limit.of(&self.limits).is_none() {
            return Ok(());
        }
        let key = limit.key(self.deployment, guesser);
        match self.store.blocked_until(&key, now).await? {
            None => Ok(()),
            Some(until) => {
                crate::measure::rate_limited(limit.counter());
                Err(LimitError::Exceeded(Exceeded {
                    limit,
                    retry_after: crate::store::rate_limits::retry_after(until, now),
                }))
            }
        }
    }

    /// Counts one post of the sign-in form for the pending authorization request `request_id`
    /// (which ends at `expires_at`); `false` once [`SIGN_IN_POSTS_PER_REQUEST`] were counted,
    /// which is a rate-limited request like any other limit's refusal.
    pub async fn count_sign_in_post(
        self,
        request_id: &str,
        expires_at: UnixTime,
    ) -> Result<bool, StoreError> {
        const COUNTER: &str = "signin-posts";
        let counted = once_per_request(
            self.store,
            COUNTER,
            SIGN_IN_POSTS_PER_REQUEST,
            request_id,
            expires_at,
        )
        .await?;
        if !counted {
            crate::measure::rate_limited(COUNTER);
        }
        Ok(counted)
    }

    /// Counts one code typed after the password step `step_id` (which ends at `expires_at`);
    /// `false` once [`CODE_POSTS_PER_PASSWORD_STEP`] were counted.
    pub async fn count_code_post(
        self,
        step_id: &str,
        expires_at: UnixTime,
    ) -> Result<bool, StoreError> {
        const COUNTER: &str = "code-posts";
        let counted = once_per_request(
            self.store,
            COUNTER,
            CODE_POSTS_PER_PASSWORD_STEP,
            step_id,
            expires_at,
        )
        .await?;
        if !counted {
            crate::measure::rate_limited(COUNTER);
        }
        Ok(counted)
    }

    /// Claims the one approval of the pending authorization request `request_id`: `false` if
    /// it was approved before (a replayed consent form, a copied cookie), which mints nothing.
    pub async fn claim_approval(
        self,
        request_id: &str,
        expires_at: UnixTime,
    ) -> Result<bool, StoreError> {
        once_per_request(self.store, "approval", 1, request_id, expires_at).await
    }

    /// Counts a wrong one-time password of `guesser` (as [`Self::check_otp_block`]); the one that
    /// reaches the limit blocks it for [`OTP_FAILURE_BLOCK_SECONDS`].
    pub async fn count_otp_failure(self, guesser: &str, now: UnixTime) -> Result<(), StoreError> {
        let limit = Limit::AddressOtpFailures;
        let Some(rate) = limit.of(&self.limits) else {
            return Ok(());
        };
        let key = limit.key(self.deployment, guesser);
        let reached = match self.store.count_hit(&key, rate, now).await? {
            Hit::Counted { count } => count >= rate.max,
            Hit::Refused { .. } => true,
        };
        if reached {
            self.store
                .block_until(&key, now + OTP_FAILURE_BLOCK_SECONDS)
                .await?;
        }
        Ok(())
    }

    /// Counts a guess of `guesser` against [`Limit::AddressOtpFailures`] before it is looked up,
    /// so that parallel guesses never get more than the limit looked up: a blocked guesser, or
    /// one whose window is full, is refused (and blocked for [`OTP_FAILURE_BLOCK_SECONDS`]).
    /// The guess is then settled with [`Self::settle_guess`]: a right one is given back.
    /// `None` when the limit is off.
    pub async fn count_guess(
        self,
        guesser: &str,
        now: UnixTime,
    ) -> Result<Option<CountedGuess>, LimitError> {
        let limit = Limit::AddressOtpFailures;
        let Some(rate) = limit.of(&self.limits) else {
            return Ok(None);
        };
        self.check_otp_block(guesser, now).await?;
        let key = limit.key(self.deployment, guesser);
        match self.store.count_hit(&key, rate, now).await? {
            Hit::Counted { count } => Ok(Some(CountedGuess {
                key,
                rate,
                counted_at: now,
                reached: count >= rate.max,
            })),
            Hit::Refused { .. } => {
                let until = now + OTP_FAILURE_BLOCK_SECONDS;
                self.store.block_until(&key, until).await?;
                crate::measure::rate_limited(limit.counter());
                Err(LimitError::Exceeded(Exceeded {
                    limit,
                    retry_after: crate::store::rate_limits::retry_after(until, now),
                }))
            }
        }
    }

    /// A right guess takes its count back; the wrong one that filled the window blocks the
    /// guesser for [`OTP_FAILURE_BLOCK_SECONDS`].
    pub async fn settle_guess(self, guess: CountedGuess, right: bool) -> Result<(), StoreError> {
        if right {
            self.store
                .refund_hit(&guess.key, guess.rate, guess.counted_at)
                .await
        } else if guess.reached {
            self.store
                .block_until(&guess.key, guess.counted_at + OTP_FAILURE_BLOCK_SECONDS)
                .await
        } else {
            Ok(())
        }
    }
}

/// A guess counted by [`Limiter::count_guess`], to settle once looked up.
#[derive(Debug, Clone)]
pub struct CountedGuess {
    key: RateKey,
    rate: RateLimit,
    counted_at: UnixTime,
    /// This guess filled the window: wrong, it blocks the guesser.
    reached: bool,
}

/// A counted hit passes; a refused one is the limit's refusal (and its metric).
fn verdict(limit: Limit, hit: Hit) -> Result<(), LimitError> {
    match hit {
        Hit::Counted { .. } => Ok(()),
        Hit::Refused { retry_after } => {
            crate::measure::rate_limited(limit.counter());
            Err(LimitError::Exceeded(Exceeded { limit, retry_after }))
        }
    }
}

/// At most `max` hits on a request that ends at `expires_at`, its whole life in one counter:
/// the hits are counted in the window holding its end (a window longer than any request's
/// life, so the counter outlives the request), whatever time they arrive at.
async fn once_per_request(
    store: &dyn RateLimitStore,
    counter: &'static str,
    max: u32,
    request_id: &str,
    expires_at: UnixTime,
) -> Result<bool, StoreError> {
    let whole_life = RateLimit {
        max,
        window_seconds: 24 * 3600,
    };
    let key = RateKey::new(counter, request_id);
    let hit = store.count_hit(&key, whole_life, expires_at).await?;
    Ok(matches!(hit, Hit::Counted { .. }))
}

/// A rate limit's refusal: 429 `slow_down` with its own code and `Retry-After`.
impl From<Exceeded> for crate::errors::GrantDenial {
    fn from(exceeded: Exceeded) -> Self {
        Self {
            retry_after: Some(exceeded.retry_after),
            ..crate::errors::GrantDenial::new(exceeded.limit.code())
        }
    }
}

fn lock<T>(outcome: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    outcome
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::SqliteStore;
    use crate::store::FamilyStore;
    use token_store_conformance::records::{application_access_token, now};

    #[tokio::test]
    async fn with_the_limit_off_the_token_is_stored_and_nothing_counted() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open_in_dir(dir.path()).unwrap();
        let off = RateLimits {
            client_per_minute: 0,
            ..RateLimits::default()
        };
        let now = now();
        let record = application_access_token(now);
        Limiter::new(&store, off, &RefusalMemory::default(), "here")
            .count_with_access_token(&store, Limit::ClientTokenRequests, "client", &record, now)
            .await
            .unwrap();
        assert_eq!(
            store.get_access_token(&record.jti, now).await.unwrap(),
            Some(record)
        );
        let one = RateLimit {
            max: 1,
            window_seconds: 60,
        };
        assert_eq!(
            store
                .count_hit(&Limit::ClientTokenRequests.key("here", "client"), one, now)
                .await
                .unwrap(),
            Hit::Counted { count: 1 },
            "nothing was counted while the limit was off"
        );
    }

    #[test]
    fn an_ipv6_source_counts_per_64_prefix_and_ipv4_per_address() {
        let subject = |text: &str| source_subject(text.parse().unwrap());
        assert_eq!(subject("203.0.113.7"), "203.0.113.7");
        assert_ne!(subject("203.0.113.7"), subject("203.0.113.8"));
        assert_eq!(subject("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(subject("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(
            subject("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            subject("2001:db8:1:2::1"),
            "one /64, one source"
        );
        assert_ne!(subject("2001:db8:1:3::1"), subject("2001:db8:1:2::1"));
    }

    #[test]
    fn zero_turns_a_limit_off() {
        let limits = RateLimits {
            client_per_minute: 0,
            ..RateLimits::default()
        };
        assert_eq!(Limit::ClientTokenRequests.of(&limits), None);
        assert_eq!(
            Limit::AddressPasswordAttempts.of(&limits),
            Some(RateLimit {
                max: 60,
                window_seconds: 60
            })
        );
    }

    #[test]
    fn each_limit_has_a_code_of_its_own() {
        let limits = [
            Limit::ClientTokenRequests,
            Limit::AddressPasswordAttempts,
            Limit::ClientOtpRequests,
            Limit::AddressOtpFailures,
            Limit::AddressRegistrations,
            Limit::AddressDocumentFetches,
        ];
        let mut codes: Vec<u16> = limits.iter().map(|l| l.code().code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), limits.len());
        for limit in limits {
            assert_eq!(limit.code().status(), http::StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(limit.code().error().as_str(), "slow_down");
        }
    }
}
