//! `companies create`, `companies enable-client`, `companies set-status`, `companies set-mfa`,
//! `companies set-id-jag`;
//! `companies set-sso` and `companies idps` are in `idps`.

use serde_json::json;
use token_core::admin;
use token_core::config::Config;
use token_core::context::Context;

use crate::args::CompaniesCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(
    command: CompaniesCommand,
    ctx: &Context,
    config: &Config,
) -> Result<Output, CliError> {
    match command {
        CompaniesCommand::Create { name, geolocation } => {
            let geolocation = geolocation.unwrap_or_else(|| config.geolocation.clone());
            let company = admin::create_company(ctx, &name, geolocation).await?;
            Ok(Output::new(
                json!({
                    "company_id": company.id,
                    "name": company.name,
                    "geolocation": company.geolocation,
                    "status": company.status.as_str(),
                    "mfa": company.mfa_policy.as_str(),
                    "sso": company.sso_policy.as_str(),
                }),
                format!(
                    "Created company {:?}.\ncompany_id:  {}\ngeolocation: {}",
                    company.name, company.id, company.geolocation
                ),
            ))
        }
        CompaniesCommand::EnableClient {
            company_id,
            client_id,
        } => {
            admin::enable_company_for_client(ctx, &company_id, &client_id).await?;
            Ok(Output::new(
                json!({ "company_id": company_id, "client_id": client_id, "enabled": true }),
                format!(
                    "Company {company_id} is enabled for client {client_id}. {}",
                    super::cache_delay_note()
                ),
            ))
        }
        CompaniesCommand::SetStatus { company_id, status } => {
            let company = admin::set_company_status(ctx, &company_id, status.into()).await?;
            Ok(Output::new(
                json!({ "company_id": company.id, "status": company.status.as_str() }),
                format!(
                    "Company {} ({}) is now {}. {}",
                    company.id,
                    company.name,
                    company.status.as_str(),
                    super::cache_delay_note()
                ),
            ))
        }
        CompaniesCommand::SetSso { company_id, policy } => {
            super::idps::set_sso(&company_id, policy, ctx).await
        }
        CompaniesCommand::Idps(command) => super::idps::run(command, ctx, config).await,
        CompaniesCommand::SetIdJag { company_id, switch } => {
            let company = admin::set_company_id_jag(ctx, &company_id, switch.is_on()).await?;
            let (word, meaning) = if company.id_jag {
                (
                    "on",
                    "its users' agents may be given identity assertions for other apps",
                )
            } else {
                (
                    "off",
                    "no identity assertion is issued for its users (code 182)",
                )
            };
            Ok(Output::new(
                json!({ "company_id": company.id, "id_jag": word }),
                format!(
                    "Company {} ({}): identity assertions {word}; {meaning}. {}",
                    company.id,
                    company.name,
                    super::cache_delay_note()
                ),
            ))
        }
        CompaniesCommand::ScimTokens(_) | CompaniesCommand::SetAdminGroup { .. } => {
            unreachable!("handled with the services")
        }
        CompaniesCommand::SetMfa { company_id, policy } => {
            let company = admin::set_company_mfa(ctx, &company_id, policy.into()).await?;
            let policy = company.mfa_policy;
            let meaning = if policy.is_required() {
                "its users finish every page sign-in with a passkey or an authenticator-app code, \
                 and the password grant refuses them (code 180)"
            } else {
                "a second factor is up to each user"
            };
            Ok(Output::new(
                json!({ "company_id": company.id, "mfa": policy.as_str() }),
                format!(
                    "Company {} ({}): second factor {}; {meaning}. {}",
                    company.id,
                    company.name,
                    policy.as_str(),
                    super::cache_delay_note()
                ),
            ))
        }
    }
}
