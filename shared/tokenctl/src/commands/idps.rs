//! `companies idps add|list|show|remove`, `companies set-sso`, and the users' federation verbs
//! (`users set-local-sign-in`, `set-external-id`, `links`, `unlink`). An IdP's client secret is
//! never printed, sealed or not.

use std::io::BufRead;

use serde_json::{json, Value};
use token_core::admin::{self, MetadataSource, NewOidcIdp, NewSamlIdp};
use token_core::config::Config;
use token_core::context::Context;
use token_domain::audit::rfc3339;
use token_domain::secrets::Secret;
use token_domain::{
    FederationLink, Geolocation, IdentityProvider, IdpId, IdpProtocol, PrincipalId,
};

use crate::args::{IdpsAdd, IdpsCommand, SsoPolicyArg, UsersSetExternalId, UsersSetLocalSignIn};
use crate::error::CliError;
use crate::output::Output;
use crate::setup;

/// Sealing the secret needs the deployment's key ring: the services, as the token function
/// starts them.
pub async fn add(args: IdpsAdd, config: &Config) -> Result<Output, CliError> {
    if args.saml {
        return add_saml(args, config).await;
    }
    let missing = |flag: &str| CliError::invalid(format!("--oidc needs {flag}"));
    let issuer = args.issuer.ok_or_else(|| missing("--issuer URL"))?;
    let client_id = args.client_id.ok_or_else(|| missing("--client-id ID"))?;
    let client_secret = match (args.client_secret, args.client_secret_stdin) {
        (Some(secret), _) => Secret::new(secret),
        (None, true) => read_secret_line()?,
        (None, false) => {
            return Err(missing("--client-secret-stdin or --client-secret S"));
        }
    };
    let new = NewOidcIdp {
        company_id: args.company_id,
        name: args.name,
        issuer,
        client_id,
        client_secret,
        domains: args.domains,
        scopes: args.scopes,
        link_by: args.link_by.into(),
        jit: args.jit.is_on(),
        trust_mfa: args.trust_mfa,
        id_jag: args.id_jag,
    };
    let services = setup::services(config).await?;
    let (idp, redirect_uri) =
        admin::add_oidc_idp(&services, &config.outbound_allowed_hosts, new).await?;
    Ok(Output::new(
        json!({ "idp_id": idp.id, "redirect_uri": redirect_uri }),
        format!(
            "Added identity provider {:?} to company {}.\nidp_id:       {}\nredirect_uri: {redirect_uri}\n\
             Register the redirect_uri at the IdP as this client's callback.",
            idp.name, idp.company_id, idp.id
        ),
    ))
}

/// Our keys are made and sealed, and a metadata URL fetched under the outbound rules: the
/// services too.
async fn add_saml(args: IdpsAdd, config: &Config) -> Result<Output, CliError> {
    let metadata = match (args.metadata_file, args.metadata_url) {
        (Some(file), _) => MetadataSource::Document(read_metadata_file(&file)?),
        (None, Some(url)) => MetadataSource::Url(url),
        (None, None) => {
            return Err(CliError::invalid(
                "--saml needs --metadata-file FILE or --metadata-url URL",
            ))
        }
    };
    let new = NewSamlIdp {
        company_id: args.company_id,
        name: args.name,
        metadata,
        domains: args.domains,
        allow_idp_initiated: args.allow_idp_initiated,
        email_attribute: args.email_attribute,
        link_by: args.link_by.into(),
        jit: args.jit.is_on(),
        trust_mfa: args.trust_mfa,
        id_jag: args.id_jag,
    };
    let services = setup::services(config).await?;
    let (idp, ours) = admin::add_saml_idp(&services, new).await?;
    Ok(Output::new(
        json!({
            "idp_id": idp.id,
            "sp_entity_id": ours.entity_id,
            "acs_url": ours.acs,
            "sp_metadata_url": ours.entity_id,
        }),
        format!(
            "Added identity provider {:?} to company {}.\nidp_id:          {}\nsp_entity_id:    {}\n\
             acs_url:         {}\nsp_metadata_url: {}\n\
             Import the metadata at sp_metadata_url into the IdP.",
            idp.name, idp.company_id, idp.id, ours.entity_id, ours.acs, ours.entity_id
        ),
    ))
}

fn read_metadata_file(file: &std::path::Path) -> Result<String, CliError> {
    std::fs::read_to_string(file)
        .map_err(|error| CliError::invalid(format!("--metadata-file {}: {error}", file.display())))
}

/// `companies idps refresh`: a URL is fetched under the outbound rules, so the services too.
pub async fn refresh(
    idp_id: IdpId,
    metadata_file: Option<std::path::PathBuf>,
    config: &Config,
) -> Result<Output, CliError> {
    let document = metadata_file
        .as_deref()
        .map(read_metadata_file)
        .transpose()?;
    let services = setup::services(config).await?;
    let idp = admin::refresh_saml_idp(&services, &idp_id, document).await?;
    Ok(Output::new(
        json!({ "idp_id": idp.id, "refreshed": true }),
        format!(
            "Read the metadata of identity provider {} ({:?}) again; only its certificates and \
             endpoints count now.",
            idp.id, idp.name
        ),
    ))
}

/// Ending the sessions the IdP started signs logout tokens: the services too.
pub async fn remove(idp_id: IdpId, config: &Config) -> Result<Output, CliError> {
    let services = setup::services(config).await?;
    let removed = admin::remove_idp(&services, &idp_id).await?;
    let (links, sessions) = (removed.links_removed, removed.sessions_ended);
    let text = match &removed.idp {
        Some(idp) => format!(
            "Removed identity provider {idp_id} ({:?}) of company {} and {links} link(s) to \
             it; {sessions} session(s) it started ended. {}",
            idp.name,
            idp.company_id,
            super::cache_delay_note()
        ),
        None => format!(
            "Identity provider {idp_id} was already gone; {links} link(s) left of it removed, \
             {sessions} session(s) it started ended."
        ),
    };
    Ok(Output::new(
        json!({
            "idp_id": idp_id,
            "removed": true,
            "links_removed": links,
            "sessions_ended": sessions,
        }),
        text,
    ))
}

pub async fn run(command: IdpsCommand, ctx: &Context, config: &Config) -> Result<Output, CliError> {
    let home = &config.geolocation;
    match command {
        IdpsCommand::Add(_) | IdpsCommand::Remove { .. } | IdpsCommand::Refresh { .. } => {
            unreachable!("handled with the services")
        }
        IdpsCommand::List { company_id } => {
            let idps = admin::list_idps(ctx, &company_id).await?;
            let text = if idps.is_empty() {
                format!("Company {company_id} has no identity provider.")
            } else {
                idps.iter().map(line).collect::<Vec<_>>().join("\n")
            };
            let listed: Vec<Value> = idps.iter().map(|idp| described(idp, home)).collect();
            Ok(Output::list(Value::Array(listed), text))
        }
        IdpsCommand::Show { idp_id } => {
            let idp = admin::get_idp(ctx, &idp_id).await?;
            let json = described(&idp, home);
            let text = json
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, value)| format!("{name}: {}", shown(value)))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Output::new(json, text))
        }
    }
}

/// What `list` and `show` print of an IdP: everything but its secret.
fn described(idp: &IdentityProvider, home: &Geolocation) -> Value {
    let mut json = json!({
        "idp_id": idp.id,
        "company_id": idp.company_id,
        "name": idp.name,
        "domains": idp.domains.as_slice().iter().map(|d| d.as_str()).collect::<Vec<_>>(),
        "link_by": idp.link_by.as_str(),
        "jit": if idp.jit { "on" } else { "off" },
        "trust_mfa": idp.trust_mfa,
        "id_jag": idp.id_jag,
        "created": rfc3339::format(idp.created_at),
    });
    let protocol = match &idp.protocol {
        IdpProtocol::Oidc(oidc) => json!({
            "protocol": "oidc",
            "issuer": oidc.issuer,
            "client_id": oidc.client_id,
            "scopes": oidc.scopes.join(" "),
            "redirect_uri": admin::oidc_callback_uri(home),
        }),
        IdpProtocol::Saml(saml) => json!({
            "protocol": "saml",
            "entity_id": saml.entity_id,
            "sp_entity_id": format!("{}/federation/v0/saml/{}/metadata", home.as_str().trim_end_matches('/'), idp.id),
            "metadata_url": saml.metadata_url,
            "allow_idp_initiated": saml.allow_idp_initiated,
            "email_attribute": saml.email_attribute,
        }),
    };
    if let (Some(all), Some(more)) = (json.as_object_mut(), protocol.as_object()) {
        all.extend(more.clone());
    }
    json
}

fn line(idp: &IdentityProvider) -> String {
    let (protocol, issuer) = match &idp.protocol {
        IdpProtocol::Oidc(oidc) => ("oidc", oidc.issuer.as_str()),
        IdpProtocol::Saml(saml) => ("saml", saml.entity_id.as_str()),
    };
    let domains: Vec<&str> = idp.domains.as_slice().iter().map(|d| d.as_str()).collect();
    format!(
        "{}  {protocol}  {:?}  {issuer}  domains: {}",
        idp.id,
        idp.name,
        if domains.is_empty() {
            "none".to_owned()
        } else {
            domains.join(",")
        }
    )
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(","),
        Value::Null => "-".to_owned(),
        other => other.to_string(),
    }
}

pub async fn set_sso(
    company_id: &PrincipalId,
    policy: SsoPolicyArg,
    ctx: &Context,
) -> Result<Output, CliError> {
    let company = admin::set_company_sso(ctx, company_id, policy.into()).await?;
    let policy = company.sso_policy;
    let meaning = if policy.is_required() {
        "its users sign in only through its identity providers, and the password and otp grants \
         refuse them (code 181), except users set with `users set-local-sign-in USER_ID on`"
    } else {
        "its users may also sign in with a password"
    };
    Ok(Output::new(
        json!({ "company_id": company.id, "sso": policy.as_str() }),
        format!(
            "Company {} ({}): sign-in through its identity providers {}; {meaning}. {}",
            company.id,
            company.name,
            policy.as_str(),
            super::cache_delay_note()
        ),
    ))
}

pub async fn set_local_sign_in(
    args: UsersSetLocalSignIn,
    ctx: &Context,
) -> Result<Output, CliError> {
    let on = args.local_sign_in.is_on();
    let user = admin::set_user_local_sign_in(ctx, &args.user_id, on).await?;
    let meaning = if on {
        "signs in with a password even when the company requires its identity providers"
    } else {
        "signs in as the company's policy says"
    };
    Ok(Output::new(
        json!({ "user_id": user.id, "local_sign_in": if on { "on" } else { "off" } }),
        format!("User {} ({}) {meaning}.", user.id, user.login),
    ))
}

pub async fn set_external_id(args: UsersSetExternalId, ctx: &Context) -> Result<Output, CliError> {
    let value = if args.clear {
        None
    } else {
        args.external_id.as_deref()
    };
    let user = admin::set_user_external_id(ctx, &args.user_id, value).await?;
    let text = match &user.external_id {
        Some(value) => format!("User {} now has the external id {value:?}.", user.id),
        None => format!("User {} has no external id now.", user.id),
    };
    Ok(Output::new(
        json!({ "user_id": user.id, "external_id": user.external_id }),
        text,
    ))
}

pub async fn links(user_id: &PrincipalId, ctx: &Context) -> Result<Output, CliError> {
    let (user, links) = admin::list_user_links(ctx, user_id).await?;
    let text = if links.is_empty() {
        format!(
            "User {} ({}) has no link to an identity provider.",
            user.id, user.login
        )
    } else {
        links
            .iter()
            .map(|link| {
                format!(
                    "{}  {}  {}  linked {}",
                    link.idp_id,
                    link.subject.issuer,
                    link.subject.subject,
                    rfc3339::format(link.linked_at)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let listed: Vec<Value> = links.iter().map(link_json).collect();
    Ok(Output::new(
        json!({ "user_id": user.id, "links": listed }),
        text,
    ))
}

fn link_json(link: &FederationLink) -> Value {
    json!({
        "idp_id": link.idp_id,
        "issuer": link.subject.issuer,
        "subject": link.subject.subject,
        "linked_at": rfc3339::format(link.linked_at),
    })
}

pub async fn unlink(
    user_id: &PrincipalId,
    idp_id: &IdpId,
    ctx: &Context,
) -> Result<Output, CliError> {
    let removed = admin::unlink_user(ctx, user_id, idp_id).await?;
    Ok(Output::new(
        json!({
            "user_id": user_id,
            "idp_id": idp_id,
            "removed": removed.iter().map(link_json).collect::<Vec<_>>(),
        }),
        format!(
            "Removed {} link(s) of user {user_id} to identity provider {idp_id}; the next \
             sign-in there links afresh.",
            removed.len()
        ),
    ))
}

/// `--client-secret-stdin`: the first line of standard input, without its line ending.
fn read_secret_line() -> Result<Secret, CliError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::other(format!("reading the secret from standard input: {e}")))?;
    let secret = line.strip_suffix('\n').unwrap_or(&line);
    let secret = secret.strip_suffix('\r').unwrap_or(secret);
    Ok(Secret::new(secret))
}
