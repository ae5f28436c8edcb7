//! One module per noun; each verb returns what to print or why it failed.

mod audit;
mod client_secrets;
mod clients;
mod companies;
mod factors;
mod id_jag_targets;
mod idps;
mod keys;
mod legacy;
mod registration_tokens;
mod scim_tokens;
mod sessions;
mod table;
mod tokens;
mod users;

use token_core::config::Config;

use crate::args::{Cli, Command, CompaniesCommand, FactorsCommand, IdpsCommand, UsersCommand};
use crate::error::CliError;
use crate::output::Output;
use crate::setup;

/// Appended to what changes a client, a company or its enablement: running instances serve
/// those from their read cache (`READ_CACHE_SECONDS`, see `token_store::cached`).
fn cache_delay_note() -> String {
    format!(
        "Running instances may take up to {} seconds to see this.",
        token_store::cached::MAX_TTL_SECONDS
    )
}

pub async fn run(cli: Cli, config: Config) -> Result<Output, CliError> {
    match cli.command {
        // These two work on the configuration itself, not through the admin operations.
        Command::Table(command) => table::run(command, &config).await,
        Command::Keys(command) => keys::run(command, &config).await,
        // Ending a session signs logout tokens: the whole service, keys included.
        Command::Sessions(command) => sessions::run(command, &config).await,
        // These end sessions or mail the user: the services too.
        Command::Users(UsersCommand::SetStatus(args)) => users::set_status(args, &config).await,
        Command::Users(UsersCommand::Factors(FactorsCommand::Remove { user_id, factor_id })) => {
            factors::remove(&user_id, &factor_id, &config).await
        }
        // Sealing an IdP's client secret needs the key ring; removing one ends sessions.
        Command::Companies(CompaniesCommand::Idps(IdpsCommand::Add(args))) => {
            idps::add(args, &config).await
        }
        Command::Companies(CompaniesCommand::Idps(IdpsCommand::Remove { idp_id })) => {
            idps::remove(idp_id, &config).await
        }
        Command::Companies(CompaniesCommand::Idps(IdpsCommand::Refresh {
            idp_id,
            metadata_file,
        })) => idps::refresh(idp_id, metadata_file, &config).await,
        // Provisioning reads and changes users as the SCIM function does.
        Command::Companies(CompaniesCommand::ScimTokens(command)) => {
            scim_tokens::run(command, &config).await
        }
        Command::Companies(CompaniesCommand::SetAdminGroup {
            company_id,
            name,
            none: _,
        }) => scim_tokens::set_admin_group(company_id, name, &config).await,
        command => {
            let ctx = setup::context(&config).await?;
            match command {
                Command::Clients(command) => clients::run(command, &ctx).await,
                Command::Companies(command) => companies::run(command, &ctx, &config).await,
                Command::Users(command) => users::run(command, &ctx, &config).await,
                Command::LegacyApps(command) => legacy::run_apps(command, &ctx).await,
                Command::LegacyTokens(command) => legacy::run_tokens(command, &ctx).await,
                Command::Tokens(command) => tokens::run(command, &ctx).await,
                Command::RegistrationTokens(command) => {
                    registration_tokens::run(command, &ctx).await
                }
                Command::Audit(args) => audit::run(&args, &ctx).await,
                Command::Table(_) | Command::Keys(_) | Command::Sessions(_) => {
                    unreachable!("handled above")
                }
            }
        }
    }
}
