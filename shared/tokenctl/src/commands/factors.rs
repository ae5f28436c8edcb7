//! `users factors list` and `users factors remove`.

use serde_json::{json, Value};
use token_core::admin::{self, AuthenticatorApp, FactorId, UserFactors};
use token_core::config::Config;
use token_core::context::Context;
use token_domain::audit::rfc3339;
use token_domain::{PasskeyCredential, PrincipalId};

use crate::error::CliError;
use crate::output::Output;
use crate::setup;

pub async fn list(user_id: &PrincipalId, ctx: &Context) -> Result<Output, CliError> {
    let factors = admin::list_factors(ctx, user_id).await?;
    Ok(Output::new(
        json!({ "user_id": user_id, "factors": listed(&factors) }),
        text(&factors),
    ))
}

/// The user is mailed of the removal: the services' mailer, as the pages send it.
pub async fn remove(
    user_id: &PrincipalId,
    factor_id: &FactorId,
    config: &Config,
) -> Result<Output, CliError> {
    let services = setup::services(config).await?;
    admin::remove_factor(&services, user_id, factor_id).await?;
    let what = match factor_id {
        FactorId::Passkey(_) => format!("Passkey {factor_id}"),
        FactorId::AuthenticatorApp => "The authenticator app and its recovery codes".to_owned(),
    };
    Ok(Output::new(
        json!({ "user_id": user_id, "factor_id": factor_id.as_str(), "removed": true }),
        format!(
            "{what} of user {user_id} removed; the user is mailed when they have an address. \
             The user's sign-in sessions stay; `tokenctl sessions revoke --principal {user_id}` \
             ends them."
        ),
    ))
}

/// One object per factor, each with the `factor_id` that `remove` takes: a [`FactorId`]'s own
/// spelling, which its parser reads back as the same factor.
fn listed(factors: &UserFactors) -> Vec<Value> {
    let passkeys = factors.passkeys.iter().map(|passkey| {
        json!({
            "factor_id": FactorId::Passkey(passkey.credential_id.clone()).as_str(),
            "type": "passkey",
            "name": passkey.name,
            "created": rfc3339::format(passkey.created_at),
            "last_used": passkey.last_used_at.map(rfc3339::format),
        })
    });
    let app = factors.authenticator_app.map(|app| {
        json!({
            "factor_id": FactorId::AuthenticatorApp.as_str(),
            "type": "authenticator-app",
            "enrolled_at": rfc3339::format(app.enrolled_at),
            "recovery_codes_left": app.recovery_codes_left,
        })
    });
    passkeys.chain(app).collect()
}

fn text(factors: &UserFactors) -> String {
    let user = factors.user.id;
    if factors.passkeys.is_empty() && factors.authenticator_app.is_none() {
        return format!("User {user} has no passkey and no authenticator app.");
    }
    let passkeys = factors.passkeys.iter().map(passkey_line);
    let app = factors.authenticator_app.as_ref().map(app_line);
    passkeys.chain(app).collect::<Vec<_>>().join("\n")
}

fn passkey_line(passkey: &PasskeyCredential) -> String {
    let last_used = passkey
        .last_used_at
        .map_or_else(|| "never".to_owned(), rfc3339::format);
    format!(
        "{}  passkey {:?}  created {}  last used {last_used}",
        passkey.credential_id,
        passkey.name,
        rfc3339::format(passkey.created_at),
    )
}

fn app_line(app: &AuthenticatorApp) -> String {
    format!(
        "{}  authenticator app  enrolled {}  {} recovery code(s) left",
        FactorId::AuthenticatorApp,
        rfc3339::format(app.enrolled_at),
        app.recovery_codes_left,
    )
}
