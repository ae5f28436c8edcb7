//! Codes and one-time passwords are redeemed after their family is written (so that a 503 in
//! between leaves them open for the retry): concurrent redemptions therefore each write a
//! family, exactly one is answered, and the code keeps the winner's family (not a loser's) for
//! reuse detection.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use futures::future::join_all;
use reqwest::StatusCode;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;

use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN, PASSWORD};
use crate::refresh_rotation::field;

crate::on_both_stores!(one_of_eight_concurrent_code_redemptions_wins);

async fn one_of_eight_concurrent_code_redemptions_wins(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let code = approved_code(&app, &client).await;
    let answers = join_all((0..8).map(|_| exchange(&app, &client, &code, &[]))).await;
    let (won, lost): (Vec<_>, Vec<_>) = answers
        .into_iter()
        .partition(|(status, _)| *status == StatusCode::OK);
    assert_eq!(won.len(), 1, "one winner: {won:?} {lost:?}");
    for answer in &lost {
        assert_token_error(answer, 400, "invalid_request", 103);
    }

    let winner = field(&won[0].1, "refresh_token");
    let now = app.clock.now();
    let winners_family = app.stored_refresh_token(winner).await.family_id;
    let stored = app
        .store
        .authorization_codes()
        .get_authorization_code(&TokenHash::of(&code), now)
        .await;
    let stored = stored.unwrap().expect("the code is kept after redemption");
    // A loser that read the code after it was redeemed was a reuse and revoked this family, as
    // any second use does (RFC 6749 §4.1.2): the link itself is what every run must keep.
    assert_eq!(
        stored.family_id,
        Some(winners_family),
        "the winner's family"
    );
}
