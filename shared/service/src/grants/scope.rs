use super::params::TokenParams;
use crate::domain::{Client, Scopes};
use crate::errors::ErrorCode;

/// The `scope` parameter checked against what may be granted; absent means all of it
/// (RFC 6749 §3.3 lets the server pick a default).
pub fn requested_scopes(params: &TokenParams, grantable: &Scopes) -> Result<Scopes, ErrorCode> {
    let Some(text) = params.get("scope") else {
        return Ok(grantable.clone());
    };
    let requested = Scopes::parse(text).map_err(|_| ErrorCode::ScopeExceedsGrant)?;
    if requested.is_subset_of(grantable) {
        Ok(requested)
    } else {
        Err(ErrorCode::ScopeExceedsGrant)
    }
}

/// The scopes of a new user or company family: absent means the client's registered scopes;
/// a `scope` may also name `openid` ([`Client::requestable_scopes`]).
pub fn requested_family_scopes(params: &TokenParams, client: &Client) -> Result<Scopes, ErrorCode> {
    if params.get("scope").is_none() {
        return Ok(client.allowed_scopes.clone());
    }
    requested_scopes(params, &client.requestable_scopes())
}
