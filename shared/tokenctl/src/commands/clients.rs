//! `clients create`, `clients list`, `clients show`, `clients disable`, `clients set-jwks`,
//! `clients set-refresh-rotation`, `clients set-backchannel-logout-uri`, `clients secrets`.

use std::path::Path;

use serde_json::json;
use token_core::admin::{self, NewClient};
use token_core::context::Context;
use token_domain::jose::PublicJwkSet;
use token_domain::{Client, GrantType};

use crate::args::{ClientsCommand, ClientsCreate};
use crate::error::CliError;
use crate::output::Output;

pub async fn run(command: ClientsCommand, ctx: &Context) -> Result<Output, CliError> {
    match command {
        ClientsCommand::Create(args) => create(args, ctx).await,
        ClientsCommand::Disable { client_id } => {
            let client = admin::disable_client(ctx, &client_id).await?;
            Ok(Output::new(
                json!({ "client_id": client.id, "enabled": client.enabled }),
                format!(
                    "Client {} ({}) is disabled. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::SetJwks { client_id, file } => {
            let jwks = read_jwks(&file)?;
            let client = admin::set_client_jwks(ctx, &client_id, jwks).await?;
            let kids = key_ids(&client);
            Ok(Output::new(
                json!({ "client_id": client.id, "jwks_keys": kids }),
                format!(
                    "Client {} ({}) may now authenticate with private_key_jwt ({} key(s)); its \
                     secret keeps working. {}",
                    client.id,
                    client.name,
                    kids.len(),
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::Secrets(command) => super::client_secrets::run(command, ctx).await,
        ClientsCommand::IdJagTargets(command) => super::id_jag_targets::run(command, ctx).await,
        ClientsCommand::List => {
            let clients = admin::list_clients(ctx).await?;
            let text = clients
                .iter()
                .map(|client| {
                    let mut line = format!("{}  {}", client.id, client.name);
                    if client.registration.is_some() {
                        line.push_str("  (self-registered)");
                    }
                    if !client.enabled {
                        line.push_str("  (disabled)");
                    }
                    line
                })
                .collect::<Vec<_>>()
                .join("\n");
            let json = clients.iter().map(registration).collect::<Vec<_>>();
            Ok(Output::list(json!(json), text))
        }
        ClientsCommand::Show { client_id } => {
            let client = admin::existing_client(ctx, &client_id).await?;
            let json = registration(&client);
            let text = serde_json::to_string_pretty(&json).unwrap_or_default();
            Ok(Output::new(json, text))
        }
        ClientsCommand::SetBackchannelLogoutUri {
            client_id,
            uri,
            clear,
        } => {
            let uri = if clear { None } else { uri };
            let client = admin::set_backchannel_logout_uri(ctx, &client_id, uri).await?;
            let what = client.backchannel_logout_uri.as_deref().map_or_else(
                || "is no longer told of logouts".to_owned(),
                |uri| format!("is told of logouts at {uri}"),
            );
            Ok(Output::new(
                json!({
                    "client_id": client.id,
                    "backchannel_logout_uri": client.backchannel_logout_uri,
                }),
                format!(
                    "Client {} ({}) {what}. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::SetRefreshRotation {
            client_id,
            rotation,
        } => {
            let client = admin::set_refresh_rotation(ctx, &client_id, rotation.into()).await?;
            let policy = client.refresh_rotation.as_str();
            Ok(Output::new(
                json!({ "client_id": client.id, "refresh_rotation": policy }),
                format!(
                    "Client {} ({}) now uses refresh rotation {policy:?} from its next refresh on. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::SetAuthMethod { client_id, method } => {
            let client = admin::set_auth_method(ctx, &client_id, method.into()).await?;
            let method = client.auth_method.map_or("any", |m| m.as_str());
            Ok(Output::new(
                json!({ "client_id": client.id, "auth_method": method }),
                format!(
                    "Client {} ({}) authenticates with: {method}. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::SetProfile { client_id, profile } => {
            let client = admin::set_profile(ctx, &client_id, profile.into()).await?;
            let profile = client.profile.as_str();
            Ok(Output::new(
                json!({ "client_id": client.id, "profile": profile }),
                format!(
                    "Client {} ({}) follows the {profile} profile. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
        ClientsCommand::SetRequireDpop {
            client_id,
            require_dpop,
        } => {
            let client = admin::set_require_dpop(ctx, &client_id, require_dpop).await?;
            let what = if client.require_dpop {
                "must send a DPoP proof with every token request"
            } else {
                "may send DPoP proofs (optional)"
            };
            Ok(Output::new(
                json!({ "client_id": client.id, "require_dpop": client.require_dpop }),
                format!(
                    "Client {} ({}) {what}. {}",
                    client.id,
                    client.name,
                    super::cache_delay_note()
                ),
            ))
        }
    }
}

async fn create(args: ClientsCreate, ctx: &Context) -> Result<Output, CliError> {
    let mut new = NewClient::named(args.name, args.scopes);
    if !args.grants.is_empty() {
        new.grants = args.grants.into_iter().collect();
    }
    new.connect_url = args.connect_url;
    new.refresh_allowed = !args.no_refresh;
    new.redirect_uris = args.redirect_uris;
    new.post_logout_redirect_uris = args.post_logout_redirect_uris;
    new.first_party = args.first_party;
    new.refresh_rotation = args.refresh_rotation.into();
    new.jwks = args.jwks_file.as_deref().map(read_jwks).transpose()?;
    new.require_dpop = args.require_dpop;
    new.require_par = args.require_par;
    new.profile = args.profile.into();
    new.backchannel_logout_uri = args.backchannel_logout_uri;
    new.resources = args.resources;
    let created = admin::create_client(ctx, new).await?;
    let client = &created.client;
    // The only place a secret is ever printed: once, at creation. Only its hash is stored.
    let secret = created.secret.expose();
    let mut json = registration(client);
    json["client_secret"] = json!(secret);
    Ok(Output::new(
        json,
        format!(
            "Created client {:?}.\n\
             client_id:     {}\n\
             client_secret: {secret}\n\
             The secret is shown only this once and only its hash is stored: keep it now.",
            client.name, client.id
        ),
    ))
}

/// What `clients create` and `clients show` print of a registration (never a secret).
fn registration(client: &Client) -> serde_json::Value {
    json!({
        "client_id": client.id,
        "name": client.name,
        "enabled": client.enabled,
        "scopes": client.allowed_scopes,
        "grants": grant_names(client),
        "connect_url": client.connect_url,
        "refresh_allowed": client.refresh_allowed,
        "redirect_uris": client.redirect_uris,
        "post_logout_redirect_uris": client.post_logout_redirect_uris,
        "backchannel_logout_uri": client.backchannel_logout_uri,
        "first_party": client.first_party,
        "refresh_rotation": client.refresh_rotation.as_str(),
        "jwks_keys": key_ids(client),
        "require_dpop": client.require_dpop,
        "registration": if client.registration.is_some() { "dynamic" } else { "static" },
        "resources": client.resources,
        "require_par": client.require_par,
        "profile": client.profile.as_str(),
    })
}

/// A JWK Set file, checked: public ES256, PS256 or EdDSA keys only.
fn read_jwks(file: &Path) -> Result<PublicJwkSet, CliError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::invalid(format!("cannot read {}: {e}", file.display())))?;
    Ok(admin::parse_jwks(&text)?)
}

/// Each registered key by its `kid`, or by its RFC 7638 thumbprint when it has none.
fn key_ids(client: &Client) -> Vec<String> {
    client.jwks.as_ref().map_or_else(Vec::new, |set| {
        set.keys()
            .iter()
            .map(|key| key.kid().map_or_else(|| key.thumbprint(), str::to_owned))
            .collect()
    })
}

fn grant_names(client: &Client) -> Vec<&'static str> {
    client.grants.iter().copied().map(GrantType::name).collect()
}
