//! Company auth tokens.

use super::records::*;
use crate::domain::AUTH_TOKEN_TTL_SECONDS;
use crate::store::prelude::*;

pub async fn auth_token_is_reusable_for_24_hours(store: &dyn Store) {
    let now = now();
    let token = auth_token(now, now + AUTH_TOKEN_TTL_SECONDS);
    store
        .auth_tokens()
        .put_auth_token(&token)
        .await
        .expect("put_auth_token");
    for (at, what) in [(now, "at issue"), (now + 23 * 3600, "23 hours later")] {
        for _ in 0..2 {
            assert_eq!(
                store
                    .auth_tokens()
                    .get_auth_token(&token.token_hash, at)
                    .await
                    .expect("get_auth_token"),
                Some(token.clone()),
                "an auth token is readable, repeatedly, {what}"
            );
        }
    }
    assert_eq!(
        store
            .auth_tokens()
            .get_auth_token(&token.token_hash, now + AUTH_TOKEN_TTL_SECONDS)
            .await
            .expect("get_auth_token"),
        None,
        "an auth token is absent 24 hours after issue"
    );
    assert_eq!(
        store
            .auth_tokens()
            .get_auth_token(&random_hash(), now)
            .await
            .expect("get_auth_token"),
        None,
        "an unknown auth token is absent"
    );
}
