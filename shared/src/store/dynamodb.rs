//! The DynamoDB backend (production).
//!
//! One table, partition key `pk` (S) and sort key `sk` (S), TTL on `expires_at` (N, Unix
//! seconds). Every entity is one item whose other attributes are the entity's fields at the top
//! level, so that conditions can name them (`current_token`, `revoked_at`, `expires_at`,
//! `generation`, `family_id`). Absent optional fields are left out of the item rather than
//! stored as NULL, so `attribute_not_exists(revoked_at)` means "not revoked".
//!
//! | pk                      | sk                      | item                                  |
//! |-------------------------|-------------------------|---------------------------------------|
//! | `CLIENT#<client_id>`    | `CLIENT`                | client                                |
//! | `USER#<user_id>`        | `USER`                  | user                                  |
//! | `LOGIN#<login>`         | `LOGIN`                 | `user_id`: uniqueness of logins       |
//! | `COMPANY#<company_id>`  | `COMPANY`               | company                               |
//! | `COMPANY#<company_id>`  | `CLIENT#<client_id>`    | the company is enabled for the client |
//! | `LEGACYAPP#<key>`       | `LEGACYAPP`             | legacy app link                       |
//! | `LEGACY#<hash>`         | `LEGACY`                | imported legacy token (TTL if any)    |
//! | `LEGACY#<hash>`         | `EXCHANGE`              | the family of the latest exchange     |
//! | `FAMILY#<family_id>`    | `FAMILY`                | token family (TTL)                    |
//! | `REFRESH#<hash>`        | `REFRESH`               | refresh token record (TTL)            |
//! | `ACCESS#<jti>`          | `ACCESS`                | access token record (TTL)             |
//! | `AUTHTOKEN#<hash>`      | `AUTHTOKEN`             | company auth token (TTL)              |
//! | `FAILEDLOGIN#<login>`   | `<at, 20 digits>#<rnd>` | one failed password (TTL)             |
//!
//! `<hash>` is the hex SHA-256 of the credential; no credential is ever stored or logged.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::config::{Credentials, Region};
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, Put, PutRequest,
    ScalarAttributeType, Select, TableStatus, TimeToLiveSpecification, TimeToLiveStatus,
    TransactWriteItem, Update, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use futures::stream::{self, StreamExt, TryStreamExt};
use rand::Rng;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{
    FamilyCreated, Inserted, NewFamily, Rotated, Rotation, Store, StoreError, StoreResult,
};
use crate::clock::UnixTime;
use crate::domain::{
    AccessTokenRecord, AuthToken, Client as OAuthClient, ClientId, Company, ConsumerKey, Family,
    FamilyId, LegacyApp, LegacyExchange, LegacyToken, Login, PrincipalId, RefreshTokenRecord,
    TokenId, User,
};
use crate::secrets::TokenHash;

/// The SDK, so that users of [`DynamoStore::client`] can name its types without depending on
/// the same version themselves.
pub use aws_sdk_dynamodb as sdk;

type Item = HashMap<String, AttributeValue>;

const PK: &str = "pk";
const SK: &str = "sk";
/// The table's TTL attribute.
pub const TTL_ATTRIBUTE: &str = "expires_at";

/// BatchWriteItem's limit.
const BATCH_SIZE: usize = 25;
/// Batches of a legacy import in flight at once: enough to import 100,000 tokens in well under a
/// minute, few enough not to trip on-demand throttling on a fresh table.
const BATCHES_IN_FLIGHT: usize = 12;
/// Rounds of resubmitting a batch's `UnprocessedItems` before giving up as unavailable.
const BATCH_ATTEMPTS: u32 = 10;
/// Rounds of re-running a transaction that DynamoDB cancelled because another transaction held
/// one of its items. Conditions are re-evaluated each round, so the loser of a race ends in a
/// condition failure rather than an error.
const TRANSACTION_ATTEMPTS: u32 = 5;
/// How long `create_table_if_missing` waits for a new table to become ACTIVE (seconds on AWS,
/// instant on DynamoDB Local).
const TABLE_ACTIVE_TIMEOUT: Duration = Duration::from_secs(120);

/// Error codes that mean "too much traffic, try later": the caller answers 503.
const THROTTLING_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "Throttling",
    "TooManyRequestsException",
    // The SDK's retry of a transaction that is still running: it will finish either way.
    "TransactionInProgressException",
];

mod keys {
    use super::*;

    pub fn client(id: &ClientId) -> (String, &'static str) {
        (format!("CLIENT#{id}"), "CLIENT")
    }
    pub fn user(id: &PrincipalId) -> (String, &'static str) {
        (format!("USER#{id}"), "USER")
    }
    pub fn login(login: &Login) -> (String, &'static str) {
        (format!("LOGIN#{login}"), "LOGIN")
    }
    pub fn company(id: &PrincipalId) -> (String, &'static str) {
        (format!("COMPANY#{id}"), "COMPANY")
    }
    pub fn enablement(company: &PrincipalId, client: &ClientId) -> (String, String) {
        (format!("COMPANY#{company}"), format!("CLIENT#{client}"))
    }
    pub fn legacy_app(key: &ConsumerKey) -> (String, &'static str) {
        (format!("LEGACYAPP#{key}"), "LEGACYAPP")
    }
    pub fn legacy_token(hash: &TokenHash) -> (String, &'static str) {
        (format!("LEGACY#{}", hash.to_hex()), "LEGACY")
    }
    pub fn legacy_exchange(hash: &TokenHash) -> (String, &'static str) {
        (format!("LEGACY#{}", hash.to_hex()), "EXCHANGE")
    }
    pub fn family(id: &FamilyId) -> (String, &'static str) {
        (format!("FAMILY#{id}"), "FAMILY")
    }
    pub fn refresh(hash: &TokenHash) -> (String, &'static str) {
        (format!("REFRESH#{}", hash.to_hex()), "REFRESH")
    }
    pub fn access(jti: &TokenId) -> (String, &'static str) {
        (format!("ACCESS#{jti}"), "ACCESS")
    }
    pub fn auth_token(hash: &TokenHash) -> (String, &'static str) {
        (format!("AUTHTOKEN#{}", hash.to_hex()), "AUTHTOKEN")
    }
    pub fn failed_logins(login: &Login) -> String {
        format!("FAILEDLOGIN#{login}")
    }
    /// Zero-padded so that string order is time order and `sk >= since` is a time range.
    pub fn failed_login_time(at: UnixTime) -> String {
        format!("{:020}", at.max(0))
    }
}

/// The login uniqueness item: which user holds a login.
#[derive(Serialize, Deserialize)]
struct LoginOwner {
    user_id: PrincipalId,
}

/// A failed password attempt; only counted, never read back.
#[derive(Serialize)]
struct FailedLogin {
    at: UnixTime,
    expires_at: UnixTime,
}

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

fn key(pk: String, sk: impl Into<String>) -> Item {
    HashMap::from([(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))])
}

fn to_item<T: Serialize>(value: &T, (pk, sk): (String, impl Into<String>)) -> StoreResult<Item> {
    let mut item: Item = serde_dynamo::aws_sdk_dynamodb_1::to_item(value)
        .map_err(|e| StoreError::Internal(sanitize(&format!("cannot encode item: {e}"))))?;
    // serde_dynamo writes `None` as NULL; leaving the attribute out instead keeps conditions
    // like `attribute_not_exists(revoked_at)` meaningful and omits the TTL on records that have
    // no expiry.
    item.retain(|_, value| !matches!(value, AttributeValue::Null(_)));
    item.insert(PK.to_owned(), s(pk));
    item.insert(SK.to_owned(), s(sk));
    Ok(item)
}

fn from_item<T: DeserializeOwned>(item: Item) -> StoreResult<T> {
    // Unknown attributes (pk, sk) are ignored by the derived Deserialize impls.
    serde_dynamo::aws_sdk_dynamodb_1::from_item(item)
        .map_err(|e| StoreError::Internal(sanitize(&format!("malformed item: {e}"))))
}

fn build_error(e: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::Internal(format!("cannot build request: {e}"))
}

/// Error text for logs and 500 bodies: short, and with every long hex run (a token hash that a
/// decoding error or the service might echo back) cut to a prefix, so no lookup key leaks.
fn sanitize(text: &str) -> String {
    const MAX: usize = 300;
    const HEX_KEEP: usize = 8;
    const HEX_RUN: usize = 16;
    let mut out = String::with_capacity(text.len().min(MAX + 4));
    let mut hex_run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        if run.len() >= HEX_RUN {
            out.push_str(&run[..HEX_KEEP]);
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            hex_run.push(c);
            continue;
        }
        flush(&mut out, &mut hex_run);
        out.push(c);
    }
    flush(&mut out, &mut hex_run);
    if out.len() > MAX {
        let mut end = MAX;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

/// Timeouts, throttling and unreachable endpoints are `Unavailable` (503, retry later); the
/// SDK has already retried them by then. Everything else is `Internal` (500).
fn store_error<E>(op: &str, err: SdkError<E>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match &err {
        SdkError::TimeoutError(_) => StoreError::Unavailable(format!("{op}: timed out")),
        SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            StoreError::Unavailable(sanitize(&format!(
                "{op}: cannot reach DynamoDB: {}",
                DisplayErrorContext(&err)
            )))
        }
        SdkError::ServiceError(service) => {
            let code = err.code().unwrap_or("unknown error");
            let message = sanitize(&format!("{op}: {code}: {}", err.message().unwrap_or("")));
            if THROTTLING_CODES.contains(&code) || service.raw().status().is_server_error() {
                StoreError::Unavailable(message)
            } else {
                StoreError::Internal(message)
            }
        }
        _ => StoreError::Internal(sanitize(&format!("{op}: {}", DisplayErrorContext(&err)))),
    }
}

/// Bulk writes (the legacy import) are an administrator's batch job, not a request a client
/// waits on: a slow batch is better waited for than failed and resubmitted.
fn bulk_timeouts() -> aws_sdk_dynamodb::config::Builder {
    aws_sdk_dynamodb::config::Builder::default().timeout_config(
        TimeoutConfig::builder()
            .operation_attempt_timeout(Duration::from_secs(10))
            .operation_timeout(Duration::from_secs(30))
            .build(),
    )
}

/// Exponential backoff with full jitter, so that concurrent retriers spread out.
fn backoff(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let ceiling = base.saturating_mul(1 << attempt.min(16)).min(cap);
    let millis = ceiling.as_millis().max(1) as u64;
    Duration::from_millis(rand::thread_rng().gen_range(millis / 2..=millis))
}

/// How a transaction ended, when it did not fail outright.
enum Transaction {
    Committed,
    /// Indexes (into the submitted items) whose condition failed. Nothing was written.
    ConditionsFailed(Vec<usize>),
}

/// The per-item codes of a cancelled transaction: from `CancellationReasons`, or, if a server
/// does not send them, from the message (`... [None, ConditionalCheckFailed]`).
fn cancellation_codes(
    e: &aws_sdk_dynamodb::types::error::TransactionCanceledException,
) -> Vec<String> {
    let reasons = e.cancellation_reasons();
    if !reasons.is_empty() {
        return reasons
            .iter()
            .map(|r| r.code().unwrap_or("None").to_owned())
            .collect();
    }
    let message = e.message().unwrap_or_default();
    match (message.rfind('['), message.rfind(']')) {
        (Some(open), Some(close)) if open < close => message[open + 1..close]
            .split(',')
            .map(|code| code.trim().to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

pub struct DynamoStore {
    client: Client,
    table: String,
}

impl std::fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamoStore")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl DynamoStore {
    /// A store on `table_name`, with AWS's default configuration chain (the Lambda role, the
    /// environment, a profile). With `endpoint` (DynamoDB Local), requests go there, and if the
    /// environment names no credentials or region, dummy ones are used so that local use needs
    /// no AWS setup, and nothing ever asks an instance-metadata service.
    pub async fn connect(table_name: &str, endpoint: Option<&str>) -> Self {
        // A hung or unreachable store must turn into a 503 within a few seconds, not hold a
        // Lambda invocation until its own timeout: bounded attempts, each bounded in time.
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs(1))
            .operation_attempt_timeout(Duration::from_secs(2))
            .operation_timeout(Duration::from_secs(5))
            .build();
        let retries = RetryConfig::standard()
            .with_max_attempts(3)
            .with_initial_backoff(Duration::from_millis(100))
            .with_max_backoff(Duration::from_secs(1));
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .timeout_config(timeouts)
            .retry_config(retries);
        if let Some(endpoint) = endpoint {
            let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
            let region = env("AWS_REGION")
                .or_else(|| env("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| "us-east-1".to_owned());
            loader = loader.endpoint_url(endpoint).region(Region::new(region));
            let has_credentials = (env("AWS_ACCESS_KEY_ID").is_some()
                && env("AWS_SECRET_ACCESS_KEY").is_some())
                || env("AWS_PROFILE").is_some();
            if !has_credentials {
                loader = loader.credentials_provider(Credentials::new(
                    "local",
                    "local",
                    None,
                    None,
                    "dynamodb-local",
                ));
            }
        }
        let config = loader.load().await;
        Self::from_client(Client::new(&config), table_name)
    }

    /// A store on an already configured client (tests with special settings).
    pub fn from_client(client: Client, table_name: &str) -> Self {
        Self {
            client,
            table: table_name.to_owned(),
        }
    }

    /// The underlying client, for administration and for tests that inspect raw items.
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table_name(&self) -> &str {
        &self.table
    }

    /// Creates the table (on demand capacity) if it does not exist, waits until it is ACTIVE and
    /// enables TTL on `expires_at`. Safe to call on a table that already exists.
    pub async fn create_table_if_missing(&self) -> StoreResult<()> {
        let attribute = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .map_err(build_error)
        };
        let key_element = |name: &str, key_type| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(key_type)
                .build()
                .map_err(build_error)
        };
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(attribute(PK)?)
            .attribute_definitions(attribute(SK)?)
            .key_schema(key_element(PK, KeyType::Hash)?)
            .key_schema(key_element(SK, KeyType::Range)?)
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_resource_in_use_exception()) => {}
            Err(e) => return Err(store_error("CreateTable", e)),
        }
        self.wait_until_active().await?;
        self.enable_ttl().await
    }

    async fn wait_until_active(&self) -> StoreResult<()> {
        let deadline = tokio::time::Instant::now() + TABLE_ACTIVE_TIMEOUT;
        loop {
            let described = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await;
            let status = match described {
                Ok(out) => out.table.and_then(|t| t.table_status),
                // Just created: AWS may not list it for a moment.
                Err(e)
                    if e.as_service_error()
                        .is_some_and(|e| e.is_resource_not_found_exception()) =>
                {
                    None
                }
                Err(e) => return Err(store_error("DescribeTable", e)),
            };
            if status == Some(TableStatus::Active) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::Unavailable(format!(
                    "table {} not ACTIVE after {}s (status {status:?})",
                    self.table,
                    TABLE_ACTIVE_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn enable_ttl(&self) -> StoreResult<()> {
        let described = self
            .client
            .describe_time_to_live()
            .table_name(&self.table)
            .send()
            .await
            .map_err(|e| store_error("DescribeTimeToLive", e))?;
        let (status, attribute) = described
            .time_to_live_description
            .map(|d| (d.time_to_live_status, d.attribute_name))
            .unwrap_or_default();
        if matches!(
            status,
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
        ) {
            // A TTL on another attribute would silently keep every expired item forever.
            return match attribute.as_deref() {
                Some(TTL_ATTRIBUTE) | None => Ok(()),
                Some(other) => Err(StoreError::Internal(format!(
                    "table {} has TTL on `{other}`, expected `{TTL_ATTRIBUTE}`",
                    self.table
                ))),
            };
        }
        let specification = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(TTL_ATTRIBUTE)
            .build()
            .map_err(build_error)?;
        match self
            .client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(specification)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            // Another process enabled it between our describe and update.
            Err(e)
                if e.code() == Some("ValidationException")
                    && e.message().is_some_and(|m| m.contains("already enabled")) =>
            {
                Ok(())
            }
            Err(e) => Err(store_error("UpdateTimeToLive", e)),
        }
    }

    // Reads are strongly consistent: a token just rotated or a family just revoked must read as
    // such from every Lambda instance at once.
    async fn get_item(&self, op: &str, key: Item) -> StoreResult<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        Ok(out.item)
    }

    async fn get<T: DeserializeOwned>(
        &self,
        op: &str,
        (pk, sk): (String, impl Into<String>),
    ) -> StoreResult<Option<T>> {
        self.get_item(op, key(pk, sk))
            .await?
            .map(from_item)
            .transpose()
    }

    async fn put(&self, op: &str, item: Item) -> StoreResult<()> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| store_error(op, e))?;
        Ok(())
    }

    fn put_new(&self, item: Item) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// Runs a transaction. A condition failure is an outcome; a cancellation because another
    /// transaction held an item is retried (nothing was written), so that the caller only sees
    /// real condition failures.
    async fn transact(&self, op: &str, items: Vec<TransactWriteItem>) -> StoreResult<Transaction> {
        let mut attempt = 0;
        loop {
            // The SDK fills in a ClientRequestToken, reused by its own retries: a retry after a
            // timeout of a transaction that did commit succeeds instead of failing its
            // conditions against its own writes.
            let result = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .send()
                .await;
            let err = match result {
                Ok(_) => return Ok(Transaction::Committed),
                Err(err) => err,
            };
            let codes = match err.as_service_error() {
                Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                    cancellation_codes(cancelled)
                }
                _ => return Err(store_error(op, err)),
            };
            let failed: Vec<usize> = codes
                .iter()
                .enumerate()
                .filter(|(_, code)| code.as_str() == "ConditionalCheckFailed")
                .map(|(index, _)| index)
                .collect();
            if !failed.is_empty() {
                return Ok(Transaction::ConditionsFailed(failed));
            }
            let has = |wanted: &[&str]| codes.iter().any(|c| wanted.contains(&c.as_str()));
            if has(&["TransactionConflict"]) && attempt + 1 < TRANSACTION_ATTEMPTS {
                attempt += 1;
                tokio::time::sleep(backoff(
                    attempt,
                    Duration::from_millis(10),
                    Duration::from_millis(200),
                ))
                .await;
                continue;
            }
            let summary = codes.join(", ");
            return Err(
                if has(&[
                    "TransactionConflict",
                    "ThrottlingError",
                    "ProvisionedThroughputExceeded",
                    "RequestLimitExceeded",
                ]) {
                    StoreError::Unavailable(format!("{op}: transaction cancelled: [{summary}]"))
                } else {
                    StoreError::Internal(format!("{op}: transaction cancelled: [{summary}]"))
                },
            );
        }
    }

    /// One BatchWriteItem of at most 25 puts, resubmitting what DynamoDB left unprocessed
    /// (throttled partitions) with backoff until all is written or the attempts run out.
    async fn write_batch(&self, mut pending: Vec<WriteRequest>) -> StoreResult<()> {
        for attempt in 0..BATCH_ATTEMPTS {
            let out = self
                .client
                .batch_write_item()
                .request_items(self.table.clone(), pending)
                .customize()
                .config_override(bulk_timeouts())
                .send()
                .await
                .map_err(|e| store_error("BatchWriteItem", e))?;
            pending = out
                .unprocessed_items
                .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                .unwrap_or_default();
            if pending.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(backoff(
                attempt,
                Duration::from_millis(50),
                Duration::from_secs(2),
            ))
            .await;
        }
        Err(StoreError::Unavailable(format!(
            "BatchWriteItem: {} items still unprocessed after {BATCH_ATTEMPTS} attempts",
            pending.len()
        )))
    }
}

#[async_trait]
impl Store for DynamoStore {
    async fn put_client(&self, client: &OAuthClient) -> StoreResult<()> {
        self.put("PutClient", to_item(client, keys::client(&client.id))?)
            .await
    }

    async fn get_client(&self, id: &ClientId) -> StoreResult<Option<OAuthClient>> {
        self.get("GetClient", keys::client(id)).await
    }

    async fn insert_user(&self, user: &User) -> StoreResult<Inserted> {
        let owner = LoginOwner { user_id: user.id };
        let items = vec![
            self.put_new(to_item(user, keys::user(&user.id))?)?,
            self.put_new(to_item(&owner, keys::login(&user.login))?)?,
        ];
        match self.transact("InsertUser", items).await? {
            Transaction::Committed => Ok(Inserted::Inserted),
            Transaction::ConditionsFailed(_) => Ok(Inserted::AlreadyExists),
        }
    }

    async fn put_user(&self, user: &User) -> StoreResult<()> {
        // Written with its login item, so a replaced user is still found by login; the
        // conditions refuse a changed login or one that belongs to someone else.
        let user_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(user, keys::user(&user.id))?))
            .condition_expression("attribute_not_exists(pk) OR login = :login")
            .expression_attribute_values(":login", s(user.login.as_str()))
            .build()
            .map_err(build_error)?;
        let owner = LoginOwner { user_id: user.id };
        let login_put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(&owner, keys::login(&user.login))?))
            .condition_expression("attribute_not_exists(pk) OR user_id = :id")
            .expression_attribute_values(":id", s(user.id.to_string()))
            .build()
            .map_err(build_error)?;
        let items = vec![
            TransactWriteItem::builder().put(user_put).build(),
            TransactWriteItem::builder().put(login_put).build(),
        ];
        match self.transact("PutUser", items).await? {
            Transaction::Committed => Ok(()),
            Transaction::ConditionsFailed(_) => Err(StoreError::Internal(
                "PutUser: a user's login cannot change, nor take another user's".to_owned(),
            )),
        }
    }

    async fn get_user(&self, id: &PrincipalId) -> StoreResult<Option<User>> {
        self.get("GetUser", keys::user(id)).await
    }

    async fn get_user_by_login(&self, login: &Login) -> StoreResult<Option<User>> {
        let Some(owner) = self
            .get::<LoginOwner>("GetUserByLogin", keys::login(login))
            .await?
        else {
            return Ok(None);
        };
        Ok(self
            .get_user(&owner.user_id)
            .await?
            .filter(|user| &user.login == login))
    }

    async fn put_company(&self, company: &Company) -> StoreResult<()> {
        self.put("PutCompany", to_item(company, keys::company(&company.id))?)
            .await
    }

    async fn get_company(&self, id: &PrincipalId) -> StoreResult<Option<Company>> {
        self.get("GetCompany", keys::company(id)).await
    }

    async fn enable_company_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<()> {
        let (pk, sk) = keys::enablement(company, client);
        let mut item = key(pk, sk);
        item.insert("company_id".to_owned(), s(company.to_string()));
        item.insert("client_id".to_owned(), s(client.to_string()));
        self.put("EnableCompanyForClient", item).await
    }

    async fn is_company_enabled_for_client(
        &self,
        company: &PrincipalId,
        client: &ClientId,
    ) -> StoreResult<bool> {
        let (pk, sk) = keys::enablement(company, client);
        Ok(self
            .get_item("IsCompanyEnabledForClient", key(pk, sk))
            .await?
            .is_some())
    }

    async fn put_legacy_app(&self, app: &LegacyApp) -> StoreResult<()> {
        self.put(
            "PutLegacyApp",
            to_item(app, keys::legacy_app(&app.consumer_key))?,
        )
        .await
    }

    async fn get_legacy_app(&self, key: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        self.get("GetLegacyApp", keys::legacy_app(key)).await
    }

    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        // BatchWriteItem rejects a batch naming one key twice; the last occurrence wins, as it
        // would with one put after another.
        let mut latest: HashMap<&TokenHash, &LegacyToken> = HashMap::with_capacity(tokens.len());
        for token in tokens {
            latest.insert(&token.token_hash, token);
        }
        let requests = latest
            .into_values()
            .map(|token| {
                let item = to_item(token, keys::legacy_token(&token.token_hash))?;
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let batches: Vec<Vec<WriteRequest>> =
            requests.chunks(BATCH_SIZE).map(<[_]>::to_vec).collect();
        stream::iter(batches)
            .map(|batch| self.write_batch(batch))
            .buffer_unordered(BATCHES_IN_FLIGHT)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        Ok(self
            .get::<LegacyToken>("GetLegacyToken", keys::legacy_token(hash))
            .await?
            .filter(|token| !token.is_expired(now)))
    }

    async fn get_legacy_exchange(&self, hash: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        self.get("GetLegacyExchange", keys::legacy_exchange(hash))
            .await
    }

    async fn put_auth_token(&self, token: &AuthToken) -> StoreResult<()> {
        self.put(
            "PutAuthToken",
            to_item(token, keys::auth_token(&token.token_hash))?,
        )
        .await
    }

    async fn get_auth_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthToken>> {
        Ok(self
            .get::<AuthToken>("GetAuthToken", keys::auth_token(hash))
            .await?
            .filter(|token| token.expires_at > now))
    }

    async fn create_family(&self, new: NewFamily<'_>) -> StoreResult<FamilyCreated> {
        let mut common = vec![
            self.put_new(to_item(new.family, keys::family(&new.family.id))?)?,
            self.put_new(to_item(
                new.refresh_token,
                keys::refresh(&new.refresh_token.token_hash),
            )?)?,
            self.put_new(to_item(
                new.access_token,
                keys::access(&new.access_token.jti),
            )?)?,
        ];
        let Some(update) = new.legacy_exchange else {
            return match self.transact("CreateFamily", common).await? {
                Transaction::Committed => Ok(FamilyCreated::Created),
                Transaction::ConditionsFailed(_) => Err(StoreError::Internal(
                    "CreateFamily: family, refresh token or access token id already taken"
                        .to_owned(),
                )),
            };
        };

        // The link moves only if it still points where the caller saw it: of two concurrent
        // exchanges of one legacy token, one wins and the other writes nothing.
        let link_index = common.len();
        let mut link = Put::builder()
            .table_name(&self.table)
            .set_item(Some(to_item(
                &update.exchange,
                keys::legacy_exchange(&update.exchange.token_hash),
            )?));
        link = match &update.previous_family {
            None => link.condition_expression("attribute_not_exists(pk)"),
            Some(previous) => link
                .condition_expression("family_id = :previous")
                .expression_attribute_values(":previous", s(previous.to_string())),
        };
        common.push(
            TransactWriteItem::builder()
                .put(link.build().map_err(build_error)?)
                .build(),
        );

        let revoke_previous = match &update.previous_family {
            None => None,
            Some(previous) => {
                let (pk, sk) = keys::family(previous);
                // Conditional on existence, so that an Update never creates a stub family.
                let revoke = Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(key(pk, sk)))
                    .update_expression("SET revoked_at = if_not_exists(revoked_at, :now)")
                    .condition_expression("attribute_exists(pk)")
                    .expression_attribute_values(":now", n(update.exchange.exchanged_at))
                    .build()
                    .map_err(build_error)?;
                Some(TransactWriteItem::builder().update(revoke).build())
            }
        };
        let revoke_index = link_index + 1;

        let mut items = common.clone();
        items.extend(revoke_previous);
        let mut outcome = self.transact("CreateFamily", items).await?;
        if let Transaction::ConditionsFailed(failed) = &outcome {
            if failed == &[revoke_index] {
                // The previous family is gone (expired and deleted by TTL): nothing left to
                // revoke, the rest still has to happen.
                outcome = self.transact("CreateFamily", common).await?;
            }
        }
        match outcome {
            Transaction::Committed => Ok(FamilyCreated::Created),
            Transaction::ConditionsFailed(failed) if failed.contains(&link_index) => {
                Ok(FamilyCreated::LegacyExchangeRaced)
            }
            Transaction::ConditionsFailed(_) => Err(StoreError::Internal(
                "CreateFamily: family, refresh token or access token id already taken".to_owned(),
            )),
        }
    }

    async fn get_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<Option<Family>> {
        Ok(self
            .get::<Family>("GetFamily", keys::family(id))
            .await?
            .filter(|family| family.expires_at > now))
    }

    async fn get_refresh_token(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<RefreshTokenRecord>> {
        Ok(self
            .get::<RefreshTokenRecord>("GetRefreshToken", keys::refresh(hash))
            .await?
            .filter(|record| record.expires_at > now))
    }

    async fn rotate_refresh_token(&self, rotation: Rotation<'_>) -> StoreResult<Rotated> {
        let successor = rotation.successor;
        let (pk, sk) = keys::family(&rotation.family_id);
        // The compare-and-swap on `current_token` is what guarantees at most one successor per
        // refresh token: of concurrent rotations only one transaction can see its condition hold.
        let family = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression(
                "SET current_token = :next, generation = :generation, expires_at = :expires_at",
            )
            .condition_expression(
                "current_token = :presented AND attribute_not_exists(revoked_at) \
                 AND expires_at > :now",
            )
            .expression_attribute_values(":next", s(successor.token_hash.to_hex()))
            .expression_attribute_values(":generation", n(successor.generation))
            .expression_attribute_values(":expires_at", n(successor.expires_at))
            .expression_attribute_values(":presented", s(rotation.presented.to_hex()))
            .expression_attribute_values(":now", n(rotation.now))
            .build()
            .map_err(build_error)?;
        let (pk, sk) = keys::refresh(rotation.presented);
        let presented = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET rotated_at = :now")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":now", n(rotation.now))
            .build()
            .map_err(build_error)?;
        let items = vec![
            TransactWriteItem::builder().update(family).build(),
            TransactWriteItem::builder().update(presented).build(),
            self.put_new(to_item(successor, keys::refresh(&successor.token_hash))?)?,
            self.put_new(to_item(
                rotation.access_token,
                keys::access(&rotation.access_token.jti),
            )?)?,
        ];
        match self.transact("RotateRefreshToken", items).await? {
            Transaction::Committed => Ok(Rotated::Rotated),
            Transaction::ConditionsFailed(failed) if failed.contains(&0) => Ok(Rotated::NotCurrent),
            Transaction::ConditionsFailed(failed) => Err(StoreError::Internal(format!(
                "RotateRefreshToken: integrity condition failed on item(s) {failed:?}"
            ))),
        }
    }

    async fn revoke_family(&self, id: &FamilyId, now: UnixTime) -> StoreResult<bool> {
        let (pk, sk) = keys::family(id);
        // `if_not_exists` keeps the first revocation time, so revoking again changes nothing.
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("SET revoked_at = if_not_exists(revoked_at, :now)")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(store_error("RevokeFamily", e)),
        }
    }

    async fn put_access_token(&self, record: &AccessTokenRecord) -> StoreResult<()> {
        self.put(
            "PutAccessToken",
            to_item(record, keys::access(&record.jti))?,
        )
        .await
    }

    async fn get_access_token(
        &self,
        jti: &TokenId,
        now: UnixTime,
    ) -> StoreResult<Option<AccessTokenRecord>> {
        let Some(mut record) = self
            .get::<AccessTokenRecord>("GetAccessToken", keys::access(jti))
            .await?
            .filter(|record| record.expires_at > now)
        else {
            return Ok(None);
        };
        if let (false, Some(family_id)) = (record.revoked, record.family_id) {
            // Revocation lives on the family only, so that revoking is one write however many
            // access tokens the family minted. Read regardless of the family's own expiry.
            let family = self
                .get::<Family>("GetAccessTokenFamily", keys::family(&family_id))
                .await?;
            record.revoked = family.is_some_and(|f| f.revoked_at.is_some());
        }
        Ok(Some(record))
    }

    async fn record_failed_login(
        &self,
        login: &Login,
        at: UnixTime,
        expires_at: UnixTime,
    ) -> StoreResult<()> {
        // A random suffix keeps two failures in the same second apart.
        let sk = format!(
            "{}#{}",
            keys::failed_login_time(at),
            uuid::Uuid::new_v4().simple()
        );
        let item = to_item(
            &FailedLogin { at, expires_at },
            (keys::failed_logins(login), sk),
        )?;
        self.put("RecordFailedLogin", item).await
    }

    async fn count_failed_logins(&self, login: &Login, since: UnixTime) -> StoreResult<u32> {
        let mut total: u32 = 0;
        let mut start = None;
        loop {
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk >= :since")
                .expression_attribute_values(":pk", s(keys::failed_logins(login)))
                .expression_attribute_values(":since", s(keys::failed_login_time(since)))
                .select(Select::Count)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| store_error("CountFailedLogins", e))?;
            total = total.saturating_add(u32::try_from(out.count).unwrap_or(0));
            match out.last_evaluated_key {
                Some(next) if !next.is_empty() => start = Some(next),
                _ => return Ok(total),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_cuts_hashes_to_a_prefix_and_bounds_length() {
        let hash = TokenHash::of("secret").to_hex();
        let cleaned = sanitize(&format!(
            "invalid value: string \"{hash}\" in REFRESH#{hash}"
        ));
        assert!(!cleaned.contains(&hash), "{cleaned}");
        assert!(cleaned.contains(&format!("{}…", &hash[..8])), "{cleaned}");
        assert!(sanitize(&"x".repeat(1000)).chars().count() <= 301);
        assert_eq!(sanitize("GetItem: timed out"), "GetItem: timed out");
    }

    #[test]
    fn cancellation_codes_fall_back_to_the_message() {
        let cancelled = aws_sdk_dynamodb::types::error::TransactionCanceledException::builder()
            .message("Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]")
            .build();
        assert_eq!(
            cancellation_codes(&cancelled),
            ["None", "ConditionalCheckFailed"]
        );
    }
}
