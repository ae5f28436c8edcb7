//! `keys rotate`, `keys list`, `keys revoke` and `keys adopt`: the stored signing key ring (see
//! `token_core::signing`).

use std::sync::Arc;

use serde_json::json;
use token_adapters::secrets::signing_secret;
use token_core::config::Config;
use token_core::signing::revocation;
use token_core::signing::ring::Plan;
use token_core::signing::rotation::{self, ListedKey};
use token_core::signing::KeyRingDocument;
use token_domain::clock::{Clock, SystemClock};

use crate::args::KeysCommand;
use crate::error::{CliError, Failure};
use crate::output::Output;

pub async fn run(command: KeysCommand, config: &Config) -> Result<Output, CliError> {
    let legacy = KeyRingDocument::load(
        signing_secret(config.signing.secret_arn.as_ref()).as_ref(),
        &config.data_dir,
    )
    .await?;
    let store = token_store::open_signing_key_ring(&config.store_location()).await?;
    match command {
        KeysCommand::List => {
            let keys = rotation::list(store.as_ref(), &legacy).await?;
            let text = keys.iter().map(describe).collect::<Vec<_>>().join("\n");
            Ok(Output::list(json!(keys), text))
        }
        KeysCommand::Revoke { kid } => {
            let backend = token_adapters::bootstrap::signing_backend(&config.signing).await;
            let factory = backend.factory(&legacy.server_secret()?);
            let done =
                revocation::revoke(store.as_ref(), &factory, &legacy, &kid, SystemClock.now())
                    .await?;
            let active = done.ring.active().ok().map(|k| k.kid.clone());
            token_core::audit::key_revoked(&config.store_location(), &kid, active.as_deref()).await;
            let summary = json!({
                "revoked": kid,
                "was": done.was,
                "version": done.version,
                "active": active,
                "next": done.ring.next_key().map(|k| k.kid.clone()),
            });
            Ok(Output::new(
                summary,
                format!(
                    "Revoked {kid}; {} signs. Running services stop publishing it within two \
                     minutes, relying parties once their cached JWK Set expires.",
                    active.unwrap_or_default()
                ),
            ))
        }
        KeysCommand::Adopt => match revocation::adopt(store.as_ref(), &legacy).await? {
            Some(version) => Ok(Output::new(
                json!({ "version": version }),
                format!("The stored key ring is trusted as it is (version {version})."),
            )),
            None => Err(CliError::new(
                Failure::NotFound,
                "the table holds no signing key ring to adopt".to_owned(),
            )),
        },
        KeysCommand::Rotate => {
            let backend = token_adapters::bootstrap::signing_backend(&config.signing).await;
            let factory = backend.factory(&legacy.server_secret()?);
            let clock: Arc<dyn Clock> = Arc::new(SystemClock);
            let done = rotation::rotate(store.as_ref(), &factory, &legacy, clock.now()).await?;
            let next = done.ring.next_key().map(|k| k.kid.clone());
            let active = done.ring.active().ok().map(|k| k.kid.clone());
            if !matches!(done.plan, Plan::NotDue { .. }) {
                token_core::audit::key_rotated(
                    &config.store_location(),
                    active.as_deref(),
                    next.as_deref(),
                )
                .await;
            }
            let summary = json!({
                "version": done.version,
                "active": active,
                "next": next,
            });
            match done.plan {
                Plan::NotDue {
                    next_kid,
                    eligible_at,
                } => Err(CliError::new(
                    Failure::Conflict,
                    format!(
                        "not rotated: the next key {next_kid} has not been published long enough \
                         for cached JWK Sets to hold it; it may become active from {eligible_at} \
                         (Unix time)"
                    ),
                )),
                Plan::AddNext => Ok(Output::new(
                    summary,
                    format!(
                        "Published the next signing key {}; {} still signs. Rotate again after \
                         the next key has been published long enough to make it active.",
                        next.unwrap_or_default(),
                        active.unwrap_or_default()
                    ),
                )),
                Plan::Promote => Ok(Output::new(
                    summary,
                    format!(
                        "{} signs now; {} is the next key. Running services follow within a \
                         minute.",
                        active.unwrap_or_default(),
                        next.unwrap_or_default()
                    ),
                )),
            }
        }
    }
}

fn describe(key: &ListedKey) -> String {
    let mut line = format!("{} {:?} created {}", key.kid, key.state, key.created);
    if let Some(at) = key.activated {
        line.push_str(&format!(" activated {at}"));
    }
    if let Some(at) = key.retired {
        line.push_str(&format!(" retired {at}"));
    }
    line
}
