//! `grant_type=password&credtype=authtoken`: a company's tokens, with the 24-hour auth token an
//! administrator obtained standing in for a password (spec 4.6, 5.4). The auth token is not
//! consumed: it may be used again within its window (a retry after a network failure).

use crate::auth::principal::{check_company_may_sign_in, is_active_administrator};
use crate::domain::audit::StartedBy;
use crate::domain::{PrincipalId, PrincipalType};
use crate::errors::{ErrorCode, GrantError};
use crate::grants::GrantContext;
use crate::issuance::{requested_family_scopes, FamilyStart, IssuedTokens};
use crate::requests::PasswordRequest;
use crate::services::Services;

pub(super) async fn grant(
    services: &Services,
    context: &GrantContext,
    request: PasswordRequest,
) -> Result<IssuedTokens, GrantError> {
    let client = &context.client;
    let scopes = requested_family_scopes(request.scope.as_deref(), client)?;
    let resources = context.requested_resources(services)?;
    // `username` is the company's id, `password` its auth token.
    let company_id =
        PrincipalId::parse(&request.username).map_err(|_| ErrorCode::IncorrectAuthToken)?;
    let store = &services.ctx.store;
    let token = store
        .auth_tokens()
        .get_auth_token(&request.password.hash(), services.ctx.clock.now())
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
            jkt: context.dpop_jkt.clone(),
            grant: StartedBy::CompanyAuthToken,
            auth_time: Some(services.ctx.clock.now()),
            sid: None,
            amr: Vec::new(),
            idp: None,
            issued_by: Some(token.issued_by),
            audience: resources.clone(),
            resources,
        })
        .await?;
    Ok(issued.into())
}
