//! Every store-backed endpoint while the store fails (docs/decisions.md, Store unavailable (503)
//! and lost answers): a 503 `{"error": "temporarily_unavailable", "message"}` with `Retry-After`
//! and `Cache-Control: no-store`, no credential in the logs, nothing half-written, and the same
//! request, sent again once the store is back, succeeds.
//!
//! # The faults
//!
//! Real ones, that end, on both stores:
//!
//! - **DynamoDB, down**: a fault proxy between the service and DynamoDB Local refuses every
//!   request ([`Fault::RefuseConnections`]): reads and writes fail, so every endpoint that
//!   touches the store answers 503, the read-only ones included.
//! - **DynamoDB, writes refused**: the same proxy refuses only the operations that write
//!   ([`WRITE_OPERATIONS`]); reads are answered.
//! - **SQLite, write-locked**: a second connection on the database file holds its write lock
//!   (`BEGIN IMMEDIATE`), as `tokenctl` or a second server in a long transaction would; the
//!   store's writes wait out its busy timeout (250 ms here, 5 s in the local server), then fail.
//!   That is how an SQLite file in WAL mode becomes unavailable to this service: WAL lets
//!   readers through any write lock, and no
//!   lock that also stops readers can be taken while the service's own connection has the file
//!   open (`PRAGMA locking_mode=EXCLUSIVE` then fails with "database is locked").
//!   So on SQLite, as with DynamoDB's writes refused, reads still succeed: introspection and
//!   the first authorize page answer 200, and are asserted to.
//! - **DynamoDB, transactions refused** (the grants that start or rotate a family): only the
//!   family's transaction fails, after the single-item writes before it (a lockout count, a
//!   one-time password's try) landed; the password grant's refund, part of the failed
//!   transaction, is then written on its own. A code or a password is redeemed only after the
//!   family is written, so the retry still finds it open.
//!
//! The apps run without the read cache (`READ_CACHE_SECONDS=0`, as [`TestApp::with_store`]
//! builds them), so no cached read hides the fault; [`cached_reads`] shows what the cache does.
//!
//! # Pages
//!
//! The authorize endpoint's pages (`GET` and `POST /oauth2/v0/authorize`) answer a store
//! failure with the same JSON 503 body as every other endpoint, as their OpenAPI operations
//! declare (`503: ServerErrorBody`): a browser shows its sentence, and the pending-request
//! cookie is left as it was, so reloading the form (the same request again) continues the flow.
//!
//! # Not store-backed
//!
//! The JWK Sets, the discovery documents and the OpenAPI document are served from memory: they
//! answer 200 while the store is down ([`dead_endpoint::memory_endpoints_still_answer`], over a
//! DynamoDB endpoint where nothing listens).

use std::future::Future;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::ddb_proxy::{DdbProxy, Fault, WRITE_OPERATIONS};
use async_trait::async_trait;
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;
use tempfile::TempDir;
use token_core::config::Policy;
use token_core::mail::{MailError, Mailer, OtpMail};

/// Generates one test per case in a module named after the fault: `sqlite_write_locked` or
/// `<module> = <Outage variant>` on DynamoDB. Each case is an `async fn(FaultyApp)` of the
/// calling module.
macro_rules! outage_tests {
    (sqlite_write_locked: $($case:ident),* $(,)?) => {
        mod sqlite_write_locked {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::store_unavailable::FaultyApp::sqlite().await).await;
                }
            )*
        }
    };
    ($module:ident = $outage:ident: $($case:ident),* $(,)?) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                async fn $case() {
                    let outage = crate::store_unavailable::Outage::$outage;
                    if let Some(app) = crate::store_unavailable::FaultyApp::dynamodb(outage).await {
                        super::$case(app).await;
                    }
                }
            )*
        }
    };
}

/// [`outage_tests`] for the three faults every store-backed endpoint is tested under.
macro_rules! in_every_outage {
    ($($case:ident),* $(,)?) => {
        outage_tests!(sqlite_write_locked: $($case),*);
        outage_tests!(dynamodb_writes_refused = WritesRefused: $($case),*);
        outage_tests!(dynamodb_down = Everything: $($case),*);
    };
}

mod cached_reads;
mod dead_endpoint;
mod lost_answers;
mod other_endpoints;
mod pages;
mod redemption_races;
mod throttling;
mod token_grants;

/// What fails while the store is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// Writes fail, reads are answered.
    WritesRefused,
    /// Every request to the store fails.
    Everything,
    /// DynamoDB only: the transactions fail (a family started, a legacy exchange);
    /// the single-item writes before and after them (a lockout count and, when the family's
    /// transaction fails, its refund; a code's redemption, a one-time password's try) land.
    TransactionsRefused,
}

/// How the test breaks and heals the store under its app.
enum StoreFault {
    Sqlite {
        path: PathBuf,
        /// The second connection, holding the write lock while the store is broken.
        lock: Mutex<Option<rusqlite::Connection>>,
        _dir: TempDir,
    },
    Dynamo(DdbProxy),
}

/// An app whose store the test can break ([`FaultyApp::during_outage`]) and bring back. Every
/// app mails one-time passwords to [`FaultyApp::mailed_passwords`], and locks a login at its
/// first counted wrong password (`LOCKOUT_THRESHOLD=1`): an attempt a failed request left
/// counted would refuse its retry (code 14).
pub struct FaultyApp {
    app: TestApp,
    pub outage: Outage,
    fault: StoreFault,
    mailer: Arc<CapturingMailer>,
}

impl Deref for FaultyApp {
    type Target = TestApp;
    fn deref(&self) -> &TestApp {
        &self.app
    }
}

impl FaultyApp {
    pub async fn sqlite() -> Self {
        let (store, dir) = crate::support::sqlite::fresh_store_with_busy_timeout(
            std::time::Duration::from_millis(250),
        );
        let path = store.path().to_owned();
        let mailer = Arc::<CapturingMailer>::default();
        let app = TestApp::with_store(Arc::new(store), Backend::Sqlite, options(&mailer)).await;
        let lock = Mutex::new(None);
        Self {
            app,
            outage: Outage::WritesRefused,
            fault: StoreFault::Sqlite {
                path,
                lock,
                _dir: dir,
            },
            mailer,
        }
    }

    /// `None` when the DynamoDB suite is skipped.
    pub async fn dynamodb(outage: Outage) -> Option<Self> {
        let (proxy, store) = DdbProxy::start_with_fresh_table().await?;
        let mailer = Arc::<CapturingMailer>::default();
        let app = TestApp::with_store(Arc::new(store), Backend::DynamoDb, options(&mailer)).await;
        Some(Self {
            app,
            outage,
            fault: StoreFault::Dynamo(proxy),
            mailer,
        })
    }

    /// The DynamoDB fault proxy under the app, for a fault of the test's own.
    pub fn proxy(&self) -> &DdbProxy {
        match &self.fault {
            StoreFault::Dynamo(proxy) => proxy,
            StoreFault::Sqlite { .. } => panic!("an SQLite app has no DynamoDB proxy"),
        }
    }

    /// Whether reads fail too during the outage.
    pub fn reads_fail(&self) -> bool {
        self.outage == Outage::Everything
    }

    /// Runs `action` (lazy until awaited) with the store broken, then brings the store back.
    pub async fn during_outage<T>(&self, action: impl Future<Output = T>) -> T {
        self.break_store();
        let result = action.await;
        self.heal_store();
        result
    }

    /// Sends `request` with the store broken and checks the 503 (see [`assert_unavailable`]).
    pub async fn refused(&self, endpoint: &str, request: RequestBuilder) {
        let response = self.during_outage(request.send()).await.unwrap();
        assert_unavailable(endpoint, response).await;
    }

    /// The passwords mailed so far, oldest first.
    pub fn mailed_passwords(&self) -> Vec<String> {
        self.mailer.passwords.lock().unwrap().clone()
    }

    fn break_store(&self) {
        match &self.fault {
            StoreFault::Sqlite { path, lock, .. } => {
                let connection = rusqlite::Connection::open(path).unwrap();
                connection.execute_batch("BEGIN IMMEDIATE").unwrap();
                *lock.lock().unwrap() = Some(connection);
            }
            StoreFault::Dynamo(proxy) => match self.outage {
                Outage::Everything => proxy.inject(Fault::RefuseConnections),
                Outage::WritesRefused => {
                    proxy.inject(Fault::RefuseConnections.only_for_any(WRITE_OPERATIONS))
                }
                Outage::TransactionsRefused => {
                    proxy.inject(Fault::RefuseConnections.only_for("TransactWriteItems"))
                }
            },
        }
    }

    fn heal_store(&self) {
        match &self.fault {
            // Closing the connection rolls its transaction back and releases the lock.
            StoreFault::Sqlite { lock, .. } => drop(lock.lock().unwrap().take()),
            StoreFault::Dynamo(proxy) => proxy.clear_fault(),
        }
    }
}

fn options(mailer: &Arc<CapturingMailer>) -> AppOptions {
    AppOptions {
        policy: Policy {
            lockout_threshold: 1,
            ..Policy::default()
        },
        mailer: Some(mailer.clone()),
        logout_allowed_hosts: Vec::new(),
        localhost: false,
        document_fetcher: None,
    }
}

/// Keeps the one-time passwords it is asked to mail.
#[derive(Debug, Default)]
struct CapturingMailer {
    passwords: Mutex<Vec<String>>,
}

#[async_trait]
impl Mailer for CapturingMailer {
    async fn send(&self, message: &OtpMail) -> Result<(), MailError> {
        let password = message.password.expose().to_owned();
        self.passwords.lock().unwrap().push(password);
        Ok(())
    }
}

/// A user with an e-mail address, for the one-time passwords.
pub async fn user_with_email(app: &TestApp, login: &str, address: &str) {
    app.create_user_with(login, "unused password", |u| {
        u.email = Some(address.to_owned());
    })
    .await;
}

/// The 503 of a store that did not answer: `temporarily_unavailable` and a sentence for the caller,
/// nothing else in the body, `Retry-After`, and not cacheable.
pub async fn assert_unavailable(endpoint: &str, response: Response) {
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{endpoint}: {text}"
    );
    let body: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("{endpoint}: the 503 is not JSON: {text:?}"));
    assert_eq!(
        body["error"], "temporarily_unavailable",
        "{endpoint}: {body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| !m.trim().is_empty()),
        "{endpoint}: a message: {body}"
    );
    let mut fields: Vec<&String> = body.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["error", "message"], "{endpoint}: {body}");
    assert!(
        headers.contains_key("retry-after"),
        "{endpoint}: {headers:?}"
    );
    assert_eq!(headers["cache-control"], "no-store", "{endpoint}");
    assert_eq!(headers["pragma"], "no-cache", "{endpoint}");
}

/// The status and JSON body of a response that must be a success.
#[track_caller]
pub fn ok_json((status, body): (StatusCode, Value), what: &str) -> Value {
    assert_eq!(status, StatusCode::OK, "{what}: {body}");
    body
}
