//! A company's identity providers, behind `tokenctl companies idps` and `companies set-sso`:
//! what an administrator adds is checked here (nothing of the IdP is fetched: its metadata is
//! read at the first sign-in), the client secret is sealed before anything is written, and
//! every change is audited. The users' side is `user_links`.

use url::Url;

use super::{not_found, update_company, AdminError};
use crate::audit;
use crate::context::Context;
use crate::domain::audit::{AuditKind, SessionEndReason};
use crate::domain::{
    Company, Geolocation, IdentityProvider, IdpDomains, IdpId, IdpProtocol, LinkBy, OidcConnection,
    PrincipalId, PrincipalType, SsoPolicy, TokenEndpointAuth,
};
use crate::errors::ServerError;
use crate::federation::seal_client_secret;
use crate::flows::sessions;
use crate::outbound::AllowedHosts;
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::IdpInserted;

/// What an OpenID Provider is asked for when `--scopes` is not given.
pub const DEFAULT_OIDC_SCOPES: &str = "openid email profile";

/// The longest IdP name: it is a button's label.
const MAX_IDP_NAME_CHARS: usize = 100;

/// The callback every OpenID Provider of this deployment sends the browser back to, to be
/// registered at the IdP.
pub fn oidc_callback_uri(geolocation: &Geolocation) -> String {
    format!("{geolocation}/federation/v0/oidc/callback")
}

/// `companies idps add --oidc`, as given on the command line.
pub struct NewOidcIdp {
    pub company_id: PrincipalId,
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    pub domains: Vec<String>,
    /// Space-separated; [`DEFAULT_OIDC_SCOPES`] when `None`.
    pub scopes: Option<String>,
    pub link_by: LinkBy,
    pub jit: bool,
    pub trust_mfa: bool,
    pub id_jag: bool,
}

/// `companies idps add`: the IdP as stored (its secret sealed) and the callback to register.
pub async fn add_oidc_idp(
    services: &Services,
    allowed: &AllowedHosts,
    new: NewOidcIdp,
) -> Result<(IdentityProvider, String), AdminError> {
    let ctx = &services.ctx;
    let name = checked_name(&new.name)?;
    let issuer = check_issuer(new.issuer.trim(), allowed)?;
    let client_id = new.client_id.trim();
    if client_id.is_empty() || has_control(client_id) {
        return Err(AdminError::Invalid("--client-id must not be empty".into()));
    }
    if new.client_secret.is_empty() {
        return Err(AdminError::Invalid(
            "the client secret must not be empty".into(),
        ));
    }
    let scopes = parse_scopes(new.scopes.as_deref().unwrap_or(DEFAULT_OIDC_SCOPES))?;
    let domains = IdpDomains::parse(&new.domains)
        .map_err(|error| AdminError::Invalid(format!("--domains: {error}")))?;
    ctx.store
        .principals()
        .get_company(&new.company_id)
        .await?
        .ok_or_else(|| not_found("company", new.company_id))?;
    let id = IdpId::new(ctx.random.uuid());
    let client_secret = seal_client_secret(services, &id, new.client_secret.expose()).await?;
    let idp = IdentityProvider {
        id,
        company_id: new.company_id,
        name: name.to_owned(),
        protocol: IdpProtocol::Oidc(OidcConnection {
            issuer,
            client_id: client_id.to_owned(),
            client_secret,
            scopes,
            token_endpoint_auth: TokenEndpointAuth::default(),
        }),
        domains,
        link_by: new.link_by,
        jit: new.jit,
        trust_mfa: new.trust_mfa,
        id_jag: new.id_jag,
        created_at: ctx.clock.now(),
    };
    insert_idp(ctx, &idp).await?;
    Ok((idp, oidc_callback_uri(services.geolocation())))
}

/// The IdP's button label, trimmed: 1 to [`MAX_IDP_NAME_CHARS`] printable characters.
pub(super) fn checked_name(name: &str) -> Result<&str, AdminError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_IDP_NAME_CHARS || has_control(name) {
        return Err(AdminError::Invalid(format!(
            "--name must be 1 to {MAX_IDP_NAME_CHARS} printable characters"
        )));
    }
    Ok(name)
}

/// Stores a new IdP (a domain another IdP of its company claims is a conflict) and audits it.
pub(super) async fn insert_idp(ctx: &Context, idp: &IdentityProvider) -> Result<(), AdminError> {
    match ctx.store.federation().put_identity_provider(idp).await? {
        IdpInserted::Inserted => {}
        IdpInserted::DomainTaken(domain) => {
            return Err(AdminError::Conflict(format!(
                "domain {} is already claimed by another identity provider of company {}",
                domain.as_str(),
                idp.company_id
            )))
        }
        IdpInserted::IdTaken => {
            return Err(AdminError::Conflict(format!(
                "identity provider id {} is taken; run the command again",
                idp.id
            )))
        }
    }
    let event = audit::event(ctx, AuditKind::CompanyIdpAdded { idp_id: idp.id })
        .principal(PrincipalType::Company, idp.company_id);
    audit::record(ctx, event).await;
    Ok(())
}

pub(super) fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

/// An issuer is compared byte for byte with the ID token's `iss`, so it is kept as given: an
/// absolute https URL without query or fragment (OpenID Connect Discovery 1.0 §2), http only
/// for a `host:port` the deployment allows (`CLIENT_ID_METADATA_ALLOW_HOSTS`, as its fetches
/// will).
fn check_issuer(issuer: &str, allowed: &AllowedHosts) -> Result<String, AdminError> {
    let invalid = |why: &str| AdminError::Invalid(format!("--issuer {issuer:?}: {why}"));
    let url = Url::parse(issuer).map_err(|_| invalid("not an absolute URL"))?;
    let Some(host) = url.host_str().filter(|host| !host.is_empty()) else {
        return Err(invalid("no host"));
    };
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(invalid("an issuer has no query, fragment or user"));
    }
    let allowed_host = url
        .port_or_known_default()
        .is_some_and(|port| allowed.allows(host, port));
    match url.scheme() {
        "https" => Ok(issuer.to_owned()),
        "http" if allowed_host => Ok(issuer.to_owned()),
        "http" => Err(invalid(
            "must be https (http only for a host:port in CLIENT_ID_METADATA_ALLOW_HOSTS)",
        )),
        _ => Err(invalid("must be an https URL")),
    }
}

/// RFC 6749 §3.3's scope tokens, `openid` among them, each once.
fn parse_scopes(text: &str) -> Result<Vec<String>, AdminError> {
    let token_ok = |token: &str| {
        token
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
    };
    let mut scopes: Vec<String> = Vec::new();
    for token in text.split_ascii_whitespace() {
        if !token_ok(token) {
            return Err(AdminError::Invalid(format!(
                "--scopes: {token:?} is not a scope"
            )));
        }
        if !scopes.iter().any(|scope| scope == token) {
            scopes.push(token.to_owned());
        }
    }
    if !scopes.iter().any(|scope| scope == "openid") {
        return Err(AdminError::Invalid("--scopes must contain openid".into()));
    }
    Ok(scopes)
}

/// `companies idps list`: the company's IdPs, oldest first.
pub async fn list_idps(
    ctx: &Context,
    company: &PrincipalId,
) -> Result<Vec<IdentityProvider>, AdminError> {
    ctx.store
        .principals()
        .get_company(company)
        .await?
        .ok_or_else(|| not_found("company", company))?;
    Ok(ctx
        .store
        .federation()
        .list_identity_providers(company)
        .await?)
}

/// `companies idps show`.
pub async fn get_idp(ctx: &Context, id: &IdpId) -> Result<IdentityProvider, AdminError> {
    ctx.store
        .federation()
        .get_identity_provider(id)
        .await?
        .ok_or_else(|| not_found("identity provider", id))
}

/// What `companies idps remove` removed.
pub struct RemovedIdp {
    /// `None` when only links were left of an IdP whose removal was interrupted.
    pub idp: Option<IdentityProvider>,
    pub links_removed: usize,
    /// The sign-in sessions the IdP had started that were ended.
    pub sessions_ended: usize,
}

/// `companies idps remove`: the IdP, its domain claims and every link to it, and every session
/// it started (ended as an administrator ends one: `session.ended`, its clients told by
/// back-channel logout). The linked users are read first, while the links still say who they
/// are, and their sessions through the IdP end before anything is removed, so that a run
/// stopped there leaves everything for the next one; once the IdP is gone they are looked at
/// again, for a session a sign-in started in between. The links are counted by a removal of
/// their own; the IdP's removal sweeps them again, taking any a sign-in made in between.
/// Running it again finishes an interrupted removal.
pub async fn remove_idp(services: &Services, id: &IdpId) -> Result<RemovedIdp, AdminError> {
    let ctx = &services.ctx;
    let federation = ctx.store.federation();
    let mut users: Vec<PrincipalId> = federation
        .list_idp_links(id)
        .await?
        .into_iter()
        .map(|link| link.user_id)
        .collect();
    users.sort_unstable();
    users.dedup();
    let mut sessions_ended = end_idp_sessions(services, id, &users).await?;
    let links_removed = federation.delete_idp_links(id).await?;
    let idp = federation.delete_identity_provider(id).await?;
    sessions_ended += end_idp_sessions(services, id, &users).await?;
    let removed = |idp| RemovedIdp {
        idp,
        links_removed,
        sessions_ended,
    };
    let Some(company) = idp.as_ref().map(|idp| idp.company_id) else {
        if links_removed == 0 {
            return Err(not_found("identity provider", id));
        }
        return Ok(removed(idp));
    };
    let kind = AuditKind::CompanyIdpRemoved {
        idp_id: *id,
        links_removed: links_removed as u64,
    };
    let event = audit::event(ctx, kind).principal(PrincipalType::Company, company);
    audit::record(ctx, event).await;
    Ok(removed(idp))
}

/// Ends the live sessions of `users` that the IdP started; answers how many.
async fn end_idp_sessions(
    services: &Services,
    idp: &IdpId,
    users: &[PrincipalId],
) -> Result<usize, ServerError> {
    let mut ended = 0;
    for user in users {
        let reason = SessionEndReason::Administrator;
        ended += sessions::end_started_by(services, user, idp, reason).await?;
    }
    Ok(ended)
}

/// `companies set-sso`: whether the company's users sign in only through its IdPs (and are
/// refused the password and one-time password grants, code 181, unless marked for local
/// sign-in).
pub async fn set_company_sso(
    ctx: &Context,
    id: &PrincipalId,
    policy: SsoPolicy,
) -> Result<Company, AdminError> {
    update_company(ctx, id, |company| {
        company.sso_policy = policy;
        AuditKind::CompanySsoSet { policy }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issuers_are_https_or_an_allowed_hosts_http() {
        let allowed = AllowedHosts::parse("127.0.0.1:4000").unwrap();
        for ok in [
            "https://idp.acme.example",
            "https://idp.acme.example/",
            "https://login.example/tenant/v2.0",
            "http://127.0.0.1:4000",
        ] {
            assert_eq!(check_issuer(ok, &allowed).unwrap(), ok, "kept as given");
        }
        for refused in [
            "idp.acme.example",
            "http://idp.acme.example",
            "http://127.0.0.1:4001",
            "ftp://idp.acme.example",
            "https://idp.acme.example/?tenant=1",
            "https://idp.acme.example/#x",
            "https://user@idp.acme.example",
        ] {
            assert!(check_issuer(refused, &allowed).is_err(), "{refused}");
        }
        assert!(check_issuer("http://127.0.0.1:4000", &AllowedHosts::none()).is_err());
    }

    #[test]
    fn scopes_need_openid_and_are_kept_once() {
        assert_eq!(
            parse_scopes(DEFAULT_OIDC_SCOPES).unwrap(),
            ["openid", "email", "profile"]
        );
        assert_eq!(
            parse_scopes("openid  openid groups").unwrap(),
            ["openid", "groups"]
        );
        assert!(parse_scopes("email profile").is_err());
        assert!(parse_scopes("openid \"x\"").is_err());
        assert!(parse_scopes("").is_err());
    }
}
