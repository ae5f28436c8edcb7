use crate::domain::{Client, Scopes};
use crate::errors::ErrorCode;

/// The `scope` parameter, unless it names nothing: blank (only spaces) counts as absent, as an
/// empty one does, rather than asking for a token with no scope at all.
fn scope_parameter(scope: Option<&str>) -> Option<&str> {
    scope.filter(|text| !text.trim().is_empty())
}

/// The `scope` parameter checked against what may be granted; absent means all of it
/// (RFC 6749 §3.3 lets the server pick a default).
pub fn requested_scopes(scope: Option<&str>, grantable: &Scopes) -> Result<Scopes, ErrorCode> {
    let Some(text) = scope_parameter(scope) else {
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
pub fn requested_family_scopes(scope: Option<&str>, client: &Client) -> Result<Scopes, ErrorCode> {
    if scope_parameter(scope).is_none() {
        return Ok(client.allowed_scopes.clone());
    }
    requested_scopes(scope, &client.requestable_scopes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_scope_is_an_absent_one() {
        let grantable = Scopes::parse("read write").unwrap();
        for blank in [" ", "   "] {
            assert_eq!(
                requested_scopes(Some(blank), &grantable),
                Ok(grantable.clone())
            );
        }
        assert_eq!(
            requested_scopes(Some(" read "), &grantable),
            Ok(Scopes::parse("read").unwrap())
        );
    }
}
