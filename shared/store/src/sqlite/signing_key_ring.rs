//! The signing key ring on SQLite: one row of its own table, replaced only when its `version`
//! is the one the writer read.

use async_trait::async_trait;
use rusqlite::OptionalExtension;

use super::{map_err, SqliteStore};
use crate::signing_key_ring::{RingWrite, SigningKeyRingStore, VersionedRing};
use crate::StoreResult;

#[async_trait]
impl SigningKeyRingStore for SqliteStore {
    async fn load_signing_key_ring(&self) -> StoreResult<Option<VersionedRing>> {
        self.read(|conn| {
            conn.prepare_cached("SELECT version, document FROM signing_key_ring WHERE id = 1")
                .and_then(|mut stmt| {
                    stmt.query_row([], |row| {
                        Ok(VersionedRing {
                            version: row.get::<_, i64>(0)? as u64,
                            document: row.get(1)?,
                        })
                    })
                    .optional()
                })
                .map_err(map_err)
        })
        .await
    }

    async fn replace_signing_key_ring(
        &self,
        expected: Option<u64>,
        document: &str,
    ) -> StoreResult<RingWrite> {
        let document = document.to_owned();
        let version = expected.map_or(1, |v| v + 1) as i64;
        let changed = match expected {
            None => {
                self.execute(
                    "INSERT INTO signing_key_ring (id, version, document) VALUES (1, ?1, ?2)
                     ON CONFLICT (id) DO NOTHING",
                    (version, document),
                )
                .await?
            }
            Some(expected) => {
                self.execute(
                    "UPDATE signing_key_ring SET version = ?1, document = ?2
                     WHERE id = 1 AND version = ?3",
                    (version, document, expected as i64),
                )
                .await?
            }
        };
        Ok(if changed == 1 {
            RingWrite::Written {
                version: version as u64,
            }
        } else {
            RingWrite::Conflict
        })
    }
}
