//! `clients id-jag-targets add|list|remove`: where an application may ask identity assertions
//! (ID-JAG) for (docs/decisions.md, "Identity assertion grants").

use serde_json::{json, Value};
use token_core::admin;
use token_core::context::Context;
use token_domain::IdJagTarget;

use crate::args::IdJagTargetsCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: IdJagTargetsCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        IdJagTargetsCommand::Add {
            client_id,
            audience,
            target_client_id,
            resources,
            scopes,
        } => {
            let target = IdJagTarget {
                audience,
                client_id: target_client_id,
                resources,
                scopes,
            };
            let client = admin::add_id_jag_target(ctx, &client_id, target.clone()).await?;
            Ok(Output::new(
                json!({ "client_id": client.id, "target": shown(&target) }),
                format!(
                    "Client {} may ask identity assertions for {} (as client {}). {}",
                    client.id,
                    target.audience,
                    target.client_id,
                    super::cache_delay_note()
                ),
            ))
        }
        IdJagTargetsCommand::List { client_id } => {
            let client = admin::existing_client(ctx, &client_id).await?;
            let targets: Vec<Value> = client.id_jag_targets.iter().map(shown).collect();
            let text = if targets.is_empty() {
                format!("Client {client_id} has no identity assertion target.")
            } else {
                client
                    .id_jag_targets
                    .iter()
                    .map(describe)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok(Output::list(json!(targets), text))
        }
        IdJagTargetsCommand::Remove {
            client_id,
            audience,
        } => {
            admin::remove_id_jag_target(ctx, &client_id, &audience).await?;
            Ok(Output::new(
                json!({ "client_id": client_id, "audience": audience, "removed": true }),
                format!(
                    "Client {client_id} may no longer ask identity assertions for {audience}; \
                     those issued expire within five minutes. {}",
                    super::cache_delay_note()
                ),
            ))
        }
    }
}

fn shown(target: &IdJagTarget) -> Value {
    json!({
        "audience": target.audience,
        "client_id": target.client_id,
        "resources": target.resources.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "scopes": target.scopes.as_ref().map(ToString::to_string),
    })
}

fn describe(target: &IdJagTarget) -> String {
    let resources = if target.resources.is_empty() {
        "any".to_owned()
    } else {
        let names: Vec<String> = target.resources.iter().map(ToString::to_string).collect();
        names.join(",")
    };
    let scopes = target
        .scopes
        .as_ref()
        .map_or_else(|| "any".to_owned(), ToString::to_string);
    format!(
        "{}  client_id={}  resources={resources}  scopes={scopes}",
        target.audience, target.client_id
    )
}
