//! Identity assertions for agents (ID-JAG): the authorization servers a client may ask them
//! for (`tokenctl clients id-jag-targets`), and each company's switch (`tokenctl companies
//! set-id-jag`).

use url::Url;

use super::clients::change_client;
use super::{client_changed, update_company, AdminError};
use crate::context::Context;
use crate::domain::audit::AuditKind;
use crate::domain::{Client, ClientId, Company, IdJagTarget, PrincipalId, MAX_ID_JAG_TARGETS};

/// The longest `--client-id` kept: a client id at another server, stored in the client record.
const MAX_TARGET_CLIENT_ID_BYTES: usize = 255;

/// Adds `target` to the client's, or replaces the one with its audience (an issuer is one
/// target): `client.id_jag_target_added`.
pub async fn add_id_jag_target(
    ctx: &Context,
    id: &ClientId,
    target: IdJagTarget,
) -> Result<Client, AdminError> {
    check_target(&target)?;
    let existing = super::existing_client(ctx, id).await?;
    let replaces = existing
        .id_jag_targets
        .iter()
        .any(|t| t.audience == target.audience);
    if !replaces && existing.id_jag_targets.len() >= MAX_ID_JAG_TARGETS {
        return Err(AdminError::Invalid(format!(
            "a client has at most {MAX_ID_JAG_TARGETS} identity assertion targets"
        )));
    }
    let audience = target.audience.clone();
    let client = change_client(ctx, id, |client| {
        client
            .id_jag_targets
            .retain(|t| t.audience != target.audience);
        client.id_jag_targets.push(target);
    })
    .await?;
    client_changed(
        ctx,
        AuditKind::ClientIdJagTargetAdded { audience },
        client.id,
    )
    .await;
    Ok(client)
}

/// Removes the client's target for `audience` (not found if it has none):
/// `client.id_jag_target_removed`. Assertions issued before stay valid until they expire
/// (at most five minutes).
pub async fn remove_id_jag_target(
    ctx: &Context,
    id: &ClientId,
    audience: &str,
) -> Result<Client, AdminError> {
    let existing = super::existing_client(ctx, id).await?;
    if !existing
        .id_jag_targets
        .iter()
        .any(|t| t.audience == audience)
    {
        return Err(super::not_found("identity assertion target", audience));
    }
    let client = change_client(ctx, id, |client| {
        client.id_jag_targets.retain(|t| t.audience != audience);
    })
    .await?;
    let kind = AuditKind::ClientIdJagTargetRemoved {
        audience: audience.to_owned(),
    };
    client_changed(ctx, kind, client.id).await;
    Ok(client)
}

/// Turns identity assertions for the company's users on or off (`company.id_jag_set`), from
/// the next token exchange.
pub async fn set_company_id_jag(
    ctx: &Context,
    id: &PrincipalId,
    on: bool,
) -> Result<Company, AdminError> {
    update_company(ctx, id, |company| {
        company.id_jag = on;
        AuditKind::CompanyIdJagSet { on }
    })
    .await
}

/// An issuer is an absolute https URL without query or fragment (RFC 8414 §2; http only on a
/// loopback host, for local use); the client id there is printable and short.
fn check_target(target: &IdJagTarget) -> Result<(), AdminError> {
    let invalid = |what: &str| Err(AdminError::Invalid(what.to_owned()));
    let Ok(url) = Url::parse(&target.audience) else {
        return invalid("--audience must be the target's issuer, an absolute URL");
    };
    let loopback = matches!(
        url.host(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback()
    ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        || url.host_str() == Some("localhost");
    let secure = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    if !secure || url.query().is_some() || url.fragment().is_some() || !url.has_host() {
        return invalid("--audience must be an https URL without query or fragment");
    }
    let client_id = &target.client_id;
    if client_id.is_empty()
        || client_id.len() > MAX_TARGET_CLIENT_ID_BYTES
        || client_id.chars().any(char::is_control)
    {
        return invalid("--client-id must be 1 to 255 printable characters");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(audience: &str, client_id: &str) -> IdJagTarget {
        IdJagTarget {
            audience: audience.to_owned(),
            client_id: client_id.to_owned(),
            resources: Vec::new(),
            scopes: None,
        }
    }

    #[test]
    fn a_target_is_an_issuer_and_a_printable_client_id() {
        for ok in [
            "https://as.example",
            "https://as.example/tenant/v2",
            "http://127.0.0.1:4000",
            "http://localhost:8080",
        ] {
            assert!(check_target(&target(ok, "agent")).is_ok(), "{ok}");
        }
        for bad in [
            "as.example",
            "http://as.example",
            "https://as.example/?x=1",
            "https://as.example/#f",
            "ftp://as.example",
        ] {
            assert!(check_target(&target(bad, "agent")).is_err(), "{bad}");
        }
        assert!(check_target(&target("https://as.example", "")).is_err());
        assert!(check_target(&target("https://as.example", "a\nb")).is_err());
        let long = "x".repeat(MAX_TARGET_CLIENT_ID_BYTES + 1);
        assert!(check_target(&target("https://as.example", &long)).is_err());
    }
}
