//! `spawn_app()`: the real local router on a loopback port, over a real store, with a manual
//! clock so tests can move past expiries. Plus fixtures and request helpers.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::Value;
use token_core::config::Policy;
use token_core::context::Context;
use token_core::jwt::AccessTokenCodec;
use token_core::mail::Mailer;
use token_core::services::Services;
use token_core::signing::{KeyRing, SigningKeys};
use token_domain::clock::ManualClock;
use token_domain::Geolocation;
use token_store::dynamodb::DynamoStore;
use token_store::sqlite::SqliteStore;
use token_store::Store;

use crate::support::stored_data::StoredData;

mod fixtures;
mod steps;
pub use steps::{answer_of, field, jti_of, password_form};

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    DynamoDb,
}

/// A fresh, empty store of the given kind, with a raw handle on its data; `None` only when the
/// DynamoDB suite is explicitly opted out (`SKIP_DYNAMODB=1`): the factory says so loudly.
pub async fn fresh_store(backend: Backend) -> Option<(Arc<dyn Store>, StoredData)> {
    Some(match backend {
        Backend::Sqlite => {
            let dir = crate::support::sqlite::temp_dir();
            let store = SqliteStore::open_in_dir(dir.path()).expect("open the SQLite store");
            (Arc::new(store) as Arc<dyn Store>, StoredData::Sqlite(dir))
        }
        Backend::DynamoDb => {
            let store = crate::support::dynamodb::fresh_table().await?;
            let raw = DynamoStore::from_client(store.client().clone(), store.table_name());
            (Arc::new(store) as Arc<dyn Store>, StoredData::Dynamo(raw))
        }
    })
}

/// Runs each listed `async fn(TestApp)` once on SQLite and once on DynamoDB Local, as tests
/// named `sqlite::<name>` and `dynamodb::<name>` in the calling module. With `SKIP_DYNAMODB=1`
/// the DynamoDB ones are built `#[ignore]`d (see `build.rs`): listed as ignored, never as passed.
#[macro_export]
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        $crate::on_both_stores!(with $crate::support::app::AppOptions::default(); $($test),*);
    };
    // `using fixture; tests`: each test gets what `fixture(backend)` made (an async fn answering
    // `Option<F>`, `None` when the backend is opted out): an app with a server of its own, say,
    // whose address the app's options name.
    (using $fixture:path; $($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let fixture = $fixture($crate::support::app::Backend::Sqlite)
                        .await
                        .expect("SQLite is always available");
                    super::$test(fixture).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                async fn $test() {
                    if let Some(fixture) = $fixture($crate::support::app::Backend::DynamoDb).await {
                        super::$test(fixture).await;
                    }
                }
            )*
        }
    };
    // `with options; tests`: the apps run with these options (a policy), e.g. in a submodule.
    (with $options:expr; $($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let app = $crate::support::app::TestApp::spawn_with($crate::support::app::Backend::Sqlite, $options)
                        .await
                        .expect("SQLite is always available");
                    super::$test(app).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                async fn $test() {
                    if let Some(app) =
                        $crate::support::app::TestApp::spawn_with($crate::support::app::Backend::DynamoDb, $options).await
                    {
                        super::$test(app).await;
                    }
                }
            )*
        }
    };
}

/// A request body in one of the encodings the endpoints accept, or none at all.
pub enum RequestBody<'a> {
    Empty,
    Form(&'a [(&'a str, &'a str)]),
    Json(Value),
}

impl RequestBody<'_> {
    fn attach(self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Self::Empty => request,
            Self::Form(form) => request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(form).unwrap()),
            Self::Json(value) => request.json(&value),
        }
    }
}

/// Options for [`TestApp::spawn_with`].
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    pub policy: Policy,
    /// Where one-time passwords go; unset: nowhere (every send fails, 503).
    pub mailer: Option<Arc<dyn Mailer>>,
    /// `host:port`s back-channel logouts may reach on loopback (`CLIENT_ID_METADATA_ALLOW_HOSTS`);
    /// when set, the app's own routes deliver them from a background task with quick retries.
    pub logout_allowed_hosts: Vec<String>,
    /// Served as `http://localhost:<port>` rather than `127.0.0.1`: WebAuthn accepts a host
    /// name as RP ID, never an IP address.
    pub localhost: bool,
    /// What fetches client ID metadata documents (its allowed hosts, resolver and time limit);
    /// unset: public https addresses only, as the service's default.
    pub document_fetcher: Option<token_core::outbound::Fetcher>,
}

impl AppOptions {
    /// `DPOP_NONCE=on`: every DPoP proof must carry the server's nonce.
    pub fn dpop_nonces() -> Self {
        Self {
            policy: Policy {
                dpop_nonce: true,
                ..Policy::default()
            },
            ..Self::default()
        }
    }
}

pub struct TestApp {
    /// `http://127.0.0.1:<port>`, which is also this deployment's geolocation.
    pub address: String,
    pub http: reqwest::Client,
    pub services: Arc<Services>,
    pub clock: Arc<ManualClock>,
    pub store: Arc<dyn Store>,
    pub backend: Backend,
    /// The store's raw data, for "stored only as a hash" checks.
    pub data: Arc<StoredData>,
}

/// A client as the tests know it: its id and the secret shown once at creation.
#[derive(Debug, Clone)]
pub struct TestClient {
    pub id: String,
    pub secret: String,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> Option<Self> {
        Self::spawn_with(backend, AppOptions::default()).await
    }

    pub async fn spawn_with(backend: Backend, options: AppOptions) -> Option<Self> {
        let (store, data) = fresh_store(backend).await?;
        let clock = Arc::new(ManualClock::starting_now());
        let mut app = Self::serve(store, clock, backend, options, None).await;
        app.data = Arc::new(data);
        Some(app)
    }

    /// An app on a fresh store that signs with `keys` (e.g. a ring held in KMS) instead of a
    /// generated local key.
    pub async fn spawn_with_keys(
        backend: Backend,
        options: AppOptions,
        keys: SigningKeys,
    ) -> Option<Self> {
        let (store, data) = fresh_store(backend).await?;
        let clock = Arc::new(ManualClock::starting_now());
        let mut app = Self::serve(store, clock, backend, options, Some(keys)).await;
        app.data = Arc::new(data);
        Some(app)
    }

    /// An app over a store the test built itself (e.g. one pointed at a dead endpoint).
    pub async fn with_store(store: Arc<dyn Store>, backend: Backend, options: AppOptions) -> Self {
        let clock = Arc::new(ManualClock::starting_now());
        Self::serve(store, clock, backend, options, None).await
    }

    /// An app over `store` behind the read cache the binaries use (`READ_CACHE_SECONDS`), on
    /// the app's own manual clock, so that moving the clock ages the cache too.
    pub async fn with_read_cache(
        store: Arc<dyn Store>,
        backend: Backend,
        options: AppOptions,
        read_cache_seconds: u64,
    ) -> Self {
        let clock = Arc::new(ManualClock::starting_now());
        let store = token_store::cached::wrap(store, clock.clone(), read_cache_seconds);
        Self::serve(store, clock, backend, options, None).await
    }

    /// A second deployment (another region) over the same store and clock, as a global table
    /// would give it: same data, and so the same key ring (one item of the table), its own
    /// geolocation.
    pub async fn spawn_other_region(&self) -> Self {
        let mut other = Self::serve(
            self.store.clone(),
            self.clock.clone(),
            self.backend,
            AppOptions {
                policy: self.services.policy.clone(),
                mailer: Some(self.services.mailer.clone()),
                logout_allowed_hosts: Vec::new(),
                localhost: false,
                document_fetcher: None,
            },
            // One global table holds one key ring for every region: the same signing keys and
            // server secret (which refresh-token successors are derived with).
            Some(self.services.codec.keys().clone()),
        )
        .await;
        other.data = self.data.clone();
        other
    }

    async fn serve(
        store: Arc<dyn Store>,
        clock: Arc<ManualClock>,
        backend: Backend,
        options: AppOptions,
        keys: Option<SigningKeys>,
    ) -> Self {
        crate::support::logs::install_log_capture();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let bound = listener.local_addr().unwrap();
        let address = if options.localhost {
            format!("http://localhost:{}", bound.port())
        } else {
            format!("http://{bound}")
        };
        let ctx = Context::new(store.clone()).with_clock(clock.clone());
        let keys = keys.unwrap_or_else(|| {
            Arc::new(KeyRing::generate(ctx.random.as_ref(), clock.as_ref())).into()
        });
        let codec = AccessTokenCodec::new(keys, Geolocation::parse(&address).unwrap());
        let mut services = Services::new(ctx, codec, options.policy);
        if let Some(mailer) = options.mailer {
            services = services.with_mailer(mailer);
        }
        if let Some(fetcher) = options.document_fetcher {
            services = services.with_document_fetcher(fetcher);
        }
        if !options.logout_allowed_hosts.is_empty() {
            let queue = crate::support::logout_receiver::in_process_queue(
                &services,
                &options.logout_allowed_hosts,
            );
            services = services.with_logout_queue(queue);
        }
        let services = Arc::new(services);
        let scrape = Arc::new(token_adapters::metrics::prometheus::PrometheusScrape::installed());
        let router = token_http::local_router(services.clone(), scrape);
        tokio::spawn(async move {
            let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
            axum::serve(listener, service).await.expect("test server");
        });
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            address,
            http,
            services,
            clock,
            store,
            backend,
            data: Arc::new(StoredData::Opaque),
        }
    }

    pub fn ctx(&self) -> &Context {
        &self.services.ctx
    }

    pub fn geolocation(&self) -> Geolocation {
        self.services.geolocation().clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form).unwrap())
            .send()
            .await
            .expect("request reaches the test server")
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("request reaches the test server")
    }

    /// `GET path`, its body read as JSON (a document the app publishes: metadata, JWKS, OpenAPI).
    pub async fn get_json(&self, path: &str) -> Value {
        self.http
            .get(self.url(path))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `POST /v0/token` with a form body; the status and the JSON body.
    pub async fn token(&self, form: &[(&str, &str)]) -> (StatusCode, Value) {
        json_of(self.post_form("/v0/token", form).await).await
    }

    /// `POST /appmgmt/v0/legacyApps/{consumer_key}/exchangeRefreshToken/me{query}`, not yet
    /// sent: for tests that look at headers. `query` is empty or starts with `?`.
    pub fn exchange_request(&self, consumer_key: &str, query: &str) -> reqwest::RequestBuilder {
        self.http.post(self.exchange_url(consumer_key, query))
    }

    pub fn exchange_url(&self, consumer_key: &str, query: &str) -> String {
        self.url(&format!(
            "/appmgmt/v0/legacyApps/{consumer_key}/exchangeRefreshToken/me{query}"
        ))
    }

    /// The old-token exchange with an optional `Authorization` header; status and JSON body.
    pub async fn exchange(
        &self,
        consumer_key: &str,
        query: &str,
        authorization: Option<&str>,
        body: RequestBody<'_>,
    ) -> (StatusCode, Value) {
        let mut request = self.exchange_request(consumer_key, query);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        answer_of(body.attach(request)).await
    }

    /// `POST /profile-service/v1/keys/principals/{company}/authtoken/?{query}`, not yet sent.
    pub fn company_auth_token_request(
        &self,
        company: &str,
        bearer: Option<&str>,
        query: &[(&str, &str)],
    ) -> reqwest::RequestBuilder {
        let path = format!("/profile-service/v1/keys/principals/{company}/authtoken/");
        let request = self.http.post(self.url(&path)).query(query);
        match bearer {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// The company auth-token endpoint (JSON answer); status and JSON body.
    pub async fn company_auth_token(
        &self,
        company: &str,
        bearer: Option<&str>,
        query: &[(&str, &str)],
        body: RequestBody<'_>,
    ) -> (StatusCode, Value) {
        let request = self.company_auth_token_request(company, bearer, query);
        answer_of(body.attach(request)).await
    }
}

/// The status and JSON body of a response (panics if the body is not JSON).
pub async fn json_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("status {status}: body is not JSON: {text:?}"));
    (status, body)
}
