//! The verification page's guess limit under truly simultaneous guesses (part 20: counted before
//! the lookup, a right code refunding its count): of 40 guesses sent at once from one address,
//! one of them the real code, no more wrong ones than the limit are looked up; the others are
//! refused.

use super::page::{device_client, Page};
use super::*;
use crate::authorize::flow::csrf;
use futures::future::join_all;
use reqwest::{header, StatusCode};

crate::on_both_stores!(parallel_guesses_never_get_more_than_the_limit_looked_up);

/// `RATE_LIMIT_OTP_FAILURES_PER_HOUR`'s default.
const LIMIT: usize = 10;
/// Four times the limit; more would only measure DynamoDB Local's throughput on one hot item
/// (one attempt may take 2 s, then 503).
const GUESSES: usize = 40;

async fn parallel_guesses_never_get_more_than_the_limit_looked_up(app: TestApp) {
    let client = device_client(&app).await;
    let body = codes(&app, &client, "read").await;
    let real = body["user_code"].as_str().unwrap().to_owned();
    let mut page = Page::new(&app);
    let form = page.open("").await.text().await.unwrap();
    let (token, cookie) = (csrf(&form), page.cookie_header());
    let guesses = (0..GUESSES).map(|i| {
        let typed = if i == GUESSES / 2 {
            real.clone()
        } else {
            "BBBB-BBBB".to_owned()
        };
        let (app, token, cookie) = (&app, token.clone(), cookie.clone());
        async move {
            let form = [
                ("csrf_token", token.as_str()),
                ("action", "code"),
                ("user_code", typed.as_str()),
            ];
            let answer = app
                .http
                .post(app.url("/oauth2/v0/device"))
                .header(header::COOKIE, cookie)
                .form(&form)
                .send()
                .await
                .unwrap();
            (answer.status(), answer.text().await.unwrap())
        }
    });
    let answers = join_all(guesses).await;
    let looked_up: Vec<&String> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .map(|(_, html)| html)
        .collect();
    let refused = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::TOO_MANY_REQUESTS)
        .count();
    // The right code gives its count back (part 20), so one more wrong guess may then be looked
    // up in its place: the wrong ones never pass the limit.
    let wrong = looked_up
        .iter()
        .filter(|html| html.contains("That code is not valid"))
        .count();
    assert!(
        wrong <= LIMIT && looked_up.len() <= LIMIT + 1,
        "{wrong} wrong of {} guesses looked up of {GUESSES} under a limit of {LIMIT}",
        looked_up.len()
    );
    assert_eq!(
        looked_up.len() + refused,
        GUESSES,
        "every other guess refused"
    );
    for html in &looked_up {
        assert!(
            html.contains("That code is not valid") || html.contains(r#"name="password""#),
            "a looked-up guess is answered as wrong or with the sign-in: {html}"
        );
    }
    // The limit was reached: even the real code is refused from this address now.
    let (status, _) = page.enter(&real).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}
