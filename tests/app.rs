//! `spawn_app()`: the real local router on a loopback port, over a real store, with a manual
//! clock so tests can move past expiries. Plus fixtures and request helpers.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;
use token_service::admin::{self, NewClient, NewUser};
use token_service::clock::ManualClock;
use token_service::config::Policy;
use token_service::context::Context;
use token_service::domain::{Company, Geolocation, Login, Scopes, User, UserStatus};
use token_service::jwt::AccessTokenCodec;
use token_service::secrets::Secret;
use token_service::services::Services;
use token_service::signing::KeyRing;
use token_service::store::Store;

/// Which store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    DynamoDb,
}

/// A fresh, empty store of the given kind; `None` only when the DynamoDB suite is explicitly
/// opted out (`SKIP_DYNAMODB=1`) — the factory says so loudly.
/// A SQLite store comes with its temporary directory, which must outlive it.
pub async fn fresh_store(backend: Backend) -> Option<(Arc<dyn Store>, Option<Arc<TempDir>>)> {
    match backend {
        Backend::Sqlite => {
            let (store, dir) = crate::sqlite::fresh_store();
            Some((Arc::new(store), Some(Arc::new(dir))))
        }
        Backend::DynamoDb => crate::dynamodb::make_store()
            .await
            .map(|store| (store, None)),
    }
}

/// Runs each listed `async fn(TestApp)` once on SQLite and once on DynamoDB Local, as tests
/// named `sqlite::<name>` and `dynamodb::<name>` in the calling module.
#[macro_export]
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let app = $crate::app::TestApp::spawn($crate::app::Backend::Sqlite).await
                        .expect("SQLite is always available");
                    super::$test(app).await;
                }
            )*
        }
        mod dynamodb {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    if let Some(app) = $crate::app::TestApp::spawn($crate::app::Backend::DynamoDb).await {
                        super::$test(app).await;
                    }
                }
            )*
        }
    };
}

/// Options for [`TestApp::spawn_with`].
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    pub policy: Policy,
}

pub struct TestApp {
    /// `http://127.0.0.1:<port>`, which is also this deployment's geolocation.
    pub address: String,
    pub http: reqwest::Client,
    pub services: Arc<Services>,
    pub clock: Arc<ManualClock>,
    pub store: Arc<dyn Store>,
    pub backend: Backend,
    /// The SQLite store's directory, kept as long as the app (and any other region's) lives.
    data_dir: Option<Arc<TempDir>>,
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
        let (store, data_dir) = fresh_store(backend).await?;
        let clock = Arc::new(ManualClock::starting_now());
        let app = Self::serve(store, clock, backend, options.policy).await;
        Some(Self { data_dir, ..app })
    }

    /// An app over a store the test built itself (e.g. one pointed at a dead endpoint).
    pub async fn with_store(store: Arc<dyn Store>, backend: Backend, options: AppOptions) -> Self {
        let clock = Arc::new(ManualClock::starting_now());
        Self::serve(store, clock, backend, options.policy).await
    }

    /// A second deployment (another region) over the same store and clock, as a global table
    /// would give it: same data, its own geolocation and signing keys.
    pub async fn spawn_other_region(&self) -> Self {
        let app = Self::serve(
            self.store.clone(),
            self.clock.clone(),
            self.backend,
            self.services.policy.clone(),
        )
        .await;
        Self {
            data_dir: self.data_dir.clone(),
            ..app
        }
    }

    async fn serve(
        store: Arc<dyn Store>,
        clock: Arc<ManualClock>,
        backend: Backend,
        policy: Policy,
    ) -> Self {
        install_log_capture();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let address = format!("http://{}", listener.local_addr().unwrap());
        let ctx = Context::new(store.clone()).with_clock(clock.clone());
        let keys = Arc::new(KeyRing::generate(ctx.random.as_ref(), clock.as_ref()));
        let codec = AccessTokenCodec::new(keys, Geolocation::parse(&address).unwrap());
        let services = Arc::new(Services::new(ctx, codec, policy));
        let router = token_service::http::local_router(services.clone());
        tokio::spawn(async move {
            axum::serve(listener, router).await.expect("test server");
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
            data_dir: None,
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

    /// `POST /v0/token` with a form body; the status and the JSON body.
    pub async fn token(&self, form: &[(&str, &str)]) -> (StatusCode, Value) {
        json_of(self.post_form("/v0/token", form).await).await
    }

    // Fixtures.

    pub async fn create_client(&self, scopes: &str) -> TestClient {
        self.create_client_with(NewClient::named("test app", Scopes::parse(scopes).unwrap()))
            .await
    }

    pub async fn create_client_with(&self, new: NewClient) -> TestClient {
        let created = admin::create_client(self.ctx(), new).await.unwrap();
        TestClient {
            id: created.client.id.to_string(),
            secret: created.secret.expose().to_owned(),
        }
    }

    pub async fn create_user(&self, login: &str, password: &str) -> User {
        self.create_user_with(login, password, |_| {}).await
    }

    /// A user living here, adjusted by `customise` before creation.
    pub async fn create_user_with(
        &self,
        login: &str,
        password: &str,
        customise: impl FnOnce(&mut NewUser),
    ) -> User {
        let mut new = NewUser {
            login: Login::parse(login).unwrap(),
            password: Secret::new(password),
            company_id: None,
            is_admin: false,
            geolocation: self.geolocation(),
            status: UserStatus::Active,
        };
        customise(&mut new);
        admin::create_user(self.ctx(), new).await.unwrap()
    }

    pub async fn create_company(&self, name: &str) -> Company {
        admin::create_company(self.ctx(), name, self.geolocation())
            .await
            .unwrap()
    }

    /// Password grant for a user; panics unless it succeeds. Returns the token response.
    pub async fn user_tokens(&self, client: &TestClient, login: &str, password: &str) -> Value {
        let (status, body) = self
            .token(&[
                ("grant_type", "password"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("username", login),
                ("password", password),
            ])
            .await;
        assert_eq!(status, StatusCode::OK, "password grant: {body}");
        body
    }

    /// Application token (client_credentials); panics unless it succeeds.
    pub async fn app_token(&self, client: &TestClient) -> String {
        let (status, body) = self
            .token(&[
                ("grant_type", "client_credentials"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
            ])
            .await;
        assert_eq!(status, StatusCode::OK, "client_credentials: {body}");
        body["access_token"].as_str().unwrap().to_owned()
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

/// Asserts a token-endpoint error: status, `error`, `code`.
#[track_caller]
pub fn assert_error(actual: &(StatusCode, Value), status: u16, error: &str, code: u64) {
    let (got_status, body) = actual;
    assert_eq!(got_status.as_u16(), status, "status; body: {body}");
    assert_eq!(body["error"], error, "error; body: {body}");
    assert_eq!(body["code"], code, "code; body: {body}");
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()),
        "error_description; body: {body}"
    );
}

/// Everything the test servers logged so far in this test binary, as JSON lines.
///
/// One global subscriber, installed by the first app: tracing caches per-callsite interest
/// process-wide, so a thread-local subscriber misses events once other tests have run. Tests
/// find their own lines by values unique to them (a fresh client id, fresh secrets).
pub fn captured_logs() -> String {
    String::from_utf8_lossy(&log_buffer().lock().unwrap()).into_owned()
}

fn log_buffer() -> &'static Arc<Mutex<Vec<u8>>> {
    static BUFFER: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    BUFFER.get_or_init(Default::default)
}

fn install_log_capture() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_current_span(true)
            .with_max_level(tracing::Level::INFO)
            .with_writer(|| LogSink(log_buffer().clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

struct LogSink(Arc<Mutex<Vec<u8>>>);

impl Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
