//! One-time passwords on SQLite: one row per password, every field a column (all of them are
//! read by conditions or compared, none is a free-form body).

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row};
use uuid::Uuid;

use super::{hash_from_column, id_to_sql, map_err, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{AddressKey, ClientId, OtpHash};
use crate::{
    FactsHash, OtpId, OtpRecord, OtpStore, StoreError, StoreResult, REQUEST_WINDOW_SECONDS,
};

const COLUMNS: &str =
    "id, address, client_id, password, facts, created_at, expires_at, tries_left, consumed";

#[async_trait]
impl OtpStore for SqliteStore {
    async fn create_otp(&self, record: &OtpRecord) -> StoreResult<()> {
        let record = record.clone();
        self.write_tx(move |tx| {
            let address = record.address.0.to_hex();
            // SQLite has no TTL: drop this address's rows once they are past the request window
            // (the cap counts expired passwords too, so expiry alone is not enough).
            tx.prepare_cached("DELETE FROM otps WHERE address = ?1 AND created_at < ?2")
                .and_then(|mut stmt| {
                    stmt.execute(params![address, record.created_at - REQUEST_WINDOW_SECONDS])
                })
                .map_err(map_err)?;
            tx.prepare_cached(
                "INSERT INTO otps (id, address, client_id, password, facts, created_at,
                                   expires_at, tries_left, consumed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id_to_sql(&record.id),
                    address,
                    id_to_sql(&record.client_id),
                    record.password.as_phc(),
                    record.facts.0.to_hex(),
                    record.created_at,
                    record.expires_at,
                    record.tries_left,
                    record.consumed,
                ])
            })
            .map_err(map_err)?;
            Ok(())
        })
        .await
    }

    async fn count_otp_requests(
        &self,
        address: &AddressKey,
        client: &ClientId,
        since: UnixTime,
    ) -> StoreResult<u32> {
        let (address, client) = (address.0.to_hex(), id_to_sql(client));
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT COUNT(*) FROM otps
                 WHERE address = ?1 AND client_id = ?2 AND created_at >= ?3 AND consumed = 0",
            )
            .and_then(|mut stmt| stmt.query_row(params![address, client, since], |row| row.get(0)))
            .map_err(map_err)
        })
        .await
    }

    async fn find_open_otp(
        &self,
        address: &AddressKey,
        client: &ClientId,
        now: UnixTime,
    ) -> StoreResult<Option<OtpRecord>> {
        let (address, client) = (address.0.to_hex(), id_to_sql(client));
        let newest = self
            .read(move |conn| {
                let sql = format!(
                    "SELECT {COLUMNS} FROM otps WHERE address = ?1 AND client_id = ?2
                     ORDER BY created_at DESC, rowid DESC LIMIT 1"
                );
                conn.prepare_cached(&sql)
                    .and_then(|mut stmt| stmt.query_row([address, client], read_row).optional())
                    .map_err(map_err)
            })
            .await?;
        newest
            .map(decode)
            .transpose()
            .map(|record| record.filter(|r| r.is_open(now)))
    }

    async fn spend_otp_try(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<Option<u32>> {
        let id = id_to_sql(&record.id);
        // One statement: the check and the decrement cannot be split by a parallel try.
        self.write_tx(move |tx| {
            tx.prepare_cached(
                "UPDATE otps SET tries_left = tries_left - 1
                 WHERE id = ?1 AND consumed = 0 AND tries_left > 0 AND expires_at > ?2
                 RETURNING tries_left",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![id, now], |row| row.get(0))
                    .optional()
            })
            .map_err(map_err)
        })
        .await
    }

    async fn consume_otp(&self, record: &OtpRecord, now: UnixTime) -> StoreResult<bool> {
        let changed = self
            .execute(
                "UPDATE otps SET consumed = 1 WHERE id = ?1 AND consumed = 0 AND expires_at > ?2",
                (id_to_sql(&record.id), now),
            )
            .await?;
        Ok(changed == 1)
    }
}

/// The row as stored, decoded outside the SQLite closure so malformed values become store errors.
type RawOtp = (String, String, String, String, String, i64, i64, u32, bool);

fn read_row(row: &Row<'_>) -> rusqlite::Result<RawOtp> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ))
}

fn decode(raw: RawOtp) -> StoreResult<OtpRecord> {
    let (id, address, client_id, password, facts, created_at, expires_at, tries_left, consumed) =
        raw;
    let malformed = |what: &str| StoreError::internal(format!("malformed stored otp {what}"));
    Ok(OtpRecord {
        id: OtpId(Uuid::parse_str(&id).map_err(|_| malformed("id"))?),
        address: AddressKey(hash_from_column(&address)?),
        client_id: ClientId::parse(&client_id).map_err(|_| malformed("client id"))?,
        password: OtpHash::from_phc(password),
        facts: FactsHash(hash_from_column(&facts)?),
        created_at,
        expires_at,
        tries_left,
        consumed,
    })
}
