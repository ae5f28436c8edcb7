//! `users create`, `users set-email`, `users set-status`; `users factors` is in `factors`, the
//! federation verbs (`set-local-sign-in`, `set-external-id`, `links`, `unlink`) in `idps`.

use std::io::BufRead;

use serde_json::json;
use token_core::admin::{self, NewUser};
use token_core::config::Config;
use token_core::context::Context;
use token_domain::secrets::Secret;
use token_domain::UserStatus;

use crate::args::{FactorsCommand, UsersCommand, UsersCreate, UsersSetEmail, UsersSetStatus};
use crate::error::CliError;
use crate::output::Output;

pub async fn run(
    command: UsersCommand,
    ctx: &Context,
    config: &Config,
) -> Result<Output, CliError> {
    match command {
        UsersCommand::Create(args) => create(args, ctx, config).await,
        UsersCommand::SetEmail(args) => set_email(args, ctx).await,
        UsersCommand::Factors(FactorsCommand::List { user_id }) => {
            super::factors::list(&user_id, ctx).await
        }
        UsersCommand::SetLocalSignIn(args) => super::idps::set_local_sign_in(args, ctx).await,
        UsersCommand::SetExternalId(args) => super::idps::set_external_id(args, ctx).await,
        UsersCommand::Links { user_id } => super::idps::links(&user_id, ctx).await,
        UsersCommand::Unlink { user_id, idp_id } => {
            super::idps::unlink(&user_id, &idp_id, ctx).await
        }
        UsersCommand::Factors(FactorsCommand::Remove { .. }) | UsersCommand::SetStatus(_) => {
            unreachable!("handled with the services")
        }
    }
}

/// Ending the user's sessions signs logout tokens: the whole service, keys included, as for
/// `sessions revoke`.
pub async fn set_status(args: UsersSetStatus, config: &Config) -> Result<Output, CliError> {
    let services = crate::setup::services(config).await?;
    let outcome = admin::set_user_status(&services, &args.user_id, args.status.into()).await;
    // Without a queue service (LOGOUT_QUEUE_URL), this process delivers the logout tokens of
    // whatever sessions it ended, even when it then failed: it stays until each delivery ends.
    services.logout_queue.drain().await;
    let done = outcome?;
    let user = &done.user;
    let status = user.status.as_str();
    let effect = if user.status == UserStatus::Active {
        "it may sign in again (nothing ended before is revived)".to_owned()
    } else {
        format!(
            "{} sign-in session(s) ended and {} token family(ies) revoked",
            done.sessions_ended, done.families_revoked
        )
    };
    Ok(Output::new(
        json!({
            "user_id": user.id,
            "status": status,
            "sessions_ended": done.sessions_ended,
            "families_revoked": done.families_revoked,
        }),
        format!(
            "User {} ({}) is now {status}: {effect}. {}",
            user.id,
            user.login,
            super::cache_delay_note()
        ),
    ))
}

async fn set_email(args: UsersSetEmail, ctx: &Context) -> Result<Output, CliError> {
    let user = admin::set_user_email(ctx, &args.user_id, &args.address).await?;
    let email = user.email.unwrap_or_default();
    Ok(Output::new(
        json!({ "user_id": user.id, "email": email }),
        format!("User {} now has the address {email}.", user.id),
    ))
}

async fn create(args: UsersCreate, ctx: &Context, config: &Config) -> Result<Output, CliError> {
    let password = match args.password {
        Some(password) => Secret::new(password),
        None => read_password_line()?,
    };
    let new = NewUser {
        login: args.login,
        password,
        company_id: args.company,
        is_admin: args.admin,
        geolocation: args
            .geolocation
            .unwrap_or_else(|| config.geolocation.clone()),
        status: args.status.into(),
        email: args.email,
    };
    let user = admin::create_user(ctx, new).await?;
    let role = match (&user.company_id, user.is_admin) {
        (Some(company), true) => format!(", administrator of company {company}"),
        (Some(company), false) => format!(", member of company {company}"),
        (None, _) => String::new(),
    };
    Ok(Output::new(
        json!({
            "user_id": user.id,
            "login": user.login,
            "company_id": user.company_id,
            "admin": user.is_admin,
            "geolocation": user.geolocation,
            "status": user.status.as_str(),
            "email": user.email,
        }),
        format!(
            "Created user {} ({}{role}).\nuser_id: {}",
            user.login,
            user.status.as_str(),
            user.id
        ),
    ))
}

/// `--password-stdin`: the first line of standard input, without its line ending.
fn read_password_line() -> Result<Secret, CliError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::other(format!("reading the password from standard input: {e}")))?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    Ok(Secret::new(password))
}
