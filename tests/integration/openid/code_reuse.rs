//! A second redemption of a code revokes the family the first one created: within the code's
//! lifetime or up to a day later, and whichever of two concurrent redemptions won.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use reqwest::StatusCode;

use super::*;
use crate::authorize::flow::approved_code;

crate::on_both_stores!(
    a_code_reused_hours_later_still_revokes_its_family,
    concurrent_redemptions_leave_no_family_alive,
);

async fn a_code_reused_hours_later_still_revokes_its_family(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let code = approved_code(&app, &client).await;
    let (status, first) = exchange(&app, &client, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    app.clock.advance(23 * 3600);
    assert_token_error(
        &exchange(&app, &client, &code, &[]).await,
        400,
        "invalid_request",
        103,
    );
    assert_token_error(
        &refresh(&app, &client, &first).await,
        400,
        "invalid_grant",
        108,
    );
}

async fn concurrent_redemptions_leave_no_family_alive(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "relying party").await;
    let code = approved_code(&app, &client).await;
    let attempts = (0..6).map(|_| exchange(&app, &client, &code, &[]));
    let answers = futures::future::join_all(attempts).await;
    let issued: Vec<_> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .collect();
    assert_eq!(issued.len(), 1, "one code, one redemption: {answers:?}");
    for (_, tokens) in issued {
        assert_token_error(
            &refresh(&app, &client, tokens).await,
            400,
            "invalid_grant",
            108,
        );
    }
}
