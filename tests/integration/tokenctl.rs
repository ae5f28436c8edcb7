//! `tokenctl`, run as the operator runs it: the built binary as a separate process, configured
//! through the environment, against the embedded SQLite store and against DynamoDB Local. Every
//! verb is checked for its exit status, its output, and what it left in the store (read back
//! through a store the test opens on the same file or table).
//!
//! The binary is built once per test run (`cargo build --workspace --all-targets`, a debug
//! build, a no-op after `infra/test.sh`'s own build): binaries of another package are not built
//! by `cargo test`.
//! `TOKENCTL_BIN=path` runs an existing binary instead.
//!
//! The million-line import is `#[ignore]`d (about a minute in a debug build); run it with
//! `cargo test -p integration-tests --test integration tokenctl -- --ignored --nocapture`, or
//! measure with `infra/bench-import.sh`.
//!
//! [`target`] runs the tool and [`output`] checks what a run printed; the other modules hold
//! one subject each.

mod audit;
mod client_secrets;
mod clients;
mod companies;
mod configuration;
mod factors;
mod id_jag;
mod idps;
mod import_file;
mod jwks;
mod keys;
mod legacy_apps;
mod legacy_import;
mod newer_options;
pub(crate) mod output;
mod public_clients;
mod saml_idps;
mod scim_tokens;
mod secrets;
mod sessions;
mod status;
pub(crate) mod target;
mod tokens;
mod user_links;
mod users;

use audit::audit_verb;
use keys::retired_keys_are_listed_then_removed;
use legacy_import::legacy_token_import;
use public_clients::public_clients;
use sessions::sessions_list_and_revoke;
use target::Target;

/// Runs each listed `async fn(Target)` on a SQLite file and on a DynamoDB Local table, as
/// `sqlite::<name>` and `dynamodb::<name>`; with `SKIP_DYNAMODB=1` the DynamoDB ones are listed
/// as ignored (see `tests/build.rs`).
macro_rules! on_both_targets {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test(super::Target::sqlite().await).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                async fn $test() {
                    if let Some(target) = super::Target::dynamodb().await {
                        super::$test(target).await;
                    }
                }
            )*
        }
    };
}

on_both_targets!(
    audit_verb,
    every_admin_verb,
    client_and_user_options,
    client_jwks,
    client_secrets,
    company_idps,
    client_id_jag_targets,
    company_saml_idps,
    company_scim_tokens,
    company_sso,
    legacy_token_import,
    public_clients,
    retired_keys_are_listed_then_removed,
    sessions_verbs,
    user_factors,
    user_federation,
    user_status
);

/// `clients id-jag-targets add|list|remove` and `companies set-id-jag`.
async fn client_id_jag_targets(t: Target) {
    id_jag::targets_and_switch(&t).await;
}

/// `companies idps add|list|show|remove`.
async fn company_idps(t: Target) {
    idps::add_list_show_remove(&t).await;
}

/// `companies idps add --saml` and `companies idps refresh`.
async fn company_saml_idps(t: Target) {
    saml_idps::add_show_refresh(&t).await;
}

/// `companies scim-tokens create|list|revoke` and `companies set-admin-group`.
async fn company_scim_tokens(t: Target) {
    scim_tokens::create_list_revoke(&t).await;
}

/// `companies set-sso` and `users set-local-sign-in`, with the service on the same store.
async fn company_sso(t: Target) {
    idps::sso_and_local_sign_in(&t).await;
}

/// `users set-external-id`, `users links`, `users unlink`.
async fn user_federation(t: Target) {
    user_links::external_ids_and_links(&t).await;
}

async fn sessions_verbs(t: Target) {
    sessions_list_and_revoke(&t).await;
}

/// `users factors list|remove`, with the service on the same store.
async fn user_factors(t: Target) {
    factors::list_and_remove(&t).await;
}

/// `users set-status`, with the service on the same store.
async fn user_status(t: Target) {
    status::set_status(&t).await;
}

/// The service on the tool's own store, so that a test signs in and uses tokens around the
/// tool's changes (no read cache: what the tool writes, the service reads at once).
async fn app_on(t: &Target) -> crate::support::app::TestApp {
    let backend = match t.backend {
        target::Backend::Sqlite => crate::support::app::Backend::Sqlite,
        target::Backend::Dynamo(_) => crate::support::app::Backend::DynamoDb,
    };
    let options = crate::support::app::AppOptions::default();
    crate::support::app::TestApp::with_store(t.store.clone(), backend, options).await
}

/// `clients create --jwks-file` and `clients set-jwks`.
async fn client_jwks(t: Target) {
    jwks::client_jwks(&t).await;
}

/// `clients secrets`: add, list, revoke, and a record of before several secrets.
async fn client_secrets(t: Target) {
    client_secrets::add_list_revoke(&t).await;
    client_secrets::an_old_record_lists_as_one_secret_and_migrates(&t).await;
}

/// Applications, companies, users, legacy apps and token families, in the order an operator
/// sets a deployment up; one session, so that its transcript covers every verb.
async fn every_admin_verb(t: Target) {
    let clients = clients::create(&t).await;
    let (company_id, eu_id) = companies::create(&t).await;
    companies::enable_client(&t, company_id, eu_id, clients.partner).await;
    companies::set_status(&t, company_id).await;
    companies::set_mfa(&t, company_id).await;
    let user_id = users::create(&t, company_id).await;
    legacy_apps::link_and_relink(&t, clients.partner, clients.other).await;
    tokens::revoke_family(&t, clients.partner, user_id).await;
    clients::disable(&t, &clients).await;
    secrets::printed_only_at_creation(&t, &clients);
}

/// The client and user options beyond the first verbs, each read back from the store.
async fn client_and_user_options(t: Target) {
    newer_options::client_options(&t).await;
    newer_options::backchannel_logout_uri(&t).await;
    newer_options::clients_list(&t).await;
    newer_options::client_resources(&t).await;
    newer_options::user_emails(&t).await;
}
