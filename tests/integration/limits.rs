//! Abuse limits over HTTP, on both stores: 429 `slow_down` with a code of its own and
//! `Retry-After`, nothing issued; the source address is the socket's, never a header; sign-in
//! posts per pending request; one approval per pending request; company tokens stop with their
//! administrator.

use crate::support::app::{AppOptions, TestApp, TestClient};
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;
use serde_json::Value;
use token_core::config::{Policy, RateLimits};
use token_domain::clock::Clock;

mod per_deployment;

const USER_PASSWORD: &str = "limits password 1";

pub(crate) fn with_limits(rate_limits: RateLimits) -> AppOptions {
    AppOptions {
        policy: Policy {
            rate_limits,
            ..Policy::default()
        },
        ..AppOptions::default()
    }
}

fn client_credentials(client: &TestClient) -> [(&str, &str); 3] {
    [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ]
}

/// Sends `form` to the token endpoint (with `headers`): status, `Retry-After`, body.
async fn token_with_headers(
    app: &TestApp,
    form: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> (StatusCode, Option<i64>, Value) {
    let mut request = app
        .http
        .post(app.url("/v0/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).unwrap());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().unwrap());
    (status, retry_after, response.json().await.unwrap())
}

#[track_caller]
fn assert_slow_down(answer: (StatusCode, Option<i64>, Value), code: u64, window: i64) {
    let (status, retry_after, body) = answer;
    assert_token_error(&(status, body.clone()), 429, "slow_down", code);
    let retry_after = retry_after.unwrap_or_else(|| panic!("no Retry-After; body: {body}"));
    assert!(
        (1..=window).contains(&retry_after),
        "Retry-After {retry_after}"
    );
}

mod per_client {
    use super::*;

    crate::on_both_stores!(with crate::limits::with_limits(
        token_core::config::RateLimits {
            client_per_minute: 3,
            ..token_core::config::RateLimits::default()
        }
    );  token_requests_past_the_clients_limit_are_429_until_the_minute_ends,
        refreshes_past_the_clients_limit_are_429_and_change_nothing);

    async fn token_requests_past_the_clients_limit_are_429_until_the_minute_ends(app: TestApp) {
        let (busy, other) = (
            app.create_client("read").await,
            app.create_client("read").await,
        );
        // At the start of a minute, so that the three requests share a window.
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
        for _ in 0..3 {
            let (status, _, body) = token_with_headers(&app, &client_credentials(&busy), &[]).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        assert_slow_down(
            token_with_headers(&app, &client_credentials(&busy), &[]).await,
            140,
            60,
        );
        let (status, _, _) = token_with_headers(&app, &client_credentials(&other), &[]).await;
        assert_eq!(status, StatusCode::OK, "another client is counted apart");
        app.clock.advance(60);
        let (status, _, _) = token_with_headers(&app, &client_credentials(&busy), &[]).await;
        assert_eq!(status, StatusCode::OK, "the next minute starts from zero");
    }

    fn refresh_form<'a>(client: &'a TestClient, refresh_token: &'a str) -> [(&'a str, &'a str); 4] {
        [
            ("grant_type", "refresh_token"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("refresh_token", refresh_token),
        ]
    }

    /// A rotation counts its request in its own write, and any other refresh before it writes
    /// or answers (docs/decisions.md, "Abuse limits"): either way the limit holds, and a
    /// refresh refused by it rotates, retries and revokes nothing.
    async fn refreshes_past_the_clients_limit_are_429_and_change_nothing(app: TestApp) {
        let client = app.create_client("read").await;
        app.create_user("limited-refresher", USER_PASSWORD).await;
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
        let first = app
            .user_tokens(&client, "limited-refresher", USER_PASSWORD)
            .await;
        let rotated = first["refresh_token"].as_str().unwrap();
        let family_id = app.stored_refresh_token(rotated).await.family_id;
        let (status, second) = app.refresh(&client, rotated).await;
        assert_eq!(status, StatusCode::OK, "{second}");
        let current = second["refresh_token"].as_str().unwrap();
        let (status, _, body) =
            token_with_headers(&app, &refresh_form(&client, "no such token"), &[]).await;
        assert_token_error(&(status, body), 400, "invalid_grant", 108);

        // Three requests made: the current token, the rotated one within its grace (a retry)
        // and a request without a token are refused alike.
        for token in [current, rotated] {
            assert_slow_down(
                token_with_headers(&app, &refresh_form(&client, token), &[]).await,
                140,
                60,
            );
        }
        let without_token = &refresh_form(&client, "")[..3];
        assert_slow_down(token_with_headers(&app, without_token, &[]).await, 140, 60);
        let family = app.stored_family(&family_id).await;
        assert_eq!(family.generation, 1, "not rotated past the limit");
        assert!(
            family.revoked_at.is_none(),
            "nothing revoked past the limit"
        );

        app.clock.advance(60);
        let (status, third) = app.refresh(&client, current).await;
        assert_eq!(status, StatusCode::OK, "still the current token: {third}");
        assert_eq!(app.stored_family(&family_id).await.generation, 2);
    }
}

mod per_address {
    use super::*;

    crate::on_both_stores!(with crate::limits::with_limits(
        token_core::config::RateLimits {
            address_per_minute: 2,
            ..token_core::config::RateLimits::default()
        }
    );  password_grants_past_the_addresss_limit_are_429_whatever_the_headers_say);

    async fn password_grants_past_the_addresss_limit_are_429_whatever_the_headers_say(
        app: TestApp,
    ) {
        let client = app.create_client("read").await;
        app.create_user("pat", USER_PASSWORD).await;
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
        let grant = |password: &'static str| {
            [
                ("grant_type", "password"),
                ("client_id", client.id.as_str()),
                ("client_secret", client.secret.as_str()),
                ("username", "pat"),
                ("password", password),
            ]
        };
        let (status, _, body) = token_with_headers(&app, &grant("wrong"), &[]).await;
        assert_token_error(&(status, body), 400, "invalid_grant", 5);
        let (status, _, _) = token_with_headers(&app, &grant(USER_PASSWORD), &[]).await;
        assert_eq!(status, StatusCode::OK);
        // The right password too, and a made-up forwarding header changes nothing.
        assert_slow_down(
            token_with_headers(
                &app,
                &grant(USER_PASSWORD),
                &[
                    ("x-forwarded-for", "203.0.113.9"),
                    ("x-real-ip", "203.0.113.9"),
                ],
            )
            .await,
            141,
            60,
        );
        let (status, _, _) = token_with_headers(&app, &client_credentials(&client), &[]).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "other grants are not counted per address"
        );
    }
}

mod sign_in {
    use crate::support::app::TestApp;
    use reqwest::StatusCode;

    use crate::authorize::flow::*;

    crate::on_both_stores!(
        a_pending_request_ends_after_ten_sign_in_posts,
        a_consent_is_approved_once,
    );

    async fn a_pending_request_ends_after_ten_sign_in_posts(app: TestApp) {
        let client = code_client(&app).await;
        app.create_user(LOGIN, PASSWORD).await;
        let mut session = Session::new(&app);
        let html = session
            .open(&query(&client, &[]))
            .await
            .text()
            .await
            .unwrap();
        let token = csrf(&html);
        let wrong = [
            ("csrf_token", token.as_str()),
            ("login", "nobody@example.com"),
            ("password", "wrong"),
        ];
        for post in 1..=10 {
            let answer = session.post(&wrong).await;
            assert_eq!(answer.status(), StatusCode::OK, "post {post}");
        }
        // The eleventh, right password or not: the request has ended.
        let right = [
            ("csrf_token", token.as_str()),
            ("login", LOGIN),
            ("password", PASSWORD),
        ];
        app.clock.advance(100);
        let answer = session.post(&right).await;
        // A rate limit's answer, 429, with `Retry-After` the seconds until the pending request
        // would have expired.
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        let retry_after = answer.headers()["retry-after"].to_str().unwrap().to_owned();
        assert_eq!(
            retry_after,
            (token_core::flows::authorize::PENDING_TTL_SECONDS - 100).to_string()
        );
        let page = answer.text().await.unwrap();
        assert!(page.contains("Too many sign-in attempts"), "{page}");
        assert!(
            !page.contains(r#"name="password""#),
            "no sign-in form: {page}"
        );
    }

    async fn a_consent_is_approved_once(app: TestApp) {
        let client = code_client(&app).await;
        app.create_user(LOGIN, PASSWORD).await;
        let mut session = Session::new(&app);
        let query = query(&client, &[]);
        let consent = session.sign_in(&query, PASSWORD).await;
        let signed_in = session.cookie.clone();
        let approve = [
            ("csrf_token", csrf(&consent)),
            ("decision", "approve".into()),
        ];
        let approve: Vec<(&str, &str)> = approve.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let first = session.post(&approve).await;
        assert!(redirect_query(&first).contains_key("code"));
        // The same cookie and form again (a replay by whoever copied them): no second code.
        session.cookie = signed_in;
        let replay = session.post(&approve).await;
        assert_eq!(replay.status(), StatusCode::BAD_REQUEST);
        assert!(replay.headers().get("location").is_none());
    }
}
