//! The counting harness: an app behind the counting proxy, the flows' setup steps, and the
//! budget assertion.

use std::sync::Arc;

use crate::support::app::{json_of, AppOptions, Backend, TestApp, TestClient};
use crate::support::ddb_proxy::{Calls, DdbProxy};
use crate::support::dynamodb::unique_table_name;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::{self, NewClient};
use token_domain::{ClientId, Company, Scopes, User};
use token_store::dynamodb::DynamoStore;
use uuid::Uuid;

pub(super) const READ_CACHE_SECONDS: u64 = 5;
/// What one rate limit costs a request: one conditional write (`UpdateItem` of its counter).
pub(super) const RATE_LIMIT: usize = 1;
/// ... and in write units: its counter is a small item (1).
pub(super) const RATE_LIMIT_UNITS: f64 = 1.0;
/// The write units of a new family's transaction: seven items under 1 KB at 2 units each (the
/// family, its access token's `jti`, the connection and the user's entry of it, three audit
/// events: principal, client, family). Its first refresh token names its family and has no
/// record (16 units while it had). The password, device, `otp` and legacy grants write it, some
/// with an item more.
pub(super) const NEW_FAMILY_UNITS: f64 = 14.0;
pub(super) const PASSWORD: &str = "correct horse battery staple";

/// A flow's calls as the budgets count them: the SDK's first attempts (what the flow asks of
/// DynamoDB), and apart from them its resends, which depend on the machine's load (an answer
/// later than the SDK's attempt timeout), not on the flow. Reads as its first attempts.
pub(super) struct FlowCalls {
    first: Calls,
    resends: Calls,
}

impl FlowCalls {
    /// First attempts and resends together: what the items took, e.g. a hot item's writes.
    pub(super) fn including_resends(&self) -> Calls {
        let mut all = self.first.0.clone();
        all.extend(self.resends.0.iter().cloned());
        Calls(all)
    }

    /// `; resent by the SDK, not counted: ...`, or nothing.
    fn resends_noted(&self) -> String {
        if self.resends.total() == 0 {
            return String::new();
        }
        format!(
            "; resent by the SDK, not counted: {}",
            self.resends.attempts()
        )
    }
}

impl std::ops::Deref for FlowCalls {
    type Target = Calls;

    fn deref(&self) -> &Calls {
        &self.first
    }
}

/// An app over a fresh table behind the counting proxy, with the read cache on.
pub(super) struct Counted {
    pub(super) proxy: DdbProxy,
    pub(super) app: TestApp,
    /// The app's store, for raw writes to its table (counted too: outside `calls_of`).
    pub(super) store: Arc<DynamoStore>,
}

/// [`Counted::calls_of`] for a test that gave its app away (to a fixture): the calls `run`
/// makes through `proxy`.
pub(super) async fn calls_through<T>(
    proxy: &DdbProxy,
    what: &str,
    run: impl std::future::Future<Output = T>,
) -> (T, FlowCalls) {
    proxy.take_calls();
    let value = run.await;
    let calls = proxy.take_calls();
    // Without the header a resend would count as a flow's own call, silently.
    assert!(
        calls.0.iter().all(|c| c.attempt.is_some()),
        "{what}: a call without the SDK's amz-sdk-request header: {}",
        calls.attempts()
    );
    let (first, resends) = calls.split_resends();
    println!(
        "{what}: {} calls {:?} {}",
        first.total(),
        first.by_operation(),
        first.cost_summary()
    );
    if resends.total() > 0 {
        println!(
            "{what}: resent by the SDK, not counted: {}",
            resends.attempts()
        );
    }
    (value, FlowCalls { first, resends })
}

impl Counted {
    pub(super) async fn start() -> Option<Self> {
        let proxy = DdbProxy::start().await?;
        let store = DynamoStore::connect(&unique_table_name(), Some(proxy.url())).await;
        store
            .create_table_if_missing()
            .await
            .expect("create a test table");
        let store = Arc::new(store);
        let app = TestApp::with_read_cache(
            store.clone(),
            Backend::DynamoDb,
            AppOptions::default(),
            READ_CACHE_SECONDS,
        )
        .await;
        Some(Self { proxy, app, store })
    }

    /// The same table behind the same proxy, the app built again with `options` (a mailer).
    pub(super) async fn with_options(self, options: AppOptions) -> Self {
        let app = TestApp::with_read_cache(
            self.store.clone(),
            Backend::DynamoDb,
            options,
            READ_CACHE_SECONDS,
        )
        .await;
        Self { app, ..self }
    }

    /// The calls `run` makes, printed by operation with their capacity units and the items they
    /// write (`--nocapture` shows today's counts; infra/cost-model.py and infra/bench.sh read
    /// these lines), the SDK's resends on a line of their own.
    pub(super) async fn calls_of<T>(
        &self,
        what: &str,
        run: impl std::future::Future<Output = T>,
    ) -> (T, FlowCalls) {
        calls_through(&self.proxy, what, run).await
    }

    /// A company, its administrator, and an app with a Connect URL the company is enabled for.
    pub(super) async fn company(&self) -> (Company, User, TestClient) {
        let app = &self.app;
        let company = app.create_company("Acme").await;
        let login = format!("admin-{}@acme.example", Uuid::new_v4().simple());
        let admin = app
            .create_user_with(&login, PASSWORD, |u| {
                u.company_id = Some(company.id);
                u.is_admin = true;
            })
            .await;
        let crm = app
            .create_client_with(NewClient {
                connect_url: Some("https://crm.example.com/connect".into()),
                ..NewClient::named("crm", Scopes::parse("read write").unwrap())
            })
            .await;
        admin::enable_company_for_client(app.ctx(), &company.id, &client_id(&crm))
            .await
            .unwrap();
        (company, admin, crm)
    }

    /// The administrator's access token, from a first-party client (the company endpoint's
    /// caller).
    pub(super) async fn admin_token(&self, admin: &User) -> String {
        let portal = self.app.create_first_party_client("profile").await;
        let tokens = self
            .app
            .user_tokens(&portal, admin.login.as_str(), PASSWORD)
            .await;
        tokens["access_token"].as_str().unwrap().to_owned()
    }

    /// The company auth-token endpoint as the administrator; the JSON answer.
    pub(super) async fn issue_auth_token(
        &self,
        company: &Company,
        admin_token: &str,
        crm: &TestClient,
    ) -> Value {
        let request = self
            .app
            .company_auth_token_request(&company.id.to_string(), Some(admin_token), &[])
            .form(&[("client_id", crm.id.as_str())]);
        ok(json_of(request.send().await.unwrap()).await)
    }
}

pub(super) fn client_id(client: &TestClient) -> ClientId {
    ClientId::parse(&client.id).unwrap()
}

#[track_caller]
pub(super) fn ok((status, body): (StatusCode, Value)) -> Value {
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[track_caller]
pub(super) fn assert_within(calls: &FlowCalls, budget: usize, what: &str) {
    assert!(
        calls.total() <= budget,
        "{what}: {} DynamoDB calls, budget {budget}: {:?}{}",
        calls.total(),
        calls.by_operation(),
        calls.resends_noted()
    );
}

/// A flow's write units, exactly: each budget is one constant per flow (its comment says what
/// the units are made of), so a change in what a flow writes, or in its items' sizes across a
/// KB, shows here and is carried into docs/benchmarks.md and infra/cost-model.py's fallback.
#[track_caller]
pub(super) fn assert_write_units(calls: &FlowCalls, budget: f64, what: &str) {
    assert!(
        (calls.write_units() - budget).abs() < f64::EPSILON,
        "{what}: {} write units, budget {budget}: {}{}",
        calls.write_units(),
        calls.cost_summary(),
        calls.resends_noted()
    );
}

pub(super) fn client_form<'a>(
    client: &'a TestClient,
    grant: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    form.extend_from_slice(grant);
    form
}
