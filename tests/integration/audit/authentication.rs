//! `client.authentication_failed`: a known client's failed authentication is on record, sampled
//! (at most one event a minute per client and instance), so that a flood of wrong secrets is not
//! a flood of writes; nothing is recorded for an unknown client id or a right secret.

use crate::support::app::TestApp;
use reqwest::StatusCode;

use super::{client_subject, events_of, json};

crate::on_both_stores!(a_known_clients_failed_authentication_is_recorded_once_a_minute);

async fn a_known_clients_failed_authentication_is_recorded_once_a_minute(app: TestApp) {
    let client = app.create_client("read").await;
    let attempt = |secret: &'static str| {
        let (app, id) = (&app, client.id.clone());
        async move {
            let form = [
                ("grant_type", "client_credentials"),
                ("client_id", id.as_str()),
                ("client_secret", secret),
            ];
            app.token(&form).await
        }
    };
    let failures = || async {
        events_of(&app, client_subject(&client.id))
            .await
            .iter()
            .map(json)
            .filter(|event| event["event"] == "client.authentication_failed")
            .collect::<Vec<_>>()
    };
    assert!(failures().await.is_empty());
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client.id.as_str()),
        ("client_secret", client.secret.as_str()),
    ];
    let (status, _) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        failures().await.is_empty(),
        "a right secret records nothing"
    );

    for _ in 0..3 {
        let (status, body) = attempt("not-the-secret").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    let recorded = failures().await;
    assert_eq!(recorded.len(), 1, "sampled: {recorded:?}");
    assert_eq!(recorded[0]["reason"], "wrong_secret");
    assert_eq!(recorded[0]["client_id"], client.id.as_str());
    assert!(
        !recorded[0].to_string().contains("not-the-secret"),
        "the presented secret is never recorded"
    );

    app.clock.advance(61);
    attempt("still-not-the-secret").await;
    assert_eq!(failures().await.len(), 2, "a minute later, recorded again");
}
