//! Initial access tokens of dynamic client registration: valid from creation until expiry,
//! found only by their digest.

use super::records::*;
use crate::secrets::TokenHash;
use crate::store::prelude::*;

pub async fn registration_token_is_valid_until_it_expires(store: &dyn Store) {
    let now = now();
    let token = unique_login();
    let hash = TokenHash::of(&token);
    let tokens = store.registration_tokens();
    assert!(
        !tokens.registration_token_valid(&hash, now).await.unwrap(),
        "unknown before it is created"
    );
    tokens
        .put_registration_token(&hash, now + 60)
        .await
        .expect("put_registration_token");
    assert!(tokens.registration_token_valid(&hash, now).await.unwrap());
    assert!(tokens
        .registration_token_valid(&hash, now + 59)
        .await
        .unwrap());
    assert!(
        !tokens
            .registration_token_valid(&hash, now + 60)
            .await
            .unwrap(),
        "expired at its expiry, even while the item lingers"
    );
    assert!(
        !tokens
            .registration_token_valid(&TokenHash::of(&unique_login()), now)
            .await
            .unwrap(),
        "another token is not valid"
    );
}
