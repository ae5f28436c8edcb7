//! The limits the other modules leave out, over HTTP on both stores: one-time-password requests
//! per client (142), wrong one-time passwords across a client's passwords blocking the address
//! for a day (143), sign-in page posts counted with password grants per address (141), the
//! counters' TTLs on DynamoDB, and each deployment counting on counters of its own.

use super::*;
use crate::authorize::flow::{code_client, csrf, query, Session, LOGIN, PASSWORD};
use crate::otp::{mailed_password, otp_grant, request_otp, smtp_app, user_with_email, CHANNEL};
use token_core::limits::OTP_FAILURE_BLOCK_SECONDS;
use token_domain::UserStatus;

/// `Retry-After` of a refusal (panics without one).
fn retry_after(headers: &reqwest::header::HeaderMap) -> i64 {
    headers
        .get("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {headers:?}"))
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

mod otp_requests {
    use super::*;

    pub(crate) fn two_an_hour() -> AppOptions {
        with_limits(RateLimits {
            otp_client_per_hour: 2,
            ..RateLimits::default()
        })
    }

    crate::on_both_stores!(with crate::limits::per_deployment::otp_requests::two_an_hour();
        otp_requests_past_the_clients_hourly_limit_are_429_and_send_nothing);

    async fn otp_requests_past_the_clients_hourly_limit_are_429_and_send_nothing(base: TestApp) {
        let (app, server) = smtp_app(base).await;
        let client = app.create_client("read").await;
        user_with_email(&app, "ann", UserStatus::Active).await;
        let now = app.clock.now();
        app.clock.advance(3600 - now.rem_euclid(3600));
        mailed_password(&app, &server, &client, &[]).await;
        mailed_password(&app, &server, &client, &[]).await;
        let response = app
            .post_form(
                "/oauth2/v0/otp",
                &crate::otp::with_client(&client, &CHANNEL),
            )
            .await;
        let headers = response.headers().clone();
        let answer = crate::support::app::json_of(response).await;
        assert_token_error(&answer, 429, "slow_down", 142);
        let wait = retry_after(&headers);
        assert_eq!(wait, 3600, "until the hour ends");
        assert_eq!(server.received().len(), 2, "no third mail");
        // Another client is counted apart.
        let other = app.create_client("read").await;
        let (status, body) = request_otp(&app, &other, &CHANNEL).await;
        assert_eq!(status, 200, "{body}");
    }
}

mod otp_failures {
    use super::*;

    pub(crate) fn three_an_hour() -> AppOptions {
        with_limits(RateLimits {
            otp_failures_per_hour: 3,
            ..RateLimits::default()
        })
    }

    crate::on_both_stores!(with crate::limits::per_deployment::otp_failures::three_an_hour();
        wrong_passwords_across_requests_block_the_address_for_a_day);

    async fn wrong_passwords_across_requests_block_the_address_for_a_day(base: TestApp) {
        let (app, server) = smtp_app(base).await;
        let client = app.create_client("read").await;
        user_with_email(&app, "ann", UserStatus::Active).await;
        let wrong_for = |password: &str| {
            if password == "000000" {
                "000001"
            } else {
                "000000"
            }
            .to_owned()
        };
        let first = mailed_password(&app, &server, &client, &[]).await;
        for _ in 0..2 {
            let answer = otp_grant(
                &app,
                &client,
                &[("otp", &wrong_for(&first)), CHANNEL[0], CHANNEL[1]],
            )
            .await;
            assert_token_error(&answer, 400, "invalid_request", 85);
        }
        // A new password: the failures are the address's with this client, not the password's.
        let second = mailed_password(&app, &server, &client, &[]).await;
        let answer = otp_grant(
            &app,
            &client,
            &[("otp", &wrong_for(&second)), CHANNEL[0], CHANNEL[1]],
        )
        .await;
        assert_token_error(&answer, 400, "invalid_request", 85);

        let form = [("otp", second.as_str()), CHANNEL[0], CHANNEL[1]];
        let mut all = vec![("grant_type", "otp")];
        all.extend_from_slice(&form);
        let response = app
            .post_form("/v0/token", &crate::otp::with_client(&client, &all))
            .await;
        let headers = response.headers().clone();
        let answer = crate::support::app::json_of(response).await;
        assert_token_error(&answer, 429, "slow_down", 143);
        let wait = retry_after(&headers);
        assert!(
            (OTP_FAILURE_BLOCK_SECONDS - 5..=OTP_FAILURE_BLOCK_SECONDS).contains(&wait),
            "about a day: {wait}"
        );
        // Still blocked an hour later, when the failures' own window has ended.
        app.clock.advance(3601);
        let answer = otp_grant(&app, &client, &[("otp", "123456"), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 429, "slow_down", 143);
        if let crate::support::stored_data::StoredData::Dynamo(store) = app.data.as_ref() {
            let blocks = crate::support::stored_data::scan_table(store)
                .await
                .into_iter()
                .filter(|item| {
                    matches!(item.get("sk"), Some(token_store::dynamodb::sdk::types::AttributeValue::S(sk)) if sk == "BLOCK")
                })
                .collect::<Vec<_>>();
            assert_eq!(blocks.len(), 1, "{blocks:?}");
            let until = &blocks[0]["expires_at"];
            assert_eq!(until, &blocks[0]["until"], "the block's TTL is its end");
        }
    }
}

mod sign_in_posts {
    use super::*;

    pub(crate) fn two_a_minute() -> AppOptions {
        with_limits(RateLimits {
            address_per_minute: 2,
            ..RateLimits::default()
        })
    }

    crate::on_both_stores!(with crate::limits::per_deployment::sign_in_posts::two_a_minute();
        sign_in_posts_and_password_grants_share_the_addresss_limit);

    async fn sign_in_posts_and_password_grants_share_the_addresss_limit(app: TestApp) {
        let client = code_client(&app).await;
        app.create_user(LOGIN, PASSWORD).await;
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
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
            ("login", LOGIN),
            ("password", "wrong"),
        ];
        let answer = session.post(&wrong).await;
        assert_eq!(answer.status(), StatusCode::OK, "the page again");
        // The password grant from the same address takes the minute's second count.
        let grant = [
            ("grant_type", "password"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("username", LOGIN),
            ("password", "wrong"),
        ];
        let (status, _, body) = token_with_headers(&app, &grant, &[]).await;
        assert_token_error(&(status, body), 400, "invalid_grant", 5);
        let right = [
            ("csrf_token", token.as_str()),
            ("login", LOGIN),
            ("password", PASSWORD),
        ];
        let answer = session.post(&right).await;
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait = retry_after(answer.headers());
        assert!((1..=60).contains(&wait), "{wait}");
        let page = answer.text().await.unwrap();
        assert!(
            page.contains("Too many sign-in attempts from your network"),
            "{page}"
        );
        assert_slow_down(token_with_headers(&app, &grant, &[]).await, 141, 60);
    }
}

mod deployments {
    use super::*;

    pub(crate) fn one_token_a_minute() -> AppOptions {
        with_limits(RateLimits {
            client_per_minute: 1,
            ..RateLimits::default()
        })
    }

    crate::on_both_stores!(with crate::limits::per_deployment::deployments::one_token_a_minute();
        each_deployment_counts_on_its_own_counters);

    /// Two regions over one store, as a global table gives them: each counts its own requests
    /// (a replicated counter would otherwise be overwritten by the other region's, the last
    /// writer winning).
    async fn each_deployment_counts_on_its_own_counters(app: TestApp) {
        let client = app.create_client("read").await;
        let now = app.clock.now();
        app.clock.advance(60 - now.rem_euclid(60));
        let other = app.spawn_other_region().await;
        let (status, _, _) = token_with_headers(&app, &client_credentials(&client), &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_slow_down(
            token_with_headers(&app, &client_credentials(&client), &[]).await,
            140,
            60,
        );
        let (status, _, body) = token_with_headers(&other, &client_credentials(&client), &[]).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "the other region's own count: {body}"
        );
        assert_slow_down(
            token_with_headers(&other, &client_credentials(&client), &[]).await,
            140,
            60,
        );
        if let crate::support::stored_data::StoredData::Dynamo(store) = app.data.as_ref() {
            let window_end = app.clock.now() - app.clock.now().rem_euclid(60) + 60;
            let counters: Vec<_> = crate::support::stored_data::scan_table(store)
                .await
                .into_iter()
                .filter(|item| {
                    matches!(item.get("pk"), Some(token_store::dynamodb::sdk::types::AttributeValue::S(pk)) if pk.starts_with("RATE#client#"))
                })
                .collect();
            assert_eq!(counters.len(), 2, "one counter a region: {counters:?}");
            for counter in counters {
                assert_eq!(
                    counter["expires_at"],
                    token_store::dynamodb::sdk::types::AttributeValue::N(window_end.to_string()),
                    "a counter's TTL is its window's end"
                );
            }
        }
    }
}
