//! Company auth tokens on SQLite.

use async_trait::async_trait;

use super::{map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::AuthToken;
use crate::secrets::TokenHash;
use crate::{AuthTokenStore, StoreResult};

const INSERT: &str =
    "INSERT OR REPLACE INTO auth_tokens (token_hash, expires_at, body) VALUES (?1, ?2, ?3)";

/// Writes `token` in a batch's transaction.
pub(super) fn insert_in(tx: &rusqlite::Transaction<'_>, token: &AuthToken) -> StoreResult<()> {
    let params = (token.token_hash.to_hex(), token.expires_at, to_json(token)?);
    tx.prepare_cached(INSERT)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(map_err)?;
    Ok(())
}

#[async_trait]
impl AuthTokenStore for SqliteStore {
    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        let params = (token.token_hash.to_hex(), token.expires_at, to_json(token)?);
        self.execute(INSERT, params).await?;
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
