//! Fetches of client ID metadata documents per source address
//! (`RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR`): a fetch counts, a kept and fresh document does not;
//! past the limit nothing is fetched, the authorize endpoint answers its 429 page and the token
//! endpoint 429 `slow_down` code 145, both with `Retry-After`.

use super::*;
use crate::support::app::json_of;
use token_domain::clock::Clock;

/// The limit these tests run with.
pub const FETCHES: u32 = 2;

crate::on_both_stores!(using super::fetches_limited;
    fetches_past_the_limit_are_refused_and_kept_documents_still_served,
);

async fn fetches_past_the_limit_are_refused_and_kept_documents_still_served(documents: Documents) {
    let app = &documents.app;
    let first = documents.public_client(Some(3600));
    let second = documents.public_client(Some(3600));
    for client in [&first, &second, &first, &first] {
        let page = open_authorize(app, &client.id).await;
        assert_eq!(page.status(), StatusCode::OK, "{}", client.id);
    }
    assert_eq!(documents.server.all_hits(), 2, "one fetch per document");

    // A third document: not fetched, a 429 page, never a redirect.
    let third = documents.public_client(Some(3600));
    let page = open_authorize(app, &third.id).await;
    assert_eq!(page.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(page.headers().get("location").is_none());
    let retry_after: i64 = page.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    assert!(page
        .text()
        .await
        .unwrap()
        .contains("Too many new applications"));

    // At the token endpoint, client authentication by the URL: the limit's JSON answer.
    let answer = app
        .post_form(
            "/v0/token",
            &[
                ("grant_type", "authorization_code"),
                ("client_id", &third.id),
                ("code", "anything"),
                ("code_verifier", crate::authorize::flow::VERIFIER),
                ("redirect_uri", crate::authorize::flow::REDIRECT_URI),
            ],
        )
        .await;
    assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(answer.headers().contains_key("retry-after"));
    let (_, body) = json_of(answer).await;
    assert_eq!(body["error"], "slow_down", "{body}");
    assert_eq!(body["code"], 145, "{body}");
    assert_eq!(
        documents.server.all_hits(),
        2,
        "nothing fetched past the limit"
    );
    let stored = app
        .store
        .document_clients()
        .get_document_client(
            &token_domain::ClientId::of_document_url(&third.id),
            app.clock.now(),
        )
        .await
        .unwrap();
    assert!(stored.is_none(), "nothing kept for the refused document");

    // The kept ones are still served from the store.
    let page = open_authorize(app, &first.id).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(documents.server.all_hits(), 2);
}
