//! Round-trip budgets (docs/benchmarks.md): the DynamoDB calls each grant and flow makes on a warm
//! instance, counted at the wire by the proxy in front of DynamoDB Local. A change that makes a
//! grant slower (one more call in series) fails here.
//!
//! "Warm" is as deployed: the read cache on (`READ_CACHE_SECONDS`), and the flow run once
//! before the counted run so that the client, the principal and the company are cached.
//!
//! Plus the cache's bound: a client disabled elsewhere stops within `READ_CACHE_SECONDS`.

mod client_secrets;
mod code;
mod counted;
mod device;
mod federation;
mod hot_items;
mod id_jag;
mod openid;
mod otp;
mod par;
mod private_key_jwt;
mod refresh;
mod scim;
mod sessions;
mod token_exchange;

pub(crate) use otp::RecordingMailer;

use std::sync::Arc;

use crate::support::app::{AppOptions, Backend, RequestBody, TestApp};
use crate::support::assertions::assert_token_error;
use counted::*;
use serde_json::json;
use token_core::admin;
use token_core::context::Context;
use token_core::import::import_legacy_tokens;
use token_domain::ConsumerKey;
use token_store::Store;
use uuid::Uuid;

macro_rules! dynamodb_test {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
        async fn $name() {
            if let Some(counted) = Counted::start().await {
                budgets::$name(counted).await;
            }
        }
    )*};
}

dynamodb_test!(
    client_credentials,
    client_credentials_with_dpop,
    client_credentials_with_several_secrets,
    user_password,
    company_authtoken_grant,
    company_auth_token_issue,
    legacy_exchange,
    refresh,
    refresh_retry_within_grace,
    refresh_of_a_token_written_without_its_origin,
    userinfo,
    logout,
    one_time_password,
    client_credentials_with_private_key_jwt,
    secrets_list,
    secrets_add,
    secrets_revoke,
    device_poll,
    device_poll_without_the_client_limit,
    token_exchange,
    par_push,
    par_authorize,
    authorize_from_a_session,
    authorization_code,
    federated_sign_in,
    scim_provisioning,
    id_jag_issue,
    id_jag_redeem,
    id_jag_redeem_after_a_failed_write,
);

mod budgets {
    pub use super::client_secrets::{secrets_add, secrets_list, secrets_revoke};
    pub use super::code::authorization_code;
    pub use super::device::{device_poll, device_poll_without_the_client_limit};
    pub use super::federation::federated_sign_in;
    pub use super::id_jag::{id_jag_issue, id_jag_redeem, id_jag_redeem_after_a_failed_write};
    pub use super::openid::{logout, userinfo};
    pub use super::otp::one_time_password;
    pub use super::par::{par_authorize, par_push};
    pub use super::private_key_jwt::client_credentials_with_private_key_jwt;
    pub use super::refresh::{
        refresh, refresh_of_a_token_written_without_its_origin, refresh_retry_within_grace,
    };
    pub use super::scim::scim_provisioning;
    pub use super::sessions::authorize_from_a_session;
    pub use super::token_exchange::token_exchange;
    use super::*;

    /// The token's `jti` (one item under 1 KB: 1) and the client's counter (1).
    const CLIENT_CREDENTIALS_UNITS: f64 = 1.0 + RATE_LIMIT_UNITS;
    /// The proof's `jti` (1), the token's `jti` (1), the client's counter (1).
    const DPOP_UNITS: f64 = 2.0 + RATE_LIMIT_UNITS;
    /// The attempt's counter (1), the two rate counters (2), and the new family's transaction
    /// with the attempt's refund in it (8 items under 1 KB at 2 each: 16).
    const PASSWORD_UNITS: f64 = 1.0 + 2.0 * RATE_LIMIT_UNITS + NEW_FAMILY_UNITS + 2.0;
    /// The two rate counters (2) and the family's transaction: the family, its `jti`, the
    /// connection and three audit events (6 items under 1 KB at 2 each: 12; a company has no
    /// user entry of the connection, its first refresh token no record).
    const COMPANY_AUTHTOKEN_GRANT_UNITS: f64 = 2.0 * RATE_LIMIT_UNITS + 12.0;
    /// One transaction: the auth token and its two audit events (3 items under 1 KB at 2 each).
    const COMPANY_AUTH_TOKEN_ISSUE_UNITS: f64 = 6.0;
    /// The new family's transaction with the exchange link in it (8 items under 1 KB at 2 each).
    const LEGACY_EXCHANGE_UNITS: f64 = NEW_FAMILY_UNITS + 2.0;

    /// Goal ≤ 1 + the rate limit: the client comes from the cache; one call writes the token's
    /// `jti`, one counts the client's request (each limit a request is counted against costs
    /// one conditional write, `RATE_LIMIT`).
    pub async fn client_credentials(c: Counted) {
        let client = c.app.create_client("read").await;
        c.app.app_token(&client).await;
        let (_, calls) = c
            .calls_of("client_credentials", c.app.app_token(&client))
            .await;
        assert_within(&calls, 1 + RATE_LIMIT, "client_credentials");
        assert_write_units(&calls, CLIENT_CREDENTIALS_UNITS, "client_credentials");
        assert_eq!(calls.count("PutItem"), 1);
        assert_eq!(
            calls.count("UpdateItem"),
            RATE_LIMIT,
            "the client's counter"
        );
    }

    /// Goal ≤ 2 + the rate limit: the application token's `jti` and the proof's `jti` (one
    /// conditional PutItem, docs/decisions.md, DPoP); the proof itself is checked in memory.
    pub async fn client_credentials_with_dpop(c: Counted) {
        let client = c.app.create_client("read").await;
        let key = crate::dpop::DpopKey::generate();
        let form = crate::dpop::client_credentials(&client);
        let proof = key.token_proof(&c.app);
        crate::dpop::token_with(&c.app, &form, &[&proof]).await;
        let proof = key.token_proof(&c.app);
        let ((status, _, body), calls) = c
            .calls_of(
                "client_credentials with DPoP",
                crate::dpop::token_with(&c.app, &form, &[&proof]),
            )
            .await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
        assert_eq!(body["token_type"], "DPoP");
        assert_within(&calls, 2 + RATE_LIMIT, "client_credentials with DPoP");
        assert_write_units(&calls, DPOP_UNITS, "client_credentials with DPoP");
        assert_eq!(
            calls.count("PutItem"),
            2,
            "the token's jti, the proof's jti"
        );
    }

    /// The same budget for a client with several secrets, authenticating with its newest: every
    /// secret is in the one client record (cached), and a secret's last use is written at most
    /// hourly, by the first request (docs/decisions.md, Client secrets).
    pub async fn client_credentials_with_several_secrets(c: Counted) {
        let mut client = c.app.create_client("read").await;
        for _ in 0..3 {
            let added = admin::add_client_secret(c.app.ctx(), &client_id(&client), None)
                .await
                .unwrap();
            added.client_secret.expose().clone_into(&mut client.secret);
        }
        let (_, calls) = c
            .calls_of(
                "client_credentials, first use of a secret",
                c.app.app_token(&client),
            )
            .await;
        assert_eq!(
            calls.count("UpdateItem"),
            RATE_LIMIT + 1,
            "the secret's last use"
        );
        assert_write_units(
            &calls,
            CLIENT_CREDENTIALS_UNITS + 1.0,
            "client_credentials, and the secret's last use (its client's item, under 1 KB)",
        );
        let (_, calls) = c
            .calls_of(
                "client_credentials with the newest of 4 secrets",
                c.app.app_token(&client),
            )
            .await;
        assert_within(&calls, 1 + RATE_LIMIT, "client_credentials, 4 secrets");
        assert_write_units(
            &calls,
            CLIENT_CREDENTIALS_UNITS,
            "client_credentials, 4 secrets",
        );
        assert_eq!(calls.count("PutItem"), 1);
        assert_eq!(calls.count("GetItem"), 0, "the client is cached");
    }

    /// 5: the attempt counted before the password is checked (docs/decisions.md, Lockout), the
    /// user read with its login item, their authenticator app and passkeys (a user's own factor
    /// refuses the grant: docs/decisions.md, "Sign-in factors are required of whoever has
    /// them"), and the family's transaction, which takes the attempt back; plus two rate limits
    /// (the client's, the source address's).
    pub async fn user_password(c: Counted) {
        let client = c.app.create_client("read").await;
        let login = format!("user-{}@example.com", Uuid::new_v4().simple());
        c.app.create_user(&login, PASSWORD).await;
        c.app.user_tokens(&client, &login, PASSWORD).await;
        let (_, calls) = c
            .calls_of("password", c.app.user_tokens(&client, &login, PASSWORD))
            .await;
        assert_within(
            &calls,
            5 + 2 * RATE_LIMIT,
            "password (the attempt, the user, their authenticator app and passkeys, the family \
             with the refund + two rate limits)",
        );
        assert_write_units(&calls, PASSWORD_UNITS, "password");
        assert_eq!(
            calls.count("GetItem"),
            2,
            "the login item holds the user; the authenticator app's item"
        );
        assert_eq!(calls.count("Query"), 1, "the user's passkeys");
        assert_eq!(calls.count("TransactWriteItems"), 1);
        assert_eq!(
            calls.count("UpdateItem"),
            1 + 2 * RATE_LIMIT,
            "the attempt, no refund of its own"
        );
    }

    /// Goal ≤ 3 + two rate limits (client, source address); the issuing administrator is
    /// checked from the read cache.
    pub async fn company_authtoken_grant(c: Counted) {
        let (company, admin, crm) = c.company().await;
        let admin_token = &c.admin_token(&admin).await;
        let auth_token = c.issue_auth_token(&company, admin_token, &crm).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let company_id = company.id.to_string();
        let grant = [
            ("grant_type", "password"),
            ("credtype", "authtoken"),
            ("username", company_id.as_str()),
            ("password", auth_token.as_str()),
        ];
        let form = client_form(&crm, &grant);
        ok(c.app.token(&form).await);
        let (answer, calls) = c
            .calls_of("company authtoken grant", c.app.token(&form))
            .await;
        ok(answer);
        assert_within(&calls, 3 + 2 * RATE_LIMIT, "company authtoken grant");
        assert_write_units(
            &calls,
            COMPANY_AUTHTOKEN_GRANT_UNITS,
            "company authtoken grant",
        );
    }

    /// Goal ≤ 3.
    pub async fn company_auth_token_issue(c: Counted) {
        let (company, admin, crm) = c.company().await;
        let admin_token = &c.admin_token(&admin).await;
        c.issue_auth_token(&company, admin_token, &crm).await;
        let (_, calls) = c
            .calls_of(
                "company auth-token issue",
                c.issue_auth_token(&company, admin_token, &crm),
            )
            .await;
        assert_within(&calls, 3, "company auth-token issue");
        assert_write_units(
            &calls,
            COMPANY_AUTH_TOKEN_ISSUE_UNITS,
            "company auth-token issue",
        );
    }

    /// Goal ≤ 4.
    pub async fn legacy_exchange(c: Counted) {
        let app = &c.app;
        let client = app.create_client("read write").await;
        let consumer_key = format!("old-app-{}", Uuid::new_v4().simple());
        admin::link_legacy_app(
            app.ctx(),
            ConsumerKey::parse(&consumer_key).unwrap(),
            &client_id(&client),
        )
        .await
        .unwrap();
        let app_token = app.app_token(&client).await;
        let user = app
            .create_user(&format!("old-{}", Uuid::new_v4().simple()), PASSWORD)
            .await;
        let old_tokens = [
            format!("old-{}", Uuid::new_v4()),
            format!("old-{}", Uuid::new_v4()),
        ];
        let lines: String = old_tokens
            .iter()
            .map(|token| {
                let line = json!({
                    "token": token, "consumer_key": consumer_key, "principal_type": "user",
                    "principal_id": user.id.to_string(), "scopes": ["read"], "wsadmin": false,
                });
                line.to_string() + "\n"
            })
            .collect();
        import_legacy_tokens(app.ctx(), lines.as_bytes(), |_| {})
            .await
            .unwrap();
        let exchange = |token: &str| {
            let form = [
                ("token", token.to_owned()),
                ("secret", client.secret.clone()),
            ];
            let bearer = format!("Bearer {app_token}");
            let consumer_key = consumer_key.clone();
            async move {
                let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
                app.exchange(&consumer_key, "", Some(&bearer), RequestBody::Form(&form))
                    .await
            }
        };
        ok(exchange(&old_tokens[0]).await);
        // Another old token of the same user: its first exchange, on a warm instance.
        let (answer, calls) = c
            .calls_of("legacy exchange", exchange(&old_tokens[1]))
            .await;
        ok(answer);
        assert_within(&calls, 4, "legacy exchange");
        assert_write_units(&calls, LEGACY_EXCHANGE_UNITS, "legacy exchange");
    }
}

/// The cache's documented bound, on both stores: a client disabled by another process (as
/// `tokenctl clients disable` does) still works from a warm cache, and is refused once
/// `READ_CACHE_SECONDS` have passed.
async fn a_client_disabled_elsewhere_stops_within_the_cache_bound(backend: Backend) {
    let Some((store, _data)) = crate::support::app::fresh_store(backend).await else {
        return;
    };
    let app = TestApp::with_read_cache(
        store.clone(),
        backend,
        AppOptions::default(),
        READ_CACHE_SECONDS,
    )
    .await;
    let client = app.create_client("read").await;
    let cc = [("grant_type", "client_credentials")];
    ok(app.token(&client_form(&client, &cc)).await);

    let tokenctl = Context::new(store as Arc<dyn Store>);
    admin::disable_client(&tokenctl, &client_id(&client))
        .await
        .unwrap();
    app.clock.advance(READ_CACHE_SECONDS as i64 - 1);
    ok(app.token(&client_form(&client, &cc)).await);
    app.clock.advance(1);
    assert_token_error(
        &app.token(&client_form(&client, &cc)).await,
        403,
        "access_denied",
        59,
    );
}

mod cache_bound {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        a_client_disabled_elsewhere_stops_within_the_cache_bound(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
    async fn dynamodb() {
        a_client_disabled_elsewhere_stops_within_the_cache_bound(Backend::DynamoDb).await;
    }
}
