//! Company identity providers, the relying-party side (docs/decisions.md, "Company identity
//! providers"): which IdPs a login's domain goes to (home-realm discovery), what an OpenID
//! Provider publishes (`crate::idp_documents`), its code flow and ID token checks (`oidc`), and which of
//! the company's users an upstream subject is (`linking`). The pages' sign-in interaction
//! (`flows::sign_in`) leaves for an IdP and continues when it comes back.

pub mod assertion;
pub mod linking;
pub mod oidc;
pub mod saml;
mod sealing;

use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::{IdentityProvider, IdpDomain, PrincipalType};
use crate::errors::ServerError;
use crate::services::Services;

pub use crate::idp_documents::{Provider, ProviderError, Providers};
pub use sealing::{open_client_secret, seal_client_secret, seal_sp_key, SpKeyUse};

/// The IdPs a login signs in with: those that claim its domain, of every company, oldest first.
/// A login without a domain, or with one no IdP claims, has none.
pub async fn discover(
    services: &Services,
    login: &str,
) -> Result<Vec<IdentityProvider>, ServerError> {
    let Some(domain) = IdpDomain::of_login(login) else {
        return Ok(Vec::new());
    };
    Ok(services
        .ctx
        .store
        .federation()
        .identity_providers_for_domain(&domain)
        .await?)
}

/// `federation.refused`, filed under the IdP's company when it is known; its id is the
/// reference an error page shows. The reason is a fixed word, never what the IdP sent.
pub async fn record_refusal(
    services: &Services,
    idp: Option<&IdentityProvider>,
    reason: &str,
) -> String {
    let kind = AuditKind::FederationRefused {
        idp: idp.map(|idp| idp.id),
        reason: reason.to_owned(),
    };
    let event = audit::event(&services.ctx, kind);
    let event = match idp {
        Some(idp) => event.principal(PrincipalType::Company, idp.company_id),
        None => event,
    };
    let reference = event.id.to_string();
    audit::record(&services.ctx, event).await;
    reference
}
