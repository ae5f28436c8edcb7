//! What the grants' unit tests share: a token request through the dispatch, as the token
//! endpoint makes it (parse, client authentication, limits, the grant), over a
//! [`TestState`].

use crate::auth::dpop::DpopRequest;
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::IssuedTokens;
use crate::requests::TokenRequest;
use crate::test_state::{TestClient, TestState};

/// A token request with `client`'s credentials in the body and `pairs` beside them.
pub async fn token(
    state: &TestState,
    client: &TestClient,
    pairs: &[(&str, &str)],
) -> Result<IssuedTokens, GrantError> {
    let credentials = client.credentials();
    let body = credentials
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .chain(pairs.iter().copied());
    let request = TokenRequest::parse(body, None).map_err(GrantError::from)?;
    super::token_grant(&state.services, request, None, &DpopRequest::default()).await
}

/// The code a refused request answers (a failure of the server is a test failure).
pub fn code(outcome: Result<IssuedTokens, GrantError>) -> ErrorCode {
    match outcome {
        Ok(_) => panic!("expected a refusal, got tokens"),
        Err(refused) => refused.code().expect("a refusal, not a server failure"),
    }
}
