//! Process start-up shared by the three functions, the local server and the admin tool:
//! configuration, store, signing keys.

use std::sync::Arc;
use std::time::Instant;

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::context::Context;
use crate::jwt::AccessTokenCodec;
use crate::mail::{mailer_from_config, MailConfig};
use crate::services::Services;
use crate::signing::SigningKeys;

pub async fn services(config: &Config) -> anyhow::Result<Arc<Services>> {
    if !config.metrics {
        crate::measure::switch_off();
    }
    // The cache and the services share one clock, so the cache's bound is the clock's time.
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let started = Instant::now();
    // The mail configuration (possibly a Secrets Manager read) needs nothing from the store or
    // the keys: it is read while they are.
    let store_and_keys = async {
        let store = crate::store::open(config).await?;
        let store = crate::store::cached::wrap(store, clock.clone(), config.read_cache_seconds);
        let store_opened = Instant::now();
        let keys = Box::pin(SigningKeys::from_config(config, clock.clone())).await?;
        anyhow::Ok((store, store_opened, keys, Instant::now()))
    };
    let mail = async {
        let mail = MailConfig::load(config).await;
        (mail, Instant::now())
    };
    // Boxed: side by side, the two futures would make every binary's `main` future too large.
    let (store_and_keys, (mail, mail_read)) =
        tokio::join!(Box::pin(store_and_keys), Box::pin(mail));
    let (store, store_opened, keys, keys_read) = store_and_keys?;
    let mail = mail?;
    let codec = AccessTokenCodec::new(keys, config.geolocation.clone());
    // Once per instance: the cold start's own parts, which docs/benchmarks.md reports (the key
    // ring's read is a store read and, for sealed keys, their unsealing).
    let millis = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
    tracing::info!(
        store_ms = millis(started, store_opened),
        signing_keys_ms = millis(store_opened, keys_read),
        mail_ms = millis(started, mail_read),
        "services ready"
    );
    Ok(Arc::new(
        Services::new(
            Context::new(store).with_clock(clock),
            codec,
            config.policy.clone(),
        )
        .with_mailer(mailer_from_config(&mail)?),
    ))
}
