//! The two one-time-password flows (docs/decisions.md, "One-time passwords"): mailing a
//! password, and checking one.

use std::future::Future;
use std::sync::Arc;

use super::error::{OtpDenial, OtpError};
use super::facts::OtpFacts;
use crate::clock::Clock;
use crate::domain::{
    AddressKey, ChannelHandle, ClientId, OneTimePassword, OtpHash, OTP_VALIDITY_MINUTES,
};
use crate::errors::ServerError;
use crate::limits::{Limit, Limiter};
use crate::mail::{Mailer, OtpMail};
use crate::random::{RandomExt, RandomSource};
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::{
    Hit, OtpId, OtpRecord, OtpStore, RateKey, RateLimit, StoreResult, REQUEST_WINDOW_SECONDS,
};

pub const OTP_TTL_SECONDS: i64 = OTP_VALIDITY_MINUTES * 60;
pub const OTP_TRIES: u32 = 5;
/// At most this many unconsumed requests of one client for one address within
/// [`REQUEST_WINDOW_SECONDS`].
pub const MAX_OPEN_REQUESTS: u32 = 5;

/// The atomic part of the open-request cap: a counter per address and client over fixed
/// windows, given back when a password is consumed (a redeemed request is no longer open).
const OPEN_CAP: RateLimit = RateLimit {
    max: MAX_OPEN_REQUESTS,
    window_seconds: REQUEST_WINDOW_SECONDS,
};

/// What the open-request cap and the wrong-password block count: an address as one client sees
/// it. A client reaches only its own passwords, so its requests and guesses must not use up
/// another client's cap or block another client's users.
fn address_of_client(address: &AddressKey, client: &ClientId) -> String {
    format!("{}#{client}", address.0.to_hex())
}

fn open_requests_key(address: &AddressKey, client: &ClientId) -> RateKey {
    RateKey::new("otp-open", &address_of_client(address, client))
}

/// The only `channel_type` there is.
const EMAIL_CHANNEL: &str = "email";

/// What the flows run on. Randomness is shared (`Arc`) because hashing runs on a blocking task.
#[derive(Clone, Copy)]
pub struct OtpDeps<'a> {
    pub store: &'a dyn OtpStore,
    pub mailer: &'a dyn Mailer,
    pub clock: &'a dyn Clock,
    pub random: &'a Arc<dyn RandomSource>,
    /// The rate-limit counters: requests per client, wrong passwords per address and client, and
    /// the atomic cap on open requests.
    pub limiter: Limiter<'a>,
}

/// The flows' dependencies, out of the process's services.
pub fn otp_deps(services: &Services) -> OtpDeps<'_> {
    OtpDeps {
        store: services.ctx.store.otp(),
        mailer: services.mailer.as_ref(),
        clock: services.ctx.clock.as_ref(),
        random: &services.ctx.random,
        limiter: services.limiter(),
    }
}

/// `POST /oauth2/v0/otp` from an authenticated client. Empty fields count as absent.
#[derive(Debug, Clone)]
pub struct OtpRequest {
    pub client_id: ClientId,
    /// The client's name, shown in the mail.
    pub app_name: String,
    pub channel_type: Option<String>,
    pub channel_handle: Option<String>,
    pub facts: OtpFacts,
    /// The origins (`scheme://host[:port]`) a `link` may point to: the client's registered
    /// redirect URIs and Connect URL. A link elsewhere would let anyone holding the client's
    /// credentials mail a clickable address of their choosing under this service's name.
    pub link_origins: Vec<String>,
}

/// `grant_type=otp` from an authenticated client.
#[derive(Debug, Clone)]
pub struct OtpVerification {
    pub client_id: ClientId,
    pub otp: Option<Secret>,
    pub channel_type: Option<String>,
    pub channel_handle: Option<String>,
    pub facts: OtpFacts,
}

/// Validates the channel (57, 58, 80, 81), enforces the cap (82), mails a new password, and
/// stores its hash. Whether a user has the address is never looked at, so the answer ("otp
/// sent") is the same for every address.
///
/// The mail is sent before the record is stored: a record exists only for a password that was
/// mailed. Storing first and deleting on a failed send would leave an open, guessable password
/// behind whenever the delete fails or the process dies mid-send (a Lambda timeout), and a send
/// that fails ambiguously (the server took the mail, the reply was lost) is no safer either way.
/// The cost of this order is benign: if the store write fails after the send, the mailed
/// password redeems nothing (83) and the caller, answered 503, asks again.
pub async fn request_otp(deps: OtpDeps<'_>, request: OtpRequest) -> Result<(), OtpError> {
    let handle = parse_channel(
        request.channel_type.as_deref(),
        request.channel_handle.as_deref(),
    )?;
    if let Some(link) = request.facts.link.as_deref().filter(|l| !l.is_empty()) {
        if !link_is_registered(link, &request.link_origins) {
            return Err(OtpDenial::LinkNotRegistered.into());
        }
    }
    let address = handle.key();
    let now = deps.clock.now();
    deps.limiter
        .count(
            Limit::ClientOtpRequests,
            &request.client_id.to_string(),
            now,
        )
        .await?;
    let recent = deps
        .store
        .count_otp_requests(&address, &request.client_id, now - REQUEST_WINDOW_SECONDS)
        .await?;
    if recent >= MAX_OPEN_REQUESTS {
        return Err(OtpDenial::TooManyOpenRequests.into());
    }
    // The count above is a read: requests in parallel would all pass it. This counter is the
    // atomic part of the cap (at most five requests per address and client in a fixed window,
    // whatever runs in parallel); the count keeps consumed passwords from counting.
    let open_key = open_requests_key(&address, &request.client_id);
    if let Hit::Refused { .. } = deps
        .limiter
        .store
        .count_hit(&open_key, OPEN_CAP, now)
        .await?
    {
        return Err(OtpDenial::TooManyOpenRequests.into());
    }

    let password = OneTimePassword::generate(deps.random.as_ref());
    let hash = hash_password(&password, deps.random).await?;
    let facts = request.facts.hash();
    let mail = OtpMail {
        to: handle,
        app_name: request.app_name,
        link: request.facts.link.filter(|link| !link.is_empty()),
        password,
    };
    deps.mailer.send(&mail).await.map_err(|error| {
        ServerError::unavailable_because("the one-time password was not mailed", error)
    })?;

    let record = OtpRecord {
        id: OtpId(deps.random.uuid()),
        address,
        client_id: request.client_id,
        password: hash,
        facts,
        created_at: now,
        expires_at: now + OTP_TTL_SECONDS,
        tries_left: OTP_TRIES,
        consumed: false,
    };
    deps.store.create_otp(&record).await?;
    Ok(())
}

/// Checks, in order: 56, 57, 58, 80, 81; 143 (this client's guesses at this address are
/// blocked); 83 (no open password of this client for this address);
/// spends a try; 85 (wrong password; the fifth try closes the record); 84 (facts differ: the try
/// stays spent); asks `find_user` for the address's user (55 if none, the password consumed);
/// consumes the record (a lost race is 83) and answers the user to start a family for.
pub async fn verify_otp<U, F, Fut>(
    deps: OtpDeps<'_>,
    verification: OtpVerification,
    find_user: F,
) -> Result<U, OtpError>
where
    F: FnOnce(ChannelHandle) -> Fut,
    Fut: Future<Output = StoreResult<Option<U>>>,
{
    let verified = check_otp(deps, verification, find_user).await?;
    verified.consume(deps).await?;
    Ok(verified.user)
}

/// A password that passed [`check_otp`], for an address that has a user, and is still open.
pub struct VerifiedOtp<U> {
    pub user: U,
    record: OtpRecord,
}

impl<U> VerifiedOtp<U> {
    /// When the password was sent.
    pub fn issued_at(&self) -> crate::clock::UnixTime {
        self.record.created_at
    }

    /// Consumes the password; 83 if a concurrent redemption consumed it first (or it expired).
    pub async fn consume(&self, deps: OtpDeps<'_>) -> Result<(), OtpError> {
        consume(deps, &self.record).await
    }
}

async fn consume(deps: OtpDeps<'_>, record: &OtpRecord) -> Result<(), OtpError> {
    if !deps.store.consume_otp(record, deps.clock.now()).await? {
        return Err(OtpDenial::OtpNotFound.into());
    }
    // Best effort: the password is consumed and what it grants is written; a refund that fails
    // only leaves the address's cap one request tighter until the window ends.
    let open_key = open_requests_key(&record.address, &record.client_id);
    if let Err(error) = deps
        .limiter
        .store
        .refund_hit(&open_key, OPEN_CAP, record.created_at)
        .await
    {
        tracing::warn!(%error, "one-time password consumed; its open-request count was not given back");
    }
    Ok(())
}

/// [`verify_otp`] without its last step: the caller consumes the password
/// ([`VerifiedOtp::consume`]) once what it grants is written, so that a store failure in between
/// leaves the password open for the client's retry (docs/decisions.md, "Store unavailable (503) and
/// lost answers").
pub async fn check_otp<U, F, Fut>(
    deps: OtpDeps<'_>,
    verification: OtpVerification,
    find_user: F,
) -> Result<VerifiedOtp<U>, OtpError>
where
    F: FnOnce(ChannelHandle) -> Fut,
    Fut: Future<Output = StoreResult<Option<U>>>,
{
    let presented = verification
        .otp
        .filter(|otp| !otp.expose().trim().is_empty())
        .ok_or(OtpDenial::OtpMissing)?;
    let handle = parse_channel(
        verification.channel_type.as_deref(),
        verification.channel_handle.as_deref(),
    )?;
    let now = deps.clock.now();
    let guesser = address_of_client(&handle.key(), &verification.client_id);
    deps.limiter.check_otp_block(&guesser, now).await?;
    // A password mailed at one client's request is no use to another client.
    let record = deps
        .store
        .find_open_otp(&handle.key(), &verification.client_id, now)
        .await?
        .ok_or(OtpDenial::OtpNotFound)?;

    if deps.store.spend_otp_try(&record, now).await?.is_none() {
        return Err(OtpDenial::OtpNotFound.into());
    }
    let hash = record.password.clone();
    if !blocking(move || hash.verify(&presented)).await? {
        deps.limiter.count_otp_failure(&guesser, now).await?;
        return Err(OtpDenial::OtpVerificationFailed.into());
    }
    if verification.facts.hash() != record.facts {
        return Err(OtpDenial::FactVerificationFailed.into());
    }
    match find_user(handle).await? {
        Some(user) => Ok(VerifiedOtp { user, record }),
        None => {
            // The password was right: it is used up although no user has the address.
            consume(deps, &record).await?;
            Err(OtpDenial::UnknownEmail.into())
        }
    }
}

/// 57, 58, 80, 81, in that order: first what is missing, then what is wrong.
fn parse_channel(
    channel_type: Option<&str>,
    channel_handle: Option<&str>,
) -> Result<ChannelHandle, OtpError> {
    let channel_type = present(channel_type).ok_or(OtpDenial::ChannelTypeMissing)?;
    let channel_handle = present(channel_handle).ok_or(OtpDenial::ChannelHandleMissing)?;
    if channel_type.trim() != EMAIL_CHANNEL {
        return Err(OtpDenial::InvalidChannelType.into());
    }
    ChannelHandle::parse(channel_handle).map_err(|_| OtpDenial::BadChannelHandle.into())
}

/// Whether `link` is an absolute `https` URL (or `http` on a loopback host, as registered
/// redirect URIs may be) whose origin is one of `origins`.
fn link_is_registered(link: &str, origins: &[String]) -> bool {
    let Ok(url) = url::Url::parse(link) else {
        return false;
    };
    if !matches!(url.scheme(), "https" | "http") || !url.username().is_empty() {
        return false;
    }
    let origin = url.origin().ascii_serialization();
    origins.contains(&origin)
}

/// The origins of a client's registered addresses, for [`OtpRequest::link_origins`].
pub fn registered_origins<'a>(addresses: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    addresses
        .into_iter()
        .filter_map(|address| url::Url::parse(address).ok())
        .filter(|url| matches!(url.scheme(), "https" | "http"))
        .map(|url| url.origin().ascii_serialization())
        .collect()
}

/// Empty and blank values count as absent.
fn present(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.trim().is_empty())
}

/// Argon2id on a blocking task, off the async workers.
async fn hash_password(
    password: &OneTimePassword,
    random: &Arc<dyn RandomSource>,
) -> Result<OtpHash, OtpError> {
    let password = password.clone();
    let random = Arc::clone(random);
    blocking(move || OtpHash::new(&password, random.as_ref())).await
}

/// Runs slow hashing off the async workers; a panicked task is an internal failure (500).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, OtpError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| ServerError::internal_because("hashing task failed", join).into())
}
