//! The budgets of identity assertion grants (docs/decisions.md, "Identity assertion grants"):
//! the company's IdP issuing an assertion from an ID token, and an app's authorization server
//! redeeming one, each deployment counted on DynamoDB behind the proxy while its peer runs on
//! SQLite. Warm as deployed: the peer's documents and keys in memory, the clients, the user and
//! the company from the read cache.

use super::counted::*;
use crate::federation::id_jag_fixture::{fetching_from, Pair};
use crate::support::app::{AppOptions, Backend, TestApp};
use crate::support::assertions::assert_token_error;
use crate::support::ddb_proxy::Fault;
use reqwest::StatusCode;

/// Goal ≤ 2 + the rate limit: the ID token is verified in memory; one read of its session
/// (`sid` still live); the user, the company and the client with its targets come from the
/// cache; `token.id_jag_issued` (one transaction filing it under the user and the client) is
/// the only write: the assertion is stored nowhere.
const ISSUE: usize = 2 + RATE_LIMIT;
/// The client's counter (1) and the event's two items under 1 KB (2 each).
const ISSUE_UNITS: f64 = RATE_LIMIT_UNITS + 4.0;

/// Goal ≤ 4 + the rate limit: the IdPs of the assertion's issuer (one `Query`), the link and
/// its user (`GetItem` each, as a sign-in through the IdP reads them; with one IdP of the
/// issuer the link is read once), then one transaction: the assertion's `jti` spent (its
/// condition decides it), the token and `token.id_jag_redeemed`.
const REDEEM: usize = 4 + RATE_LIMIT;
/// The client's counter (1), and the transaction's four items under 1 KB (2 each): the
/// assertion's `jti`, the token's `jti`, the event's two items.
const REDEEM_UNITS: f64 = RATE_LIMIT_UNITS + 8.0;

pub async fn id_jag_issue(c: Counted) {
    let Counted { proxy, app, .. } = c;
    let Some(peer) =
        TestApp::spawn_with(Backend::Sqlite, fetching_from(&app, AppOptions::default())).await
    else {
        return;
    };
    let p = Pair::between(app, peer).await;
    let id_token = p.id_token().await;
    let (status, body) = p.exchange(&id_token, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ((status, body), calls) =
        calls_through(&proxy, "id-jag issue", p.exchange(&id_token, &[])).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(&calls, ISSUE, "id-jag issue");
    assert_write_units(&calls, ISSUE_UNITS, "id-jag issue");
    assert_eq!(calls.count("GetItem"), 1, "the session");
    assert_eq!(
        calls.count("PutItem") + calls.count("TransactWriteItems"),
        1,
        "the audit event alone"
    );
}

/// The app's authorization server behind the proxy, the IdP on SQLite, and a first assertion
/// redeemed: the user linked, the IdP's documents and keys fetched.
async fn redeeming_pair(c: Counted) -> Option<(Pair, crate::support::ddb_proxy::DdbProxy)> {
    let peer = TestApp::spawn(Backend::Sqlite).await?;
    let options = fetching_from(&peer, AppOptions::default());
    let Counted { proxy, app, .. } = c.with_options(options).await;
    let p = Pair::between(peer, app).await;
    let first = p.assertion().await;
    let (status, body) = p.redeem(&first, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    Some((p, proxy))
}

pub async fn id_jag_redeem(c: Counted) {
    let Some((p, proxy)) = redeeming_pair(c).await else {
        return;
    };
    let second = p.assertion().await;
    let ((status, body), calls) =
        calls_through(&proxy, "id-jag redeem", p.redeem(&second, &[])).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_within(&calls, REDEEM, "id-jag redeem");
    assert_write_units(&calls, REDEEM_UNITS, "id-jag redeem");
    assert_eq!(calls.count("Query"), 1, "the issuer's IdPs");
    assert_eq!(
        calls.count("TransactWriteItems"),
        1,
        "the assertion's jti, the token and its event"
    );
    assert_eq!(
        calls.count("PutItem"),
        0,
        "the jti is spent in the transaction"
    );
}

/// An agent never loses a redemption to our failure. The transaction spending the assertion's
/// `jti` loses its answer once: the SDK's retry (the same request token) commits it, 200. It
/// fails every attempt: 503, nothing spent, and the same assertion's retry succeeds, once.
pub async fn id_jag_redeem_after_a_failed_write(c: Counted) {
    let Some((p, proxy)) = redeeming_pair(c).await else {
        return;
    };
    let spending = || {
        Fault::DropResponse
            .only_for("TransactWriteItems")
            .touching("JTI#")
    };
    proxy.inject(spending().times(1));
    let (status, body) = p.redeem(&p.assertion().await, &[]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a lost answer, retried by the SDK: {body}"
    );

    let assertion = p.assertion().await;
    proxy.inject(
        Fault::InternalServerError
            .only_for("TransactWriteItems")
            .touching("JTI#"),
    );
    let (status, body) = p.redeem(&assertion, &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    proxy.clear_fault();
    let (status, body) = p.redeem(&assertion, &[]).await;
    assert_eq!(status, StatusCode::OK, "the retry after a 503: {body}");
    assert_token_error(&p.redeem(&assertion, &[]).await, 400, "invalid_grant", 168);
}
