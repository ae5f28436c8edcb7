//! `POST /appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me` over real HTTP, on SQLite
//! and on DynamoDB Local (docs/decisions.md, Old-token exchange). One module per subject; the
//! migration fixtures they share (and `exchange_principals` uses) are here.

mod families;
mod import_benchmark;
mod issuance;
mod refusals;

use crate::support::app::{RequestBody, TestApp, TestClient};
use reqwest::StatusCode;
use serde_json::{json, Value};
use token_core::import::import_legacy_tokens;
use token_domain::{Company, PrincipalId, User};
use uuid::Uuid;

/// The new app, with the old app's consumer key linked to it.
pub(crate) struct Migration {
    pub(crate) client: TestClient,
    pub(crate) consumer_key: String,
    pub(crate) app_token: String,
}

impl Migration {
    pub(crate) async fn new(app: &TestApp, scopes: &str) -> Self {
        let client = app.create_client(scopes).await;
        let consumer_key = format!("old-app-{}", Uuid::new_v4().simple());
        app.link_legacy_app(&consumer_key, &client).await;
        let app_token = app.app_token(&client).await;
        Self {
            client,
            consumer_key,
            app_token,
        }
    }

    /// Exchanges `token` with the right bearer token and secret, as a form.
    pub(crate) async fn exchange(&self, app: &TestApp, token: &str) -> (StatusCode, Value) {
        self.exchange_with(app, "", token).await
    }

    pub(crate) async fn exchange_with(
        &self,
        app: &TestApp,
        query: &str,
        token: &str,
    ) -> (StatusCode, Value) {
        self.exchange_under(app, &self.consumer_key, query, token)
            .await
    }

    /// As [`Self::exchange_with`], under any consumer key (linked to this app or not).
    pub(crate) async fn exchange_under(
        &self,
        app: &TestApp,
        consumer_key: &str,
        query: &str,
        token: &str,
    ) -> (StatusCode, Value) {
        app.exchange(
            consumer_key,
            query,
            Some(&self.bearer()),
            RequestBody::Form(&[("token", token), ("secret", &self.client.secret)]),
        )
        .await
    }

    /// The `Authorization` header value of this app's application token.
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.app_token)
    }

    /// A new user with one old token of this app (scope `read`), imported: the user and the
    /// token.
    pub(crate) async fn user_with_old_token(
        &self,
        app: &TestApp,
        login: &str,
    ) -> (PrincipalId, String) {
        let user = user_id(app, login).await;
        let old = old_token();
        import(
            app,
            &[user_line(&old, &self.consumer_key, &user, &["read"])],
        )
        .await;
        (user, old)
    }

    /// A new administrator of `company` (`login`) with one WSAdmin token of this app, imported:
    /// the administrator and the token.
    pub(crate) async fn admin_with_wsadmin_token(
        &self,
        app: &TestApp,
        login: &str,
        company: &Company,
        scopes: &[&str],
    ) -> (User, String) {
        let admin = app.create_company_admin(login, "pw", company).await;
        let wsadmin = old_token();
        let line = wsadmin_line(&wsadmin, &self.consumer_key, &admin.id, &company.id, scopes);
        import(app, &[line]).await;
        (admin, wsadmin)
    }
}

/// Imports old tokens through the migration import (JSON Lines), as `tokenctl legacy-tokens
/// import` does.
pub(crate) async fn import(app: &TestApp, lines: &[Value]) {
    let text: String = lines.iter().map(|line| line.to_string() + "\n").collect();
    let report = import_legacy_tokens(app.ctx(), text.as_bytes(), |_| {})
        .await
        .unwrap();
    assert_eq!(
        report.imported,
        lines.len() as u64,
        "{:?}",
        report.skipped_lines
    );
}

pub(crate) fn old_token() -> String {
    format!("old-{}", Uuid::new_v4())
}

/// One import line for a user's old token.
pub(crate) fn user_line(
    token: &str,
    consumer_key: &str,
    user: &PrincipalId,
    scopes: &[&str],
) -> Value {
    principal_line(token, consumer_key, "user", user, scopes)
}

/// One import line for a company's old token.
pub(crate) fn company_line(
    token: &str,
    consumer_key: &str,
    company: &PrincipalId,
    scopes: &[&str],
) -> Value {
    principal_line(token, consumer_key, "company", company, scopes)
}

/// One import line for a WSAdmin token: an administrator's, naming their company.
pub(crate) fn wsadmin_line(
    token: &str,
    consumer_key: &str,
    admin: &PrincipalId,
    company: &PrincipalId,
    scopes: &[&str],
) -> Value {
    let mut line = user_line(token, consumer_key, admin, scopes);
    line["wsadmin"] = json!(true);
    line["company_id"] = json!(company.to_string());
    line
}

fn principal_line(
    token: &str,
    consumer_key: &str,
    principal_type: &str,
    principal: &PrincipalId,
    scopes: &[&str],
) -> Value {
    json!({
        "token": token,
        "consumer_key": consumer_key,
        "principal_type": principal_type,
        "principal_id": principal.to_string(),
        "scopes": scopes,
        "wsadmin": false,
    })
}

/// A line-building function: [`user_line`] or [`company_line`].
pub(crate) type LineOf = fn(&str, &str, &PrincipalId, &[&str]) -> Value;

/// Imports, with scope `read`, one old token of `principal` and one of a principal this store
/// does not know, both lines built by `line_of`: the two tokens, in that order.
pub(crate) async fn import_known_and_unknown(
    app: &TestApp,
    m: &Migration,
    line_of: LineOf,
    principal: &PrincipalId,
) -> (String, String) {
    let unknown = PrincipalId::new(Uuid::new_v4());
    let (known_token, unknown_token) = (old_token(), old_token());
    import(
        app,
        &[
            line_of(&known_token, &m.consumer_key, principal, &["read"]),
            line_of(&unknown_token, &m.consumer_key, &unknown, &["read"]),
        ],
    )
    .await;
    (known_token, unknown_token)
}

/// Whether the exchange linked the old token to a family.
pub(crate) async fn is_linked(app: &TestApp, old_token: &str) -> bool {
    app.stored_legacy_link(old_token).await.is_some()
}

#[track_caller]
pub(crate) fn assert_ok(actual: &(StatusCode, Value)) -> &Value {
    let (status, body) = actual;
    assert_eq!(*status, StatusCode::OK, "body: {body}");
    assert_eq!(body["code"], "OK", "{body}");
    body
}

async fn user_id(app: &TestApp, login: &str) -> PrincipalId {
    app.create_user(login, "pw-irrelevant").await.id
}
