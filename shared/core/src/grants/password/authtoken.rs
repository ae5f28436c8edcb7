//! `grant_type=password&credtype=authtoken`: a company's tokens, with the 24-hour auth token an
//! administrator obtained standing in for a password (spec 4.6, 5.4). The auth token is not
//! consumed: it may be used again within its window (a retry after a network failure).

use crate::auth::principal::{check_company_may_sign_in, is_active_administrator};
use crate::domain::audit::StartedBy;
use crate::domain::{Client, PrincipalId, PrincipalType};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::{requested_family_scopes, FamilyStart, IssuedTokens};
use crate::params::TokenParams;
use crate::secrets::TokenHash;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    client: &Client,
    params: &TokenParams,
    company_id: &str,
    auth_token: &str,
) -> Result<IssuedTokens, GrantError> {
    let scopes = requested_family_scopes(params, client)?;
    let company_id = PrincipalId::parse(company_id).map_err(|_| ErrorCode::IncorrectAuthToken)?;
    let store = &services.ctx.store;
    let token = store
        .auth_tokens()
        .get_auth_token(&TokenHash::of(auth_token), services.ctx.clock.now())
        .await?
        .filter(|t| t.company_id == company_id)
        .ok_or(ErrorCode::IncorrectAuthToken)?;
    if token.client_id != client.id {
        return Err(ErrorCode::GrantNotIssuedToClient.into());
    }
    if !is_active_administrator(services, &token.issued_by, &company_id).await? {
        return Err(ErrorCode::IncorrectAuthToken.into());
    }
    let company = store
        .principals()
        .get_company(&company_id)
        .await?
        .ok_or(ErrorCode::IncorrectAuthToken)?;
    check_company_may_sign_in(services, &company, client).await?;
    let issued = services
        .issuer()
        .start_family(FamilyStart {
            client_id: client.id,
            principal_type: PrincipalType::Company,
            principal_id: company.id,
            scopes,
            geolocation: company.geolocation,
            jkt: params.dpop_jkt().map(str::to_owned),
            grant: StartedBy::CompanyAuthToken,
            auth_time: Some(services.ctx.clock.now()),
        })
        .await?;
    Ok(issued.into())
}
