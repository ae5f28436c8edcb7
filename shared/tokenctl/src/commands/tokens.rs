//! `tokens revoke-family`.

use serde_json::json;
use token_core::admin;
use token_core::context::Context;

use crate::args::TokensCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: TokensCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        TokensCommand::RevokeFamily { family_id } => {
            admin::revoke_family(ctx, &family_id).await?;
            Ok(Output::new(
                json!({ "family_id": family_id, "revoked": true }),
                format!(
                    "Token family {family_id} is revoked: its refresh and access tokens no longer work."
                ),
            ))
        }
    }
}
