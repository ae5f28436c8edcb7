//! Process start-up shared by the three functions, the local server and the admin tool:
//! configuration, store, signing keys.
//!
//! Two ways to start (docs/decisions.md, "Lazy start-up"): [`services`] reads the key ring (and
//! checks the table) before it returns, so that a process that cannot serve says why at once;
//! [`lambda_services`] builds configuration and clients only, and the key ring's first read (the
//! table checked only if it fails) starts in a background task that the first request needing
//! the ring awaits;
//! an SMTP URL kept in Secrets Manager is read at the first mail.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};
use token_core::config::{Config, SigningKeysKind, SigningSection};
use token_core::context::Context;
use token_core::jwt::AccessTokenCodec;
use token_core::logout_delivery::{Deliverer, InProcessLogoutQueue, LogoutQueue, RetrySchedule};
use token_core::services::Services;
use token_core::signing::ring::Plan;
use token_core::signing::{self, KeyError, KeyRingDocument, SigningBackend, SigningKeys};
use token_domain::clock::{Clock, SystemClock};
use token_store::Readiness;

use crate::mail::{MailConfig, StartMail};
use crate::outbound::fetcher;
use crate::secrets::signing_secret;
use crate::sqs::SqsLogoutQueue;

/// The local server's and tokenctl's start: everything read and checked before it returns.
pub async fn services(config: &Config) -> anyhow::Result<Arc<Services>> {
    start(config, Readiness::AtStart).await
}

/// A Lambda function's init: no network read. The key ring's first read runs in a spawned
/// task; a request that needs the ring before it is done waits for it, and if it failed, reads
/// again (503 while it fails).
pub async fn lambda_services(config: &Config) -> anyhow::Result<Arc<Services>> {
    start(config, Readiness::OnFirstRingRead).await
}

async fn start(config: &Config, readiness: Readiness) -> anyhow::Result<Arc<Services>> {
    if !config.telemetry.metrics {
        token_core::measure::switch_off();
    }
    let eager = readiness == Readiness::AtStart;
    // The cache and the services share one clock, so the cache's bound is the clock's time.
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let started = Instant::now();
    // The mail configuration (possibly a Secrets Manager read) needs nothing from the store or
    // the keys: it is read while they are.
    let store_and_keys = async {
        let (store, ring_store) =
            token_store::open_with_ring(&config.store_location(), readiness).await?;
        let store =
            token_store::cached::wrap(store, clock.clone(), config.store.read_cache_seconds);
        let keys = SigningKeys::lazy(
            ring_store,
            signing_secret(config.signing.secret_arn.as_ref()),
            config.data_dir.clone(),
            signing_backend(&config.signing).await,
            clock.clone(),
        );
        let store_opened = Instant::now();
        if eager {
            keys.load().await?;
        }
        anyhow::Ok((store, store_opened, keys, Instant::now()))
    };
    let mail = async {
        let mail = if eager {
            MailConfig::load(config).await.map(StartMail::Read)
        } else {
            MailConfig::load_lazily(config)
        };
        (mail, Instant::now())
    };
    // Boxed: side by side, the two futures would make every binary's `main` future too large.
    let (store_and_keys, (mail, mail_read)) =
        tokio::join!(Box::pin(store_and_keys), Box::pin(mail));
    let (store, store_opened, keys, keys_read) = store_and_keys?;
    let mail = mail?;
    let codec = AccessTokenCodec::new(keys.clone(), config.geolocation.clone());
    // Once per instance: the cold start's own parts, which docs/benchmarks.md reports (the key
    // ring's read is a store read and, for sealed keys, their unsealing).
    let millis = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
    if eager {
        tracing::info!(
            store_ms = millis(started, store_opened),
            signing_keys_ms = millis(store_opened, keys_read),
            mail_ms = millis(started, mail_read),
            "services ready"
        );
    } else {
        tracing::info!(
            store_ms = millis(started, store_opened),
            signing_keys = "read after init",
            mail_ms = millis(started, mail_read),
            "services ready"
        );
        tokio::spawn(read_ring_after_init(keys));
    }
    let ctx = Context::new(store).with_clock(clock);
    let logout_queue = logout_queue(config, &ctx).await;
    Ok(Arc::new(
        Services::new(ctx, codec, config.policy.clone())
            .with_document_fetcher(fetcher(config.outbound_allowed_hosts.clone()))
            .with_mailer(mail.mailer()?)
            .with_logout_queue(logout_queue),
    ))
}

/// The `logout-delivery` function's start: its store opened without the warm-up read (its role
/// may only write audit events) and the outbound rules of the configuration.
pub async fn logout_deliverer(config: &Config) -> anyhow::Result<Deliverer> {
    let store = token_store::open_cold(&config.store_location()).await?;
    Ok(Deliverer::new(
        Context::new(store),
        fetcher(config.outbound_allowed_hosts.clone()),
    ))
}

/// SQS when the template names a queue (the token function: nothing runs in a Lambda function
/// after its answer); otherwise this process's own background tasks.
async fn logout_queue(config: &Config, ctx: &Context) -> Arc<dyn LogoutQueue> {
    let queue = &config.queue;
    match &queue.logout_queue_url {
        Some(url) => Arc::new(SqsLogoutQueue::connect(url, queue.sqs_endpoint.as_deref()).await),
        None => Arc::new(InProcessLogoutQueue::new(
            Deliverer::new(ctx.clone(), fetcher(config.outbound_allowed_hosts.clone())),
            RetrySchedule::production(),
        )),
    }
}

/// The key ring's first read, in the background of a Lambda function: it is also the table
/// check on DynamoDB Local and, deployed, the connection's warm-up. A failure is only logged:
/// the first request that needs the ring reads it again.
async fn read_ring_after_init(keys: SigningKeys) {
    let started = Instant::now();
    let outcome = keys.load().await;
    let signing_keys_ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(_) => tracing::info!(signing_keys_ms, "signing key ring read after init"),
        Err(error) => tracing::warn!(
            %error,
            signing_keys_ms,
            "signing key ring not read after init; the next request that needs it reads again"
        ),
    }
}

/// The configured place of the private keys; with KMS, its client (built, nothing sent).
pub async fn signing_backend(signing: &SigningSection) -> SigningBackend {
    match signing.keys {
        SigningKeysKind::Local => SigningBackend::Local,
        SigningKeysKind::Kms => SigningBackend::Kms(
            crate::kms::connect(signing.kms_endpoint.as_deref(), &signing.key_ring_name).await,
        ),
    }
}

/// The scheduled rotation (the key rotation function, invoked by an EventBridge schedule): one
/// rotation step. A rotation that is not due (the `next` key too recent: a retried or doubled
/// invocation) is a success that changes nothing.
pub async fn rotate_keys(config: &Config) -> Result<Value, KeyError> {
    let legacy = KeyRingDocument::load(
        signing_secret(config.signing.secret_arn.as_ref()).as_ref(),
        &config.data_dir,
    )
    .await?;
    let store = token_store::open_signing_key_ring(&config.store_location()).await?;
    let backend = signing_backend(&config.signing).await;
    let factory = backend.factory(&legacy.server_secret()?);
    let done =
        signing::rotation::rotate(store.as_ref(), &factory, &legacy, SystemClock.now()).await?;
    let outcome = match &done.plan {
        Plan::AddNext => json!({ "outcome": "next key published" }),
        Plan::Promote => json!({ "outcome": "rotated" }),
        Plan::NotDue {
            next_kid,
            eligible_at,
        } => json!({ "outcome": "not due", "next": next_kid, "eligible_at": eligible_at }),
    };
    tracing::info!(%outcome, version = ?done.version, "signing key rotation");
    if !matches!(done.plan, Plan::NotDue { .. }) {
        let active = done.ring.active().ok().map(|k| k.kid.as_str());
        token_core::audit::key_rotated(
            &config.store_location(),
            active,
            done.ring.next_key().map(|k| k.kid.as_str()),
        )
        .await;
    }
    Ok(json!({
        "result": outcome,
        "version": done.version,
        "active": done.ring.active().ok().map(|k| k.kid.clone()),
        "next": done.ring.next_key().map(|k| k.kid.clone()),
    }))
}
