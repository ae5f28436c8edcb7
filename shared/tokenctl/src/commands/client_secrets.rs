//! `clients secrets add|list|revoke`: an application's secrets (docs/decisions.md, Client
//! secrets).

use serde_json::json;
use token_core::admin;
use token_core::context::Context;
use token_domain::ListedSecret;

use crate::args::ClientSecretsCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: ClientSecretsCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        ClientSecretsCommand::Add {
            client_id,
            expires_in,
        } => {
            let added = admin::add_client_secret(ctx, &client_id, expires_in).await?;
            // Printed this once; only its digest is stored.
            let secret = added.client_secret.expose();
            let expiry = added.expires.map_or_else(
                || "It does not expire.".to_owned(),
                |at| format!("It expires at {at} (Unix time)."),
            );
            Ok(Output::new(
                json!({ "secret_id": added.secret_id, "client_secret": secret }),
                format!(
                    "Added a secret to client {client_id}.\n\
                     secret_id:     {}\n\
                     client_secret: {secret}\n\
                     {expiry} The secret is shown only this once and only its hash is stored: \
                     keep it now. {}",
                    added.secret_id,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientSecretsCommand::List { client_id } => {
            let secrets = admin::list_client_secrets(ctx, &client_id).await?;
            let text = secrets.iter().map(describe).collect::<Vec<_>>().join("\n");
            Ok(Output::list(json!(secrets), text))
        }
        ClientSecretsCommand::Revoke {
            client_id,
            secret_id,
        } => {
            admin::revoke_client_secret(ctx, &client_id, &secret_id).await?;
            Ok(Output::new(
                json!({ "client_id": client_id, "secret_id": secret_id, "revoked": true }),
                format!(
                    "Revoked secret {secret_id} of client {client_id}. {}",
                    super::cache_delay_note()
                ),
            ))
        }
    }
}

fn describe(secret: &ListedSecret) -> String {
    let mut line = format!("{} created {}", secret.secret_id, secret.created);
    match secret.expires {
        Some(at) => line.push_str(&format!(" expires {at}")),
        None => line.push_str(" never expires"),
    }
    match secret.last_used {
        Some(at) => line.push_str(&format!(" last used {at}")),
        None => line.push_str(" never used"),
    }
    line
}
