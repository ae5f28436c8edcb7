//! The flows against an in-memory [`OtpStore`] (for these tests only: the real backends are
//! tested by the integration suites), a recording mailer, and a manual clock.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::*;
use crate::clock::{Clock, ManualClock, UnixTime};
use crate::domain::{ClientId, PrincipalId};
use crate::mail::{MailError, Mailer, OtpMail};
use crate::random::{OsRandom, RandomSource};
use crate::secrets::Secret;
use crate::store::StoreResult;

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

    async fn count_otp_requests(&self, address: &AddressKey, since: UnixTime) -> StoreResult<u32> {
        let records = self.0.lock().unwrap();
        let count = records
            .iter()
            .filter(|r| &r.address == address && r.created_at >= since && !r.consumed)
            .count();
        Ok(count as u32)
    }

    async fn find_open_otp(
        &self,
        address: &AddressKey,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>> {
        let records = self.0.lock().unwrap();
        // Records are appended in creation order: the last one for the address is the newest.
        let newest = records.iter().rev().find(|r| &r.address == address);
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
        }
    }

    fn request(&self, address: &str, facts: OtpFacts) -> OtpRequest {
        OtpRequest {
            client_id: self.client,
            app_name: "Expenses".to_owned(),
            channel_type: Some("email".to_owned()),
            channel_handle: Some(address.to_owned()),
            facts,
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
    result.unwrap_err().error_code().map(|c| c.code())
}

#[tokio::test]
async fn request_checks_the_channel_in_order_and_sends_nothing_when_refused() {
    let h = Harness::new();
    let cases = [
        (None, None, 57),
        (Some(""), Some(ADDRESS), 57),
        (Some("sms"), None, 58),
        (Some("sms"), Some(ADDRESS), 80),
        (Some("email"), Some("ann@"), 81),
    ];
    for (channel_type, channel_handle, expected) in cases {
        let mut request = h.request(ADDRESS, facts());
        request.channel_type = channel_type.map(str::to_owned);
        request.channel_handle = channel_handle.map(str::to_owned);
        assert_eq!(code(request_otp(h.deps(), request).await), Some(expected));
    }
    assert!(h.mailer.sent.lock().unwrap().is_empty());
    assert!(h.store.records().is_empty());
}

#[tokio::test]
async fn request_mails_the_password_and_stores_only_its_hash() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    // No user has this address: the request cannot tell, and answers the same.
    h.send("stranger@example.com").await;

    let mail = h.mailer.sent.lock().unwrap()[0].clone();
    assert_eq!(mail.to.as_str(), ADDRESS);
    assert_eq!(mail.app_name, "Expenses");
    assert_eq!(
        mail.link.as_deref(),
        Some("https://app.example.com/continue")
    );
    let record = &h.store.records()[0];
    let now = h.clock.now();
    assert_eq!(record.expires_at, now + 600);
    assert_eq!((record.tries_left, record.consumed), (5, false));
    assert_eq!(record.client_id, h.client);
    assert_eq!(record.facts, facts().hash());
    assert!(!record.password.as_phc().contains(&password));
    assert!(record.password.verify(&Secret::new(&password)));
}

#[tokio::test]
async fn a_failed_send_leaves_no_password_behind() {
    let mut h = Harness::new();
    h.mailer.down = true;
    let result = request_otp(h.deps(), h.request(ADDRESS, facts())).await;
    assert!(matches!(result, Err(OtpError::Mail(_))), "{result:?}");
    assert!(h.store.records().is_empty());
}

#[tokio::test]
async fn five_unconsumed_requests_per_address_in_fifteen_minutes() {
    let h = Harness::new();
    for _ in 0..5 {
        h.send(ADDRESS).await;
    }
    // Same address in another case: same cap. Nothing is mailed.
    let refused = request_otp(h.deps(), h.request("ann@example.COM", facts())).await;
    assert!(matches!(refused, Err(OtpError::TooManyOpenRequests)));
    assert_eq!(
        refused.unwrap_err().error_code(),
        Some(crate::errors::ErrorCode::TooManyOpenOtpRequests)
    );
    assert_eq!(h.mailer.sent.lock().unwrap().len(), 5);
    h.send("other@example.com").await;

    h.clock.advance(15 * 60 + 1);
    h.send(ADDRESS).await;
}

#[tokio::test]
async fn a_redeemed_request_no_longer_counts_toward_the_cap() {
    let h = Harness::new();
    for _ in 0..4 {
        h.send(ADDRESS).await;
    }
    let password = h.send(ADDRESS).await;
    h.verify(h.verification(ADDRESS, &password, facts()))
        .await
        .unwrap();
    h.send(ADDRESS).await;
}

#[tokio::test]
async fn the_right_password_yields_the_user_once() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    let verification = h.verification("ann@example.com", &password, facts());
    assert_eq!(h.verify(verification.clone()).await.unwrap(), h.user);
    assert!(h.store.records()[0].consumed);
    assert_eq!(code(h.verify(verification).await), Some(83));
}

#[tokio::test]
async fn verification_checks_its_parameters_in_order() {
    let h = Harness::new();
    let mut missing_otp = h.verification(ADDRESS, "", facts());
    missing_otp.channel_type = None;
    assert_eq!(code(h.verify(missing_otp).await), Some(56));
    let mut no_type = h.verification(ADDRESS, "123456", facts());
    no_type.channel_type = None;
    assert_eq!(code(h.verify(no_type).await), Some(57));
    let mut no_handle = h.verification(ADDRESS, "123456", facts());
    no_handle.channel_handle = None;
    assert_eq!(code(h.verify(no_handle).await), Some(58));
    let mut sms = h.verification(ADDRESS, "123456", facts());
    sms.channel_type = Some("sms".to_owned());
    assert_eq!(code(h.verify(sms).await), Some(80));
    assert_eq!(
        code(
            h.verify(h.verification("not an address", "1", facts()))
                .await
        ),
        Some(81)
    );
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, "123456", facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn expired_superseded_and_other_clients_passwords_are_not_found() {
    let h = Harness::new();
    let first = h.send(ADDRESS).await;
    let second = h.send(ADDRESS).await;
    if first != second {
        assert_eq!(
            code(h.verify(h.verification(ADDRESS, &first, facts())).await),
            Some(85),
            "a newer request supersedes"
        );
    }
    let mut other_client = h.verification(ADDRESS, &second, facts());
    other_client.client_id = ClientId::new(uuid::Uuid::new_v4());
    assert_eq!(code(h.verify(other_client).await), Some(83));

    h.clock.advance(600);
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, &second, facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn the_fifth_wrong_try_closes_the_password() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for _ in 0..5 {
        let attempt = h.verification(ADDRESS, &wrong(&password), facts());
        assert_eq!(code(h.verify(attempt).await), Some(85));
    }
    assert_eq!(h.store.records()[0].tries_left, 0);
    assert_eq!(
        code(h.verify(h.verification(ADDRESS, &password, facts())).await),
        Some(83)
    );
}

#[tokio::test]
async fn the_last_try_may_be_the_right_one() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for _ in 0..4 {
        let attempt = h.verification(ADDRESS, &wrong(&password), facts());
        assert_eq!(code(h.verify(attempt).await), Some(85));
    }
    let verified = h.verify(h.verification(ADDRESS, &password, facts())).await;
    assert_eq!(verified.unwrap(), h.user);
}

#[tokio::test]
async fn parallel_guesses_never_exceed_five_tries() {
    let h = Arc::new(Harness::new());
    let password = h.send(ADDRESS).await;
    let guesses = (0..12).map(|_| {
        let h = Arc::clone(&h);
        let guess = wrong(&password);
        async move { code(h.verify(h.verification(ADDRESS, &guess, facts())).await) }
    });
    let mut codes = futures::future::join_all(guesses).await;
    codes.sort();
    assert_eq!(codes.iter().filter(|c| **c == Some(85)).count(), 5);
    assert_eq!(codes.iter().filter(|c| **c == Some(83)).count(), 7);
}

#[tokio::test]
async fn different_facts_fail_after_the_password_and_spend_a_try() {
    let h = Harness::new();
    let password = h.send(ADDRESS).await;
    for changed in [
        OtpFacts {
            name: Some("Eve".to_owned()),
            ..facts()
        },
        OtpFacts {
            company: Some("Acme".to_owned()),
            ..facts()
        },
        OtpFacts {
            link: None,
            ..facts()
        },
    ] {
        let attempt = h.verification(ADDRESS, &password, changed);
        assert_eq!(code(h.verify(attempt).await), Some(84));
    }
    assert_eq!(h.store.records()[0].tries_left, 2);
    // Absent and empty are the same fact.
    let same = OtpFacts {
        company: Some(String::new()),
        ..facts()
    };
    let verified = h.verify(h.verification(ADDRESS, &password, same)).await;
    assert_eq!(verified.unwrap(), h.user);
}

#[tokio::test]
async fn an_unknown_address_is_told_only_after_the_password_is_verified() {
    let h = Harness::new();
    let stranger = "stranger@example.com";
    let password = h.send(stranger).await;
    let looked_up = Mutex::new(false);
    let lookup = |_: ChannelHandle| async {
        *looked_up.lock().unwrap() = true;
        Ok(None::<PrincipalId>)
    };
    let attempt = h.verification(stranger, &wrong(&password), facts());
    assert_eq!(code(verify_otp(h.deps(), attempt, lookup).await), Some(85));
    assert!(!*looked_up.lock().unwrap(), "no lookup before verification");
    assert_eq!(
        code(h.verify(h.verification(stranger, &password, facts())).await),
        Some(55)
    );
}
