//! Opens the backend the configuration names (`STORE`), for every binary alike.

use std::path::PathBuf;
use std::sync::Arc;
#[cfg(feature = "dynamodb")]
use std::time::Duration;

#[cfg(feature = "dynamodb")]
use super::dynamodb::DynamoStore;
#[cfg(feature = "sqlite")]
use super::sqlite::SqliteStore;
#[cfg(feature = "dynamodb")]
use tokio::sync::OnceCell;

#[cfg(feature = "dynamodb")]
use super::signing_key_ring::{RingWrite, VersionedRing};
use super::{SigningKeyRingStore, Store, StoreResult};

/// Which backend holds the data (`STORE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Sqlite,
    DynamoDb,
}

/// Where the store is: the part of the configuration this layer reads, handed down by the
/// binaries (which read the environment once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreLocation {
    pub kind: StoreKind,
    /// The SQLite file's directory (`DATA_DIR`).
    pub data_dir: PathBuf,
    /// The DynamoDB table (`TABLE_NAME`).
    pub table_name: String,
    /// DynamoDB Local's address (`DYNAMODB_ENDPOINT`), where the table is created if missing.
    pub dynamodb_endpoint: Option<String>,
}

/// How long opening the DynamoDB store waits for its warm-up request: a Lambda init has ten
/// seconds in all, and a table that is slow to answer must not use them up.
#[cfg(feature = "dynamodb")]
const WARM_UP_TIMEOUT: Duration = Duration::from_secs(2);

/// The embedded SQLite store under `DATA_DIR`, or the DynamoDB table `TABLE_NAME`.
///
/// In AWS the deployment template owns the table; opening it sends one read (see [`warm_up`]) so
/// that the connection is ready before the first request. (The functions and the local server
/// open their stores with [`open_with_ring`], whose key ring read does that instead.) With
/// `DYNAMODB_ENDPOINT` (DynamoDB Local, which starts empty) the table is created if missing, so
/// that local use needs no setup step.
///
/// `STORE=sqlite` in a binary built without the `sqlite` feature (the Lambda functions) is a
/// configuration error, not a silent fallback.
pub async fn open(config: &StoreLocation) -> StoreResult<Arc<dyn Store>> {
    open_warm(config, true).await
}

/// [`open`] without the warm-up read, for a process that writes one item and ends (the
/// scheduled key rotation's audit event), whose role may not read that item.
pub async fn open_cold(config: &StoreLocation) -> StoreResult<Arc<dyn Store>> {
    open_warm(config, false).await
}

async fn open_warm(config: &StoreLocation, warm: bool) -> StoreResult<Arc<dyn Store>> {
    Ok(match config.kind {
        StoreKind::Sqlite => open_sqlite(config)?,
        StoreKind::DynamoDb => open_dynamodb(config, warm).await?,
    })
}

#[cfg(feature = "dynamodb")]
async fn open_dynamodb(config: &StoreLocation, warm: bool) -> StoreResult<Arc<dyn Store>> {
    let endpoint = config.dynamodb_endpoint.as_deref();
    let store = DynamoStore::connect(&config.table_name, endpoint).await;
    if endpoint.is_some() {
        store.create_table_if_missing().await?;
    } else if warm {
        warm_up(&store).await;
    }
    Ok(Arc::new(store))
}

#[cfg(not(feature = "dynamodb"))]
async fn open_dynamodb(_config: &StoreLocation, _warm: bool) -> StoreResult<Arc<dyn Store>> {
    Err(without_dynamodb())
}

/// `STORE=dynamodb` in a binary built without the DynamoDB store.
#[cfg(not(feature = "dynamodb"))]
fn without_dynamodb() -> super::StoreError {
    super::StoreError::internal(
        "configuration: STORE=dynamodb, but this binary is built without the DynamoDB store \
         (cargo feature `dynamodb` of token-store)"
            .to_owned(),
    )
}

/// When a process's stores check that they can be used (docs/decisions.md, "Lazy start-up").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// At start: with `DYNAMODB_ENDPOINT` the table is checked (created if missing) before this
    /// returns. The local server and tokenctl, whose start-up errors are the clearest place to
    /// say what is wrong.
    AtStart,
    /// Nothing is sent at start (a Lambda function's init): with `DYNAMODB_ENDPOINT`, the key
    /// ring's first read goes first, as deployed, and the table is checked (created if
    /// missing) only when that read fails.
    OnFirstRingRead,
}

/// The store and the signing key ring's store, for a process that serves requests. On DynamoDB
/// both are one SDK client (one connection pool, one configuration load) and one table check;
/// no warm-up read is sent, since the key ring's first read is one (`warm_up`'s purpose). On
/// SQLite, two connections to one file, as [`open`] and [`open_signing_key_ring`] give.
pub async fn open_with_ring(
    config: &StoreLocation,
    readiness: Readiness,
) -> StoreResult<(Arc<dyn Store>, Arc<dyn SigningKeyRingStore>)> {
    Ok(match config.kind {
        StoreKind::Sqlite => (open_sqlite(config)?, open_sqlite_ring(config)?),
        StoreKind::DynamoDb => open_dynamodb_with_ring(config, readiness).await?,
    })
}

#[cfg(not(feature = "dynamodb"))]
async fn open_dynamodb_with_ring(
    _config: &StoreLocation,
    _readiness: Readiness,
) -> StoreResult<(Arc<dyn Store>, Arc<dyn SigningKeyRingStore>)> {
    Err(without_dynamodb())
}

#[cfg(feature = "dynamodb")]
async fn open_dynamodb_with_ring(
    config: &StoreLocation,
    readiness: Readiness,
) -> StoreResult<(Arc<dyn Store>, Arc<dyn SigningKeyRingStore>)> {
    let endpoint = config.dynamodb_endpoint.as_deref();
    let store = DynamoStore::connect(&config.table_name, endpoint).await;
    let ring: Arc<dyn SigningKeyRingStore> = match (endpoint, readiness) {
        (None, _) => Arc::new(store.clone()),
        (Some(_), Readiness::AtStart) => {
            store.create_table_if_missing().await?;
            Arc::new(store.clone())
        }
        (Some(_), Readiness::OnFirstRingRead) => Arc::new(TableCheckedFirst {
            store: store.clone(),
            checked: OnceCell::new(),
        }),
    };
    Ok((Arc::new(store), ring))
}

/// The key ring's store on DynamoDB Local for a process that starts without network calls. Its
/// first write checks the table first, once (a failed check is tried again next time); a read is
/// sent at once, and only one refused (not unavailable) checks the table and reads again. The
/// first read is the one a cold start's first request may wait for: checking first put three
/// more calls (`CreateTable`, `DescribeTable`, `DescribeTimeToLive`) before it, which a deployed
/// function, on a table that exists, never makes (docs/benchmarks.md, cold starts).
#[cfg(feature = "dynamodb")]
#[derive(Debug)]
struct TableCheckedFirst {
    store: DynamoStore,
    checked: OnceCell<()>,
}

#[cfg(feature = "dynamodb")]
impl TableCheckedFirst {
    async fn checked(&self) -> StoreResult<&DynamoStore> {
        self.checked
            .get_or_try_init(|| self.store.create_table_if_missing())
            .await?;
        Ok(&self.store)
    }
}

#[cfg(feature = "dynamodb")]
#[async_trait::async_trait]
impl SigningKeyRingStore for TableCheckedFirst {
    async fn load_signing_key_ring(&self) -> StoreResult<Option<VersionedRing>> {
        if self.checked.initialized() {
            return self.store.load_signing_key_ring().await;
        }
        match self.store.load_signing_key_ring().await {
            // Unreachable or timed out: the check would fail the same way, only later.
            Err(error) if error.is_unavailable() => Err(error),
            // Refused (no table yet, `ResourceNotFoundException`): what the check is for.
            Err(_) => self.checked().await?.load_signing_key_ring().await,
            ring => ring,
        }
    }

    async fn replace_signing_key_ring(
        &self,
        expected: Option<u64>,
        document: &str,
    ) -> StoreResult<RingWrite> {
        self.checked()
            .await?
            .replace_signing_key_ring(expected, document)
            .await
    }
}

/// The signing key ring's store, on the backend [`open`] uses: a second handle, so that the
/// ring's wiring stays apart from the [`Store`] of the domain's aggregates. For SQLite it is a
/// second connection to the same file; for DynamoDB a client of the same table.
pub async fn open_signing_key_ring(
    config: &StoreLocation,
) -> StoreResult<Arc<dyn SigningKeyRingStore>> {
    Ok(match config.kind {
        StoreKind::Sqlite => open_sqlite_ring(config)?,
        StoreKind::DynamoDb => open_dynamodb_ring(config).await?,
    })
}

#[cfg(feature = "dynamodb")]
async fn open_dynamodb_ring(config: &StoreLocation) -> StoreResult<Arc<dyn SigningKeyRingStore>> {
    let endpoint = config.dynamodb_endpoint.as_deref();
    let store = DynamoStore::connect(&config.table_name, endpoint).await;
    if endpoint.is_some() {
        store.create_table_if_missing().await?;
    }
    Ok(Arc::new(store))
}

#[cfg(not(feature = "dynamodb"))]
async fn open_dynamodb_ring(_config: &StoreLocation) -> StoreResult<Arc<dyn SigningKeyRingStore>> {
    Err(without_dynamodb())
}

#[cfg(feature = "sqlite")]
fn open_sqlite_ring(config: &StoreLocation) -> StoreResult<Arc<dyn SigningKeyRingStore>> {
    Ok(Arc::new(SqliteStore::open_in_dir(&config.data_dir)?))
}

#[cfg(not(feature = "sqlite"))]
fn open_sqlite_ring(config: &StoreLocation) -> StoreResult<Arc<dyn SigningKeyRingStore>> {
    open_sqlite(config).map(|_| unreachable!("open_sqlite fails without the sqlite feature"))
}

#[cfg(feature = "sqlite")]
fn open_sqlite(config: &StoreLocation) -> StoreResult<Arc<dyn Store>> {
    Ok(Arc::new(SqliteStore::open_in_dir(&config.data_dir)?))
}

#[cfg(not(feature = "sqlite"))]
fn open_sqlite(_config: &StoreLocation) -> StoreResult<Arc<dyn Store>> {
    Err(super::StoreError::internal(
        "configuration: STORE=sqlite, but this binary is built without the embedded SQLite \
         store (cargo feature `sqlite` of token-store); set STORE=dynamodb"
            .to_owned(),
    ))
}

/// One `GetItem` of a key no item has, during the process's start (a Lambda function's init), so
/// that the first request does not pay for resolving credentials, the DNS lookup and the TLS
/// handshake: the connection stays in the client's pool. Any answer, an error included, has
/// done that work, so the outcome is only logged; a table unreachable for a moment must not
/// fail the start, and requests then connect on their own as they always could.
#[cfg(feature = "dynamodb")]
async fn warm_up(store: &DynamoStore) {
    use aws_sdk_dynamodb::types::AttributeValue;

    let key = || AttributeValue::S("WARM-UP".to_owned());
    let request = store
        .client()
        .get_item()
        .table_name(store.table_name())
        .key("pk", key())
        .key("sk", key())
        .send();
    match tokio::time::timeout(WARM_UP_TIMEOUT, request).await {
        Ok(Ok(_)) => tracing::debug!("DynamoDB connection warmed up"),
        Ok(Err(error)) => tracing::warn!(
            error = %aws_sdk_dynamodb::error::DisplayErrorContext(&error),
            "DynamoDB warm-up read failed; requests will connect on their own"
        ),
        Err(_) => tracing::warn!(
            timeout_ms = WARM_UP_TIMEOUT.as_millis() as u64,
            "DynamoDB warm-up read timed out; requests will connect on their own"
        ),
    }
}
