//! `companies scim-tokens create|list|revoke` and `companies set-admin-group`.

use serde_json::json;
use token_core::admin;
use token_core::config::Config;
use token_domain::PrincipalId;

use crate::args::ScimTokensCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: ScimTokensCommand, config: &Config) -> Result<Output, CliError> {
    let ctx = crate::setup::context(config).await?;
    match command {
        ScimTokensCommand::Create {
            company_id,
            expires_in,
        } => {
            let created = admin::create_provisioning_token(&ctx, &company_id, expires_in).await?;
            let expires = created.record.expires_at;
            Ok(Output::new(
                json!({
                    "token": created.token,
                    "token_id": created.record.id,
                    "expires": expires,
                }),
                format!(
                    "Provisioning token for company {company_id} (shown once, keep it secret):\n{}\n\
                     token_id: {}\nexpires:  {}",
                    created.token,
                    created.record.id,
                    expires.map_or_else(|| "never (until revoked)".to_owned(), |at| at.to_string()),
                ),
            ))
        }
        ScimTokensCommand::List { company_id } => {
            let tokens = admin::list_provisioning_tokens(&ctx, &company_id).await?;
            let rows: Vec<_> = tokens
                .iter()
                .map(|token| {
                    json!({
                        "token_id": token.id,
                        "created_at": token.created_at,
                        "expires": token.expires_at,
                    })
                })
                .collect();
            let text = if tokens.is_empty() {
                format!("Company {company_id} has no provisioning token.")
            } else {
                tokens
                    .iter()
                    .map(|token| format!("{}  created {}", token.id, token.created_at))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok(Output::new(json!({ "tokens": rows }), text))
        }
        ScimTokensCommand::Revoke {
            company_id,
            token_id,
        } => {
            admin::revoke_provisioning_token(&ctx, &company_id, &token_id).await?;
            Ok(Output::new(
                json!({ "token_id": token_id, "revoked": true }),
                format!("Provisioning token {token_id} is revoked."),
            ))
        }
    }
}

pub async fn set_admin_group(
    company_id: PrincipalId,
    name: Option<String>,
    config: &Config,
) -> Result<Output, CliError> {
    let services = crate::setup::services(config).await?;
    admin::set_admin_group(&services, &company_id, name.as_deref()).await?;
    Ok(Output::new(
        json!({ "company_id": company_id, "admin_group": name }),
        match &name {
            Some(name) => format!("The members of group {name:?} administer company {company_id}."),
            None => format!("Company {company_id} has no admin group."),
        },
    ))
}
