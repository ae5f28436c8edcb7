//! `registration-tokens create`: initial access tokens of dynamic client registration.

use serde_json::json;
use token_core::context::Context;
use token_core::flows::registration::create_initial_access_token;
use token_domain::audit::rfc3339;

use crate::args::RegistrationTokensCommand;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: RegistrationTokensCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        RegistrationTokensCommand::Create { expires_in } => {
            let (token, expires) = create_initial_access_token(ctx, expires_in).await?;
            // The only place the token is ever printed; the store has its hash.
            let token = token.expose();
            let expires = rfc3339::format(expires);
            Ok(Output::new(
                json!({ "token": token, "expires": expires }),
                format!(
                    "Initial access token (shown only this once; only its hash is stored):\n\
                     {token}\nexpires: {expires}"
                ),
            ))
        }
    }
}
