//! Company auth tokens on SQLite.

use async_trait::async_trait;

use super::{to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::AuthToken;
use crate::secrets::TokenHash;
use crate::{AuthTokenStore, StoreResult};

#[async_trait]
impl AuthTokenStore for SqliteStore {
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        let params = (token.token_hash.to_hex(), token.expires_at, to_json(token)?);
        self.execute(
            "INSERT OR REPLACE INTO auth_tokens (token_hash, expires_at, body) VALUES (?1, ?2, ?3)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>> {
        self.get_body(
            "SELECT body FROM auth_tokens WHERE token_hash = ?1 AND expires_at > ?2",
            (hash.to_hex(), now),
        )
        .await
    }
}
