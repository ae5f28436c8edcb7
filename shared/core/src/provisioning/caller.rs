//! Who is provisioning: a company's provisioning token, or an access token of the company
//! principal whose scope includes `scim`. Everything a request reads or changes is that
//! company's.

use crate::auth::bearer::{authenticate_access_token, bearer_credential};
use crate::config::Limit;
use crate::domain::scim::ScimError;
use crate::domain::{ClientId, Company, CompanyStatus, PrincipalId, PrincipalType};
use crate::limits::LimitError;
use crate::secrets::TokenHash;
use crate::services::Services;

use super::{Failure, ScimResult};

/// The scope a company access token needs to provision.
pub const SCIM_SCOPE: &str = "scim";

/// The authenticated caller: the company, and which credential spoke for it (named by the
/// audit events).
#[derive(Debug, Clone)]
pub struct Provisioner {
    pub company: Company,
    /// The provisioning token's id, when one was presented.
    pub token: Option<uuid::Uuid>,
    /// The company client whose access token was presented.
    pub client: Option<ClientId>,
    /// This deployment's SCIM base, for `meta.location` and `$ref`.
    pub base: String,
}

impl Provisioner {
    pub fn company_id(&self) -> PrincipalId {
        self.company.id
    }
}

fn unauthorized() -> Failure {
    Failure::Scim(ScimError::new(
        401,
        None,
        "a provisioning token or a company access token with scope scim is required",
    ))
}

fn forbidden(detail: &str) -> Failure {
    Failure::Scim(ScimError::new(403, None, detail))
}

/// Authenticates the `Authorization` header and counts the request against the company's
/// limit. `base` is the SCIM base URL of this deployment.
pub async fn authenticate(
    services: &Services,
    authorization: Option<&str>,
    base: &str,
) -> ScimResult<Provisioner> {
    let credential = authorization
        .and_then(|header| bearer_credential(header).ok())
        .ok_or_else(unauthorized)?;
    let now = services.ctx.clock.now();
    let store = &services.ctx.store;
    let (company_id, token, client) = match store
        .directory()
        .get_provisioning_token(&TokenHash::of(credential), now)
        .await?
    {
        Some(token) => (token.company_id, Some(token.id), None),
        None => {
            let bearer = authenticate_access_token(services, credential)
                .await
                .map_err(|refusal| match refusal {
                    crate::errors::Refusal::Server(error) => Failure::Server(error),
                    crate::errors::Refusal::Denied(_) => unauthorized(),
                })?;
            if bearer.principal_type() != PrincipalType::Company {
                return Err(forbidden("only a company's credentials may provision"));
            }
            if !bearer
                .claims
                .scope
                .split(' ')
                .any(|scope| scope == SCIM_SCOPE)
            {
                return Err(forbidden("the access token's scope does not include scim"));
            }
            (
                PrincipalId::new(bearer.subject()),
                None,
                Some(bearer.client_id()),
            )
        }
    };
    let company = store
        .principals()
        .get_company(&company_id)
        .await?
        .ok_or_else(unauthorized)?;
    if company.status != CompanyStatus::Active {
        return Err(forbidden("the company is not active"));
    }
    match services
        .limiter()
        .count(Limit::CompanyScimRequests, &company.id.to_string(), now)
        .await
    {
        Ok(()) => {}
        Err(LimitError::Exceeded(exceeded)) => {
            return Err(Failure::RateLimited {
                retry_after: exceeded.retry_after,
            })
        }
        Err(LimitError::Store(error)) => return Err(error.into()),
    }
    Ok(Provisioner {
        company,
        token,
        client,
        base: base.trim_end_matches('/').to_owned(),
    })
}
