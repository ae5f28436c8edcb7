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
//! rusqlite is synchronous and SQLite's work is short (pages in memory, a WAL append per
//! commit, no `fsync` but at checkpoints), so it runs on the calling runtime thread rather
//! than behind a hand-off to a thread of its own. Reads borrow a read-only connection
//! (`readers.rs`). Writes go through the one write connection and are group-committed
//! (`writer.rs`): the writes of concurrent requests share one transaction, and each is
//! answered only after that transaction commits. Waiting for the other process's write lock is
//! moved to the blocking pool, so a runtime thread never waits on it.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tracing::Instrument;

use super::{StoreError, StoreResult};
use crate::secrets::TokenHash;
use readers::Readers;
use writer::Writer;

mod audit;
mod auth_tokens;
mod authorization_codes;
mod batch;
mod checkpoints;
mod clients;
mod device_authorizations;
mod directory;
mod document_clients;
mod families;
mod federation;
mod legacy;
mod lockout;
mod open_files;
mod otp;
mod passkeys;
mod principals;
mod pushed_authorizations;
mod rate_limits;
mod readers;
mod registration_tokens;
mod replays;
mod revocation;
mod second_factors;
mod sessions;
mod signing_key_ring;
pub mod sweeper;
#[cfg(test)]
mod tests;
mod writer;

/// The database file's name under `DATA_DIR`.
pub const FILE_NAME: &str = "tokens.sqlite3";

/// How long a write waits for the other process's write lock before giving up (→ 503).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

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
CREATE TABLE IF NOT EXISTS authorization_codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    redeemed_at INTEGER,
    family_id TEXT,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS device_authorizations (
    device_code_hash TEXT PRIMARY KEY,
    user_code_hash TEXT NOT NULL UNIQUE,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS device_authorizations_by_expiry ON device_authorizations (expires_at);
CREATE TABLE IF NOT EXISTS pushed_authorizations (
    request_uri_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pushed_authorizations_by_expiry ON pushed_authorizations (expires_at);
CREATE TABLE IF NOT EXISTS document_clients (
    id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS document_clients_by_expiry ON document_clients (expires_at);
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
DROP TABLE IF EXISTS failed_logins;
CREATE TABLE IF NOT EXISTS login_attempts (
    login TEXT PRIMARY KEY,
    window_start INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS login_attempts_by_expiry ON login_attempts (expires_at);
CREATE TABLE IF NOT EXISTS otps (
    id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    client_id TEXT NOT NULL,
    password TEXT NOT NULL,
    facts TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    tries_left INTEGER NOT NULL,
    consumed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS otps_by_address ON otps (address, created_at);
CREATE TABLE IF NOT EXISTS rate_windows (
    key TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX IF NOT EXISTS rate_windows_by_expiry ON rate_windows (expires_at);
CREATE TABLE IF NOT EXISTS rate_blocks (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_blocks_by_expiry ON rate_blocks (expires_at);
CREATE TABLE IF NOT EXISTS used_jtis (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS used_jtis_by_expiry ON used_jtis (expires_at);
CREATE TABLE IF NOT EXISTS registration_tokens (
    hash TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS registration_tokens_by_expiry ON registration_tokens (expires_at);
CREATE UNIQUE INDEX IF NOT EXISTS users_by_email
    ON users (lower(json_extract(body, '$.email')))
    WHERE json_extract(body, '$.email') IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS users_by_external_id
    ON users (json_extract(body, '$.company_id'), json_extract(body, '$.external_id'))
    WHERE json_extract(body, '$.external_id') IS NOT NULL;
CREATE INDEX IF NOT EXISTS users_by_company
    ON users (json_extract(body, '$.company_id'), id)
    WHERE json_extract(body, '$.company_id') IS NOT NULL;
CREATE TABLE IF NOT EXISTS provisioning_tokens (
    token_hash TEXT PRIMARY KEY,
    company_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provisioning_tokens_by_company
    ON provisioning_tokens (company_id, created_at);
CREATE TABLE IF NOT EXISTS directory_groups (
    company_id TEXT NOT NULL,
    id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (company_id, id)
);
CREATE TABLE IF NOT EXISTS audit_events (
    id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    principal_id TEXT,
    client_id TEXT,
    family_id TEXT,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_events_by_principal ON audit_events (principal_id, at);
CREATE INDEX IF NOT EXISTS audit_events_by_client ON audit_events (client_id, at);
CREATE INDEX IF NOT EXISTS audit_events_by_family ON audit_events (family_id, at);
CREATE TABLE IF NOT EXISTS passkeys (
    principal_id TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (principal_id, credential_id)
);
CREATE TABLE IF NOT EXISTS passkey_ceremonies (
    id_hash TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passkey_ceremonies_by_expiry ON passkey_ceremonies (expires_at);
CREATE TABLE IF NOT EXISTS identity_providers (
    idp_id TEXT PRIMARY KEY,
    company_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS identity_providers_by_company
    ON identity_providers (company_id, created_at);
CREATE INDEX IF NOT EXISTS identity_providers_by_issuer
    ON identity_providers (json_extract(body, '$.issuer'));
CREATE TABLE IF NOT EXISTS idp_domains (
    domain TEXT NOT NULL,
    company_id TEXT NOT NULL,
    idp_id TEXT NOT NULL,
    PRIMARY KEY (domain, company_id)
);
CREATE INDEX IF NOT EXISTS idp_domains_by_idp ON idp_domains (idp_id);
CREATE TABLE IF NOT EXISTS federation_links (
    idp_id TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    linked_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (idp_id, subject)
);
CREATE INDEX IF NOT EXISTS federation_links_by_user ON federation_links (user_id, linked_at);
CREATE TABLE IF NOT EXISTS upstream_requests (
    state_hash TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS upstream_requests_by_expiry ON upstream_requests (expires_at);
CREATE TABLE IF NOT EXISTS sessions (
    principal_id TEXT NOT NULL,
    sid TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (principal_id, sid)
);
CREATE TABLE IF NOT EXISTS consents (
    principal_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (principal_id, client_id)
);
CREATE TABLE IF NOT EXISTS totp_factors (
    principal_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS signing_key_ring (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    document TEXT NOT NULL
);
";

/// The embedded store. Cheap to clone; clones share its connections.
#[derive(Clone)]
pub struct SqliteStore {
    writer: Arc<Writer>,
    readers: Arc<Readers>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, its parent directory and its schema.
    pub fn open(path: &Path) -> StoreResult<Self> {
        Self::open_with_busy_timeout(path, BUSY_TIMEOUT)
    }

    /// As [`SqliteStore::open`], waiting at most `busy_timeout` for another connection's lock
    /// before a query answers `Unavailable`: tests that hold a lock on purpose wait less.
    pub fn open_with_busy_timeout(path: &Path, busy_timeout: Duration) -> StoreResult<Self> {
        Self::open_with(path, busy_timeout, checkpoints::RESTART_FRAMES)
    }

    /// As [`SqliteStore::open_with_busy_timeout`], the WAL starting over past `restart_frames`
    /// (`checkpoints.rs`): tests need not write megabytes to see it.
    fn open_with(path: &Path, busy_timeout: Duration, restart_frames: u32) -> StoreResult<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::internal(format!("cannot create {}: {e}", parent.display()))
                    .caused_by(e)
            })?;
        }
        // Stores on one file share its writer (`open_files.rs`).
        let writer =
            open_files::writer_for(path, || open_writer(path, busy_timeout, restart_frames))?;
        Ok(Self {
            writer,
            readers: Arc::new(Readers::new(path.to_owned(), busy_timeout)),
        })
    }

    /// Opens `DATA_DIR/tokens.sqlite3`.
    pub fn open_in_dir(data_dir: &Path) -> StoreResult<Self> {
        Self::open(&data_dir.join(FILE_NAME))
    }

    pub fn path(&self) -> &Path {
        self.readers.path()
    }

    /// Runs the read `op` on a read-only connection.
    async fn read<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: FnOnce(&Connection) -> StoreResult<T>,
    {
        let _span = store_call::<F>().entered();
        self.readers.read(op)
    }

    /// Runs `op` inside the next group transaction (`BEGIN IMMEDIATE`: the write lock is taken
    /// up front, so a write that reads first never fails to upgrade its lock mid-way), in a
    /// savepoint of its own: an `Err` from `op` undoes its writes only. Answers once the
    /// transaction has committed.
    async fn write_tx<T, F>(&self, op: F) -> StoreResult<T>
    where
        F: FnOnce(&rusqlite::Transaction<'_>) -> StoreResult<T> + Send + 'static,
        T: Send + 'static,
    {
        self.writer.write(op).instrument(store_call::<F>()).await
    }

    /// Reads one JSON body by key, `None` if there is no row.
    async fn get_body<T, P>(&self, sql: &'static str, params: P) -> StoreResult<Option<T>>
    where
        T: DeserializeOwned + Send + 'static,
        P: rusqlite::Params + Send + 'static,
    {
        self.read(move |conn| {
            let body: Option<String> = conn
                .prepare_cached(sql)
                .and_then(|mut stmt| stmt.query_row(params, |row| row.get(0)).optional())
                .map_err(map_err)?;
            body.map(|b| from_json(&b)).transpose()
        })
        .await
    }

    /// Executes one write statement, group-committed like [`Self::write_tx`].
    async fn execute<P>(&self, sql: &'static str, params: P) -> StoreResult<usize>
    where
        P: rusqlite::Params + Send + 'static,
    {
        self.write_tx(move |tx| {
            tx.prepare_cached(sql)
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
            StoreError::unavailable(format!("SQLite database is busy: {error}"))
        }
        _ => StoreError::internal(format!("SQLite: {error}")),
    }
    .caused_by(error)
}

/// The file's write connection: WAL journaling, its pragmas and the schema.
fn open_writer(
    path: &Path,
    busy_timeout: Duration,
    restart_frames: u32,
) -> StoreResult<Arc<Writer>> {
    let conn = Connection::open(path).map_err(map_err)?;
    // Set first, so that the pragmas and the schema below already wait for a concurrent
    // opener instead of failing.
    conn.busy_timeout(busy_timeout).map_err(map_err)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(map_err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::internal(format!(
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
    // Each write of a group runs in a savepoint, whose statement journal SQLite spills to a
    // temporary file past 64 KiB: a refresh rotation's pages did, about every tenth request
    // under load (docs/benchmarks.md). In memory it is a copy, never a file.
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(map_err)?;
    conn.execute_batch(&format!("BEGIN IMMEDIATE;{SCHEMA}COMMIT;"))
        .map_err(map_err)?;
    checkpoints::leave_to_the_thread(&conn)?;
    let wal = checkpoints::start(path, restart_frames)?;
    Ok(Arc::new(Writer::new(conn, busy_timeout, wal)?))
}

/// The store's mutexes (the write queue and connection, the idle readers) stay usable after a
/// panic: every write and read runs under `catch_unwind`, and a write that panicked is rolled
/// back to its savepoint.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn to_json<T: Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::internal(format!("cannot serialise a stored item: {e}")))
}

/// serde_json's messages may quote the offending value, so only its position is reported.
fn from_json<T: DeserializeOwned>(body: &str) -> StoreResult<T> {
    serde_json::from_str(body).map_err(|e| {
        StoreError::internal(format!(
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

/// The span of one store call, for traces (`debug`: never in the logs). Named by the store
/// method that submitted `F`, read from the closure's type name
/// (`…::SqliteStore>::get_client::{{closure}}…` → `get_client`): no list to keep in step.
fn store_call<F>() -> tracing::Span {
    tracing::debug_span!(
        "sqlite",
        operation = operation_of(std::any::type_name::<F>()),
        otel.kind = "client",
    )
}

fn operation_of(closure_type: &str) -> &str {
    let method = closure_type
        .split_once("::{{closure}}")
        .map_or(closure_type, |(method, _)| method);
    method.rsplit("::").next().unwrap_or(method)
}

#[cfg(test)]
mod store_call_tests {
    #[test]
    fn a_store_call_is_named_by_the_method_that_submitted_it() {
        fn get_client() -> &'static str {
            fn name_of<F>(_: &F) -> &'static str {
                std::any::type_name::<F>()
            }
            name_of(&|| ())
        }
        assert_eq!(super::operation_of(get_client()), "get_client");
        assert_eq!(super::operation_of("plain"), "plain");
    }
}
