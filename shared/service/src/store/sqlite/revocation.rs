//! Access-token and connection revocation on SQLite.

use async_trait::async_trait;

use super::{id_to_sql, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{ClientId, PrincipalId, TokenId};
use crate::store::{RevocationStore, StoreResult};

#[async_trait]
impl RevocationStore for SqliteStore {
    async fn revoke_access_token(&self, jti: &TokenId, now: UnixTime) -> StoreResult<bool> {
        // The `revoked` column is what reads consult; the JSON body keeps its issue-time copy.
        let changed = self
            .execute(
                "UPDATE access_tokens SET revoked = 1 WHERE jti = ?1 AND expires_at > ?2",
                (id_to_sql(jti), now),
            )
            .await?;
        Ok(changed > 0)
    }

    async fn revoke_connection(
        &self,
        principal: &PrincipalId,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<()> {
        // The owner and client live in the body only; a scan of one user's families is cheap
        // for the embedded store, which serves one developer's data.
        self.execute(
            "UPDATE families SET revoked_at = ?3
             WHERE json_extract(body, '$.principal_id') = ?1
               AND json_extract(body, '$.client_id') = ?2
               AND revoked_at IS NULL",
            (id_to_sql(principal), id_to_sql(client), now),
        )
        .await?;
        Ok(())
    }
}
