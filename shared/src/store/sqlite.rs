//! The embedded SQLite backend (local default).
//!
//! One database file under `DATA_DIR`, shared by the local server and `tokenctl` running at the
//! same time: WAL lets readers and a writer proceed together, the busy timeout makes a writer
//! wait for the other process instead of failing, and every read-then-write runs in a
//! `BEGIN IMMEDIATE` transaction so that two writers serialise rather than deadlock.
//!
//! Keys, the fields conditions look at, and every `expires_at` are real columns; the rest of an
//! entity is a JSON `body`. Where a field can change after insert (a family's current token, a
//! refresh token's `rotated_at`, ...) the column is authoritative and is laid over the body on
//! read, so a single `UPDATE` of the column is the whole write.
//!
//! rusqlite is synchronous, so each operation runs on the blocking pool with the connection
//! behind a mutex; the async runtime is never blocked on disk or on the other process's lock.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{
    FamilyCreated, Inserted, NewFamily, Rotated, Rotation, Store, StoreError, StoreResult,
};
use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, AuthToken, Client, ClientId, Company, ConsumerKey, Family, FamilyId,
    LegacyApp, LegacyExchange, LegacyToken, Login, PrincipalId, RefreshTokenRecord, TokenId, User,
};
use crate::secrets::TokenHash;

/// The database file's name under `DATA_DIR`.
pub const FILE_NAME: &str = "tokens.sqlite3";

/// How long a write waits for the other process's write lock before giving up (→ 503).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Rows per transaction in a legacy import: large enough that a commit's fsync is amortised,
/// small enough that the other process never waits long for the write lock.
const IMPORT_BATCH: usize = 1_000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS clients (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    login TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS companies (
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS company_clients (
    company_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    PRIMARY KEY (company_id, client_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS legacy_apps (
    consumer_key TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS legacy_tokens (
    token_hash TEXT PRIMARY KEY,
    expires_at INTEGER,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS legacy_exchanges (
    token_hash TEXT PRIMARY KEY,
    family_id TEXT NOT NULL,
    exchanged_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS auth_tokens (
    token_hash TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS families (
    id TEXT PRIMARY KEY,
    current_token TEXT NOT NULL,
    generation INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    family_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    rotated_at INTEGER,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS access_tokens (
    jti TEXT PRIMARY KEY,
    family_id TEXT,
    expires_at INTEGER NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS failed_logins (
    login TEXT NOT NULL,
    at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS failed_logins_by_login ON failed_logins (login, at);
";

/// The embedded store. Cheap to clone; clones share one connection.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: Arc<PathBuf>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, its parent directory and its schema.
    pub fn open(path: &Path) -> StoreResult<Self> {
        Self::open_with_busy_timeout(path, BUSY_TIMEOUT)
    }

    fn open_with_busy_timeout(path: &Path, busy_timeout: Duration) -> StoreResult<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::Internal(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        let conn = Connection::open(path).map_err(map_err)?;
        // Set first, so that the pragmas and the schema below already wait for a concurrent
        // opener instead of failing.
        conn.busy_timeout(busy_timeout).map_err(map_err)?;
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(map_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Internal(format!(
                "{} cannot use WAL journaling (got {mode})",
                path.display()
            )));
        }
        // NORMAL is durable across application crashes in WAL mode; only an OS crash may lose
        // the last commits, which is acceptable for a local development store.
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(map_err)?;
        // No foreign keys: DynamoDB has none, and the backends must behave alike (an access
        // token may name a family the store never saw).
        conn.pragma_update(None, "foreign_keys", false)
            .map_err(map_err)?;
        conn.execute_batch(&format!("BEGIN IMMEDIATE;{SCHEMA}COMMIT;"))
            .map_err(map_err)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            path: Arc::new(path.to_owned()),
        })
    }

    /// Opens `DATA_DIR/tokens.sqlite3`.
    pub fn open_in_dir(data_dir: &Path) -> StoreResult<Self> {
        Self::open(&data_dir.join(FILE_NAME))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `op` with the connection on the blocking pool.
    async fn with_conn<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            // A panic while holding the lock leaves no half-done transaction behind (rusqlite
            // rolls back on drop), so a poisoned connection is still usable.
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            op(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Internal(format!("SQLite task failed: {e}")))?
    }

    /// Runs `op` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a
    /// transaction that reads before it writes never fails to upgrade its lock mid-way.
    async fn write_tx<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: FnOnce(&rusqlite::Transaction<'_>) -> StoreResult<T> + Send + 'static,
        T: Send + 'static,
    {
        self.with_conn(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(map_err)?;
            let value = op(&tx)?;
            tx.commit().map_err(map_err)?;
            Ok(value)
        })
        .await
    }

    /// Reads one JSON body by key, `None` if there is no row.
    async fn get_body<T, P>(&self, sql: &'static str, params: P) -> StoreResult<Option<T>>
    where
        T: DeserializeOwned + Send + 'static,
        P: rusqlite::Params + Send + 'static,
    {
        self.with_conn(move |conn| {
            let body: Option<String> = conn
                .prepare_cached(sql)
                .and_then(|mut stmt| stmt.query_row(params, |row| row.get(0)).optional())
                .map_err(map_err)?;
            body.map(|b| from_json(&b)).transpose()
        })
        .await
    }

    /// Executes one statement (autocommit: a single statement is atomic by itself).
    async fn execute<P>(&self, sql: &'static str, params: P) -> StoreResult<usize>
    where
        P: rusqlite::Params + Send + 'static,
    {
        self.with_conn(move |conn| {
            conn.prepare_cached(sql)
                .and_then(|mut stmt| stmt.execute(params))
                .map_err(map_err)
        })
        .await
    }
}

/// Busy or locked after the busy timeout means the other process held the lock too long: the
/// request may succeed later (503). Everything else is a 500. Messages carry SQLite's text,
/// which never includes bound values, so no credential or hash can leak through them.
fn map_err(error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Unavailable(format!("SQLite database is busy: {error}"))
        }
        _ => StoreError::Internal(format!("SQLite: {error}")),
    }
}

fn to_json<T: Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Internal(format!("cannot serialise a stored item: {e}")))
}

/// serde_json's messages may quote the offending value, so only its position is reported.
fn from_json<T: DeserializeOwned>(body: &str) -> StoreResult<T> {
    serde_json::from_str(body).map_err(|e| {
        StoreError::Internal(format!(
            "malformed stored {} ({:?} error at line {}, column {})",
            std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("item"),
            e.classify(),
            e.line(),
            e.column()
        ))
    })
}

fn hash_from_column(text: &str) -> StoreResult<TokenHash> {
    TokenHash::from_hex(text)
        .map_err(|_| StoreError::Internal("malformed stored token hash".into()))
}

fn id_to_sql(id: &impl std::fmt::Display) -> String {
    id.to_string()
}

/// A family row: the body laid under the mutable columns.
fn family_from_row(
    body: &str,
    current_token: &str,
    generation: u32,
    expires_at: UnixTime,
    revoked_at: Option<UnixTime>,
) -> StoreResult<Family> {
    let mut family: Family = from_json(body)?;
    family.current_token = hash_from_column(current_token)?;
    family.generation = generation;
    family.expires_at = expires_at;
    family.revoked_at = revoked_at;
    Ok(family)
}

fn insert_refresh_token(
    tx: &rusqlite::Transaction<'_>,
    record: &RefreshTokenRecord,
) -> StoreResult<()> {
    let body = to_json(record)?;
    // A plain INSERT: a hash collision is a bug, and must not overwrite an issued token.
    tx.prepare_cached(
        "INSERT INTO refresh_tokens (token_hash, family_id, expires_at, rotated_at, body)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            record.token_hash.to_hex(),
            id_to_sql(&record.family_id),
            record.expires_at,
            record.rotated_at,
            body,
        ])
    })
    .map_err(map_err)?;
    Ok(())
}

const UPSERT_ACCESS_TOKEN: &str =
    "INSERT OR REPLACE INTO access_tokens (jti, family_id, expires_at, revoked, body)
     VALUES (?1, ?2, ?3, ?4, ?5)";

fn access_token_params(
    record: &AccessTokenRecord,
) -> StoreResult<(String, Option<String>, UnixTime, bool, String)> {
    Ok((
        id_to_sql(&record.jti),
        record.family_id.as_ref().map(id_to_sql),
        record.expires_at,
        record.revoked,
        to_json(record)?,
    ))
}

fn insert_access_token(
    tx: &rusqlite::Transaction<'_>,
    record: &AccessTokenRecord,
) -> StoreResult<()> {
    let params = access_token_params(record)?;
    tx.prepare_cached(UPSERT_ACCESS_TOKEN)
        .and_then(|mut stmt| stmt.execute(params))
        .map_err(map_err)?;
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    async fn put_client(&self, client: &Client) -> StoreResult<()> {
        let params = (id_to_sql(&client.id), to_json(client)?);
        self.execute(
            "INSERT OR REPLACE INTO clients (id, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<Client>> {
        self.get_body("SELECT body FROM clients WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        let params = (
            id_to_sql(&user.id),
            user.login.as_str().to_owned(),
            to_json(user)?,
        );
        // OR IGNORE covers both the id's primary key and the login's unique constraint, in one
        // atomic statement.
        let changed = self
            .execute(
                "INSERT OR IGNORE INTO users (id, login, body) VALUES (?1, ?2, ?3)",
                params,
            )
            .await?;
        Ok(if changed == 1 {
            Inserted::Inserted
        } else {
            Inserted::AlreadyExists
        })
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        let params = (
            id_to_sql(&user.id),
            user.login.as_str().to_owned(),
            to_json(user)?,
        );
        // Not INSERT OR REPLACE: on a login taken by another user, REPLACE would delete that
        // user; an upsert on the id fails on the unique login instead.
        self.execute(
            "INSERT INTO users (id, login, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET login = excluded.login, body = excluded.body",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.get_body("SELECT body FROM users WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        self.get_body(
            "SELECT body FROM users WHERE login = ?1",
            [login.as_str().to_owned()],
        )
        .await
    }

    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        let params = (id_to_sql(&company.id), to_json(company)?);
        self.execute(
            "INSERT OR REPLACE INTO companies (id, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.get_body("SELECT body FROM companies WHERE id = ?1", [id_to_sql(id)])
            .await
    }

    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        self.execute(
            "INSERT OR IGNORE INTO company_clients (company_id, client_id) VALUES (?1, ?2)",
            [id_to_sql(company), id_to_sql(client)],
        )
        .await?;
        Ok(())
    }

    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let params = [id_to_sql(company), id_to_sql(client)];
        self.with_conn(move |conn| {
            conn.prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM company_clients
                                WHERE company_id = ?1 AND client_id = ?2)",
            )
            .and_then(|mut stmt| stmt.query_row(params, |row| row.get(0)))
            .map_err(map_err)
        })
        .await
    }

    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        let params = (app.consumer_key.as_str().to_owned(), to_json(app)?);
        self.execute(
            "INSERT OR REPLACE INTO legacy_apps (consumer_key, body) VALUES (?1, ?2)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.get_body(
            "SELECT body FROM legacy_apps WHERE consumer_key = ?1",
            [key.as_str().to_owned()],
        )
        .await
    }

    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        for chunk in tokens.chunks(IMPORT_BATCH) {
            // Serialised before taking the lock, so the lock is held only for the inserts.
            let rows = chunk
                .iter()
                .map(|t| Ok((t.token_hash.to_hex(), t.expires_at, to_json(t)?)))
                .collect::<StoreResult<Vec<_>>>()?;
            // One transaction per chunk, the lock released in between, so the server keeps
            // answering while a large import runs.
            self.write_tx(move |tx| {
                let mut stmt = tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO legacy_tokens (token_hash, expires_at, body)
                         VALUES (?1, ?2, ?3)",
                    )
                    .map_err(map_err)?;
                for row in rows {
                    stmt.execute(row).map_err(map_err)?;
                }
                Ok(())
            })
            .await?;
        }
        Ok(())
    }

    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        self.get_body(
            "SELECT body FROM legacy_tokens
             WHERE token_hash = ?1 AND (expires_at IS NULL OR expires_at > ?2)",
            (hash.to_hex(), now),
        )
        .await
    }

    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        let hex = hash.to_hex();
        let token_hash = hash.clone();
        let row: Option<(String, UnixTime)> = self
            .with_conn(move |conn| {
                conn.prepare_cached(
                    "SELECT family_id, exchanged_at FROM legacy_exchanges WHERE token_hash = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row([hex], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)
            })
            .await?;
        row.map(|(family_id, exchanged_at)| {
            Ok(LegacyExchange {
                token_hash,
                family_id: FamilyId::parse(&family_id)
                    .map_err(|_| StoreError::Internal("malformed stored family id".into()))?,
                exchanged_at,
            })
        })
        .transpose()
    }

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

    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        let family = new.family.clone();
        let family_body = to_json(&family)?;
        let refresh = new.refresh_token.clone();
        let access = new.access_token.clone();
        let exchange = new.legacy_exchange.clone();
        self.write_tx(move |tx| {
            if let Some(update) = &exchange {
                let linked: Option<String> = tx
                    .prepare_cached("SELECT family_id FROM legacy_exchanges WHERE token_hash = ?1")
                    .and_then(|mut stmt| {
                        stmt.query_row([update.exchange.token_hash.to_hex()], |row| row.get(0))
                            .optional()
                    })
                    .map_err(map_err)?;
                let seen = update.previous_family.as_ref().map(id_to_sql);
                if linked != seen {
                    // Checked before any write, so losing leaves nothing behind.
                    return Ok(FamilyCreated::LegacyExchangeRaced);
                }
            }

            // A plain INSERT: an id collision is a bug, and must not overwrite a family.
            tx.prepare_cached(
                "INSERT INTO families (id, current_token, generation, expires_at, revoked_at, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id_to_sql(&family.id),
                    family.current_token.to_hex(),
                    family.generation,
                    family.expires_at,
                    family.revoked_at,
                    family_body,
                ])
            })
            .map_err(map_err)?;
            insert_refresh_token(tx, &refresh)?;
            insert_access_token(tx, &access)?;

            if let Some(update) = &exchange {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO legacy_exchanges (token_hash, family_id, exchanged_at)
                     VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        update.exchange.token_hash.to_hex(),
                        id_to_sql(&update.exchange.family_id),
                        update.exchange.exchanged_at,
                    ])
                })
                .map_err(map_err)?;
                if let Some(previous) = &update.previous_family {
                    tx.prepare_cached(
                        "UPDATE families SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                    )
                    .and_then(|mut stmt| {
                        stmt.execute(params![id_to_sql(previous), update.exchange.exchanged_at])
                    })
                    .map_err(map_err)?;
                }
            }
            Ok(FamilyCreated::Created)
        })
        .await
    }

    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        let id = id_to_sql(id);
        self.with_conn(move |conn| {
            let row: Option<(String, String, u32, UnixTime, Option<UnixTime>)> = conn
                .prepare_cached(
                    "SELECT body, current_token, generation, expires_at, revoked_at
                     FROM families WHERE id = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![id, now], |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                        ))
                    })
                    .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, current, generation, expires_at, revoked_at)| {
                family_from_row(&body, &current, generation, expires_at, revoked_at)
            })
            .transpose()
        })
        .await
    }

    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        let hex = hash.to_hex();
        self.with_conn(move |conn| {
            let row: Option<(String, Option<UnixTime>)> = conn
                .prepare_cached(
                    "SELECT body, rotated_at FROM refresh_tokens
                     WHERE token_hash = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hex, now], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, rotated_at)| {
                let mut record: RefreshTokenRecord = from_json(&body)?;
                record.rotated_at = rotated_at;
                Ok(record)
            })
            .transpose()
        })
        .await
    }

    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        let family_id = id_to_sql(&rotation.family_id);
        let presented = rotation.presented.to_hex();
        let successor = rotation.successor.clone();
        let access = rotation.access_token.clone();
        let now = rotation.now;
        self.write_tx(move |tx| {
            // The condition is the whole race protection: of concurrent rotations of one token
            // only the first sees it current, whichever process or connection it comes from.
            let changed = tx
                .prepare_cached(
                    "UPDATE families SET current_token = ?1, generation = ?2, expires_at = ?3
                     WHERE id = ?4 AND current_token = ?5 AND revoked_at IS NULL
                       AND expires_at > ?6",
                )
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        successor.token_hash.to_hex(),
                        successor.generation,
                        successor.expires_at,
                        family_id,
                        presented,
                        now,
                    ])
                })
                .map_err(map_err)?;
            if changed == 0 {
                return Ok(Rotated::NotCurrent);
            }
            tx.prepare_cached("UPDATE refresh_tokens SET rotated_at = ?2 WHERE token_hash = ?1")
                .and_then(|mut stmt| stmt.execute(params![presented, now]))
                .map_err(map_err)?;
            insert_refresh_token(tx, &successor)?;
            insert_access_token(tx, &access)?;
            Ok(Rotated::Rotated)
        })
        .await
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        let id = id_to_sql(id);
        self.write_tx(move |tx| {
            // COALESCE keeps the first revocation time, so revoking again changes nothing.
            let changed = tx
                .prepare_cached(
                    "UPDATE families SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1",
                )
                .and_then(|mut stmt| stmt.execute(params![id, now]))
                .map_err(map_err)?;
            Ok(changed > 0)
        })
        .await
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        let params = access_token_params(record)?;
        self.execute(UPSERT_ACCESS_TOKEN, params).await?;
        Ok(())
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        let jti = id_to_sql(jti);
        self.with_conn(move |conn| {
            let row: Option<(String, bool)> = conn
                .prepare_cached(
                    "SELECT a.body, a.revoked OR f.revoked_at IS NOT NULL
                     FROM access_tokens a LEFT JOIN families f ON f.id = a.family_id
                     WHERE a.jti = ?1 AND a.expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![jti, now], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(map_err)?;
            row.map(|(body, revoked)| {
                let mut record: AccessTokenRecord = from_json(&body)?;
                record.revoked = revoked;
                Ok(record)
            })
            .transpose()
        })
        .await
    }

    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        let login = login.as_str().to_owned();
        self.write_tx(move |tx| {
            // SQLite has no TTL: drop this login's expired failures as new ones arrive, so the
            // table stays as small as the lockout window.
            tx.prepare_cached("DELETE FROM failed_logins WHERE login = ?1 AND expires_at <= ?2")
                .and_then(|mut stmt| stmt.execute(params![login, at]))
                .map_err(map_err)?;
            tx.prepare_cached(
                "INSERT INTO failed_logins (login, at, expires_at) VALUES (?1, ?2, ?3)",
            )
            .and_then(|mut stmt| stmt.execute(params![login, at, expires_at]))
            .map_err(map_err)?;
            Ok(())
        })
        .await
    }

    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        let login = login.as_str().to_owned();
        self.with_conn(move |conn| {
            conn.prepare_cached("SELECT COUNT(*) FROM failed_logins WHERE login = ?1 AND at >= ?2")
                .and_then(|mut stmt| stmt.query_row(params![login, since], |row| row.get(0)))
                .map_err(map_err)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TokenId;

    /// A directory removed when dropped (the crate has no tempfile dependency).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> Self {
            use crate::random::{OsRandom, RandomExt};
            let dir = std::env::temp_dir().join(format!("sqlite-store-{}", OsRandom.uuid()));
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn opens_in_wal_mode_and_reopens() {
        let dir = TempDir::new();
        let store = SqliteStore::open_in_dir(&dir.0).unwrap();
        SqliteStore::open_in_dir(&dir.0).expect("the schema is created idempotently");
        let raw = Connection::open(store.path()).unwrap();
        let mode: String = raw
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert!(!format!("{store:?}").contains("Connection"));
    }

    /// Another process holding the write lock past the busy timeout is a 503, not a 500; and
    /// WAL keeps reads working meanwhile.
    #[tokio::test]
    async fn a_write_lock_held_too_long_is_unavailable() {
        let dir = TempDir::new();
        let path = dir.0.join(FILE_NAME);
        let store = SqliteStore::open_with_busy_timeout(&path, Duration::from_millis(50)).unwrap();
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();

        let login = Login::parse("someone").unwrap();
        let outcome = store.record_failed_login(&login, 10, 20).await;
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "transaction: {outcome:?}"
        );
        let company = PrincipalId::new(uuid::Uuid::nil());
        let client = ClientId::new(uuid::Uuid::nil());
        let outcome = store.enable_company_for_client(&company, &client).await;
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "single statement: {outcome:?}"
        );
        assert_eq!(store.count_failed_logins(&login, 0).await.unwrap(), 0);

        other.execute_batch("COMMIT").unwrap();
        store.record_failed_login(&login, 10, 20).await.unwrap();
        assert_eq!(store.count_failed_logins(&login, 0).await.unwrap(), 1);
    }

    #[tokio::test]
    async fn a_malformed_row_is_internal_and_not_echoed() {
        let dir = TempDir::new();
        let store = SqliteStore::open_in_dir(&dir.0).unwrap();
        let jti = TokenId::new(uuid::Uuid::nil());
        Connection::open(store.path())
            .unwrap()
            .execute(
                "INSERT INTO access_tokens (jti, expires_at, body) VALUES (?1, ?2, ?3)",
                params![jti.to_string(), i64::MAX, r#"{"jti": "hunter2-secret"}"#],
            )
            .unwrap();
        match store.get_access_token(&jti, 0).await {
            Err(StoreError::Internal(message)) => {
                assert!(!message.contains("hunter2"), "{message}")
            }
            other => panic!("expected an internal error, got {other:?}"),
        }
    }
}
