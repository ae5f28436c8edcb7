//! Process start-up shared by the three functions, the local server and the admin tool:
//! configuration, store, signing keys.

use std::sync::Arc;

use crate::config::Config;
use crate::context::Context;
use crate::jwt::AccessTokenCodec;
use crate::mail::{mailer_from_config, MailConfig};
use crate::services::Services;
use crate::signing::KeyRing;

pub async fn services(config: &Config) -> anyhow::Result<Arc<Services>> {
    let store = crate::store::open(config).await?;
    let keys = KeyRing::load(config.signing_keys_secret_arn.as_deref(), &config.data_dir).await?;
    let codec = AccessTokenCodec::new(Arc::new(keys), config.geolocation.clone());
    let mail = MailConfig::load(config).await?;
    Ok(Arc::new(
        Services::new(Context::new(store), codec, config.policy.clone())
            .with_mailer(mailer_from_config(&mail)?),
    ))
}
