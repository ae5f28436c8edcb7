use super::params::TokenParams;
use crate::domain::Scopes;
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
