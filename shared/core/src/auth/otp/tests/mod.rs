//! The flows against an in-memory [`OtpStore`] (for these tests only: the real backends are
//! tested by the integration suites), a recording mailer, and a manual clock: the harness is
//! here, the requests' tests in `request.rs`, the verifications' in `verification.rs`.

mod limits;
mod request;
mod verification;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::*;
use crate::clock::{Clock, ManualClock, UnixTime};
use crate::config::RateLimits;
use crate::domain::{AddressKey, ChannelHandle, ClientId, PrincipalId};
use crate::errors::Refusal;
use crate::limits::Limiter;
use crate::mail::{MailError, Mailer, OtpMail};
use crate::random::{OsRandom, RandomSource};
use crate::secrets::Secret;
use crate::store::{Hit, OtpRecord, OtpStore, RateKey, RateLimit, RateLimitStore, StoreResult};

#[derive(Default)]
struct MemoryOtpStore(Mutex<Vec<OtpRecord>>);

impl MemoryOtpStore {
    fn records(&self) -> Vec<OtpRecord> {
        self.0.lock().unwrap().clone()
    }
}

#[async_trait]
impl OtpStore for MemoryOtpStore {
    async fn create_otp(&self, record: &OtpRecord) -> StoreResult<()> {
        self.0.lock().unwrap().push(record.clone());
        Ok(())
    }

    async fn count_otp_requests(
        &self,
        address: &AddressKey,
        client: &ClientId,
        since: UnixTime,
    ) -> StoreResult<u32> {
        let records = self.0.lock().unwrap();
        let count = records
            .iter()
            .filter(|r| &r.address == address && &r.client_id == client)
            .filter(|r| r.created_at >= since && !r.consumed)
            .count();
        Ok(count as u32)
    }

    async fn find_open_otp(
        &self,
        address: &AddressKey,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>> {
        let records = self.0.lock().unwrap();
        // Records are appended in creation order: the last one for the address is the newest.
        let newest = records
            .iter()
            .rev()
            .find(|r| &r.address == address && &r.client_id == client);
        Ok(newest.filter(|r| r.is_open(now)).cloned())
    }

    async fn spend_otp_try(&self, spent: &OtpRecord, now: UnixTime) -> StoreResult<Option<u32>> {
        let mut records = self.0.lock().unwrap();
        let record = records.iter_mut().find(|r| r.id == spent.id);
        Ok(record.filter(|r| r.is_open(now)).map(|r| {
            r.tries_left -= 1;
            r.tries_left
        }))
    }

    async fn consume_otp(&self, consumed: &OtpRecord, now: UnixTime) -> StoreResult<bool> {
        let mut records = self.0.lock().unwrap();
        let record = records.iter_mut().find(|r| r.id == consumed.id);
        Ok(match record {
            Some(r) if !r.consumed && now < r.expires_at => {
                r.consumed = true;
                true
            }
            _ => false,
        })
    }
}

/// Counters by stored key and window; blocks by stored key.
#[derive(Default)]
struct MemoryRateLimits {
    hits: Mutex<HashMap<(String, i64), u32>>,
    blocks: Mutex<HashMap<String, UnixTime>>,
}

#[async_trait]
impl RateLimitStore for MemoryRateLimits {
    async fn count_hit(&self, key: &RateKey, limit: RateLimit, now: UnixTime) -> StoreResult<Hit> {
        let mut hits = self.hits.lock().unwrap();
        let count = hits
            .entry((key.stored(), limit.window_start(now)))
            .or_default();
        if *count >= limit.max {
            return Ok(Hit::Refused {
                retry_after: limit.window_end(now) - now,
            });
        }
        *count += 1;
        Ok(Hit::Counted { count: *count })
    }

    async fn refund_hit(&self, key: &RateKey, limit: RateLimit, at: UnixTime) -> StoreResult<()> {
        let mut hits = self.hits.lock().unwrap();
        if let Some(count) = hits.get_mut(&(key.stored(), limit.window_start(at))) {
            *count = count.saturating_sub(1);
        }
        Ok(())
    }

    async fn block_until(&self, key: &RateKey, until: UnixTime) -> StoreResult<()> {
        let mut blocks = self.blocks.lock().unwrap();
        let stored = blocks.entry(key.stored()).or_default();
        *stored = (*stored).max(until);
        Ok(())
    }

    async fn blocked_until(&self, key: &RateKey, now: UnixTime) -> StoreResult<Option<UnixTime>> {
        let blocks = self.blocks.lock().unwrap();
        Ok(blocks
            .get(&key.stored())
            .copied()
            .filter(|until| *until > now))
    }
}

/// Keeps what it "sends"; fails every send when `down`.
#[derive(Debug, Default)]
struct RecordingMailer {
    sent: Mutex<Vec<OtpMail>>,
    down: bool,
}

#[async_trait]
impl Mailer for RecordingMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        if self.down {
            return Err(MailError::Message("server down".to_owned()));
        }
        self.sent.lock().unwrap().push(message.clone());
        Ok(())
    }
}

const ADDRESS: &str = "Ann@Example.com";

struct Harness {
    store: MemoryOtpStore,
    rate_limits: MemoryRateLimits,
    refusals: crate::limits::RefusalMemory,
    mailer: RecordingMailer,
    clock: ManualClock,
    random: Arc<dyn RandomSource>,
    client: ClientId,
    user: PrincipalId,
}

impl Harness {
    fn new() -> Self {
        Self {
            store: MemoryOtpStore::default(),
            rate_limits: MemoryRateLimits::default(),
            refusals: crate::limits::RefusalMemory::default(),
            mailer: RecordingMailer::default(),
            clock: ManualClock::new(1_800_000_000),
            random: Arc::new(OsRandom),
            client: ClientId::new(uuid::Uuid::new_v4()),
            user: PrincipalId::new(uuid::Uuid::new_v4()),
        }
    }

    fn deps(&self) -> OtpDeps<'_> {
        OtpDeps {
            store: &self.store,
            mailer: &self.mailer,
            clock: &self.clock,
            random: &self.random,
            limiter: Limiter::new(
                &self.rate_limits,
                RateLimits::default(),
                &self.refusals,
                "https://us.example.com",
            ),
        }
    }

    fn request(&self, address: &str, facts: OtpFacts) -> OtpRequest {
        OtpRequest {
            client_id: self.client,
            app_name: "Expenses".to_owned(),
            channel_type: Some("email".to_owned()),
            channel_handle: Some(address.to_owned()),
            facts,
            link_origins: vec!["https://app.example.com".to_owned()],
        }
    }

    fn verification(&self, address: &str, otp: &str, facts: OtpFacts) -> OtpVerification {
        OtpVerification {
            client_id: self.client,
            otp: Some(Secret::new(otp)),
            channel_type: Some("email".to_owned()),
            channel_handle: Some(address.to_owned()),
            facts,
        }
    }

    async fn send(&self, address: &str) -> String {
        request_otp(self.deps(), self.request(address, facts()))
            .await
            .unwrap();
        let sent = self.mailer.sent.lock().unwrap();
        sent.last().unwrap().password.expose().to_owned()
    }

    /// Verifies with a directory in which only `ADDRESS` (any case) has a user.
    async fn verify(&self, verification: OtpVerification) -> Result<PrincipalId, OtpError> {
        let user = self.user;
        verify_otp(
            self.deps(),
            verification,
            |handle: ChannelHandle| async move {
                Ok((handle.as_str().eq_ignore_ascii_case(ADDRESS)).then_some(user))
            },
        )
        .await
    }
}

fn facts() -> OtpFacts {
    OtpFacts {
        name: Some("Ann Lee".to_owned()),
        company: None,
        link: Some("https://app.example.com/continue".to_owned()),
    }
}

fn wrong(password: &str) -> String {
    format!("{:06}", (password.parse::<u32>().unwrap() + 1) % 1_000_000)
}

fn code(result: Result<impl std::fmt::Debug, OtpError>) -> Option<u16> {
    result
        .unwrap_err()
        .denial()
        .map(|denial| denial.error_code().code())
}
