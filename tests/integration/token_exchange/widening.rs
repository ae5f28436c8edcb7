//! Nothing widens: the exchanged token's scope is within both the subject token's and the
//! exchanging client's (asking for more is 54; asking for nothing gets what both allow), and
//! its `aud` is the subject's unless a resource is named, which must be one the subject's
//! family was granted or one of the client's own (160 otherwise).

use super::*;

crate::on_both_stores!(
    the_scope_stays_within_the_subjects_and_the_clients,
    the_audience_is_the_subjects_unless_a_granted_one_is_named,
);

const REPORTS: &str = "https://reports.example.com";
const ELSEWHERE: &str = "https://elsewhere.example.com";

fn scope_set(body: &Value) -> std::collections::BTreeSet<String> {
    body["scope"]
        .as_str()
        .unwrap_or_else(|| panic!("no scope: {body}"))
        .split(' ')
        .map(str::to_owned)
        .collect()
}

async fn the_scope_stays_within_the_subjects_and_the_clients(app: TestApp) {
    app.create_user_with(LOGIN, PASSWORD, |user| {
        user.email = Some("ann@example.com".into());
    })
    .await;
    let agent = app
        .create_client_with(NewClient::named(
            "agent",
            Scopes::parse("email read write").unwrap(),
        ))
        .await;
    let api = app
        .create_client_with(NewClient {
            resources: vec![Resource::parse(API).unwrap()],
            ..NewClient::named("api", Scopes::parse("read").unwrap())
        })
        .await;
    let tokens = user_token(
        &app,
        &agent,
        &[("scope", "email openid read write"), ("resource", API)],
    )
    .await;
    let subject = tokens["access_token"].as_str().unwrap();

    // More than the exchanging client may hold, though the subject has it: 54, as at every
    // grant that asks beyond the client's scopes.
    for beyond in ["email openid read write", "write", "email"] {
        let refused = exchange(&app, &api, subject, &[("scope", beyond)]).await;
        assert_token_error(&refused, 400, "invalid_scope", 54);
    }
    // Within both: granted.
    let (status, body) = exchange(&app, &api, subject, &[("scope", "read")]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["scope"], "read");

    // No `scope`: the subject's, narrowed to what the client may hold (and `openid`, which
    // every client that signs users in may ask for).
    let (status, body) = exchange(&app, &api, subject, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let expected: std::collections::BTreeSet<String> = ["openid", "read"].map(str::to_owned).into();
    assert_eq!(scope_set(&body), expected, "{body}");
    let exchanged = body["access_token"].as_str().unwrap();
    let claims = claims(&app, exchanged).await;
    assert_eq!(claims["aud"], API, "the subject's audience: {claims}");
    // So the user's mail is not read at userinfo with it: it is the API's token, and carries
    // no `email`.
    assert_eq!(
        userinfo_status(&app, exchanged).await,
        StatusCode::UNAUTHORIZED
    );
}

async fn the_audience_is_the_subjects_unless_a_granted_one_is_named(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let agent = client_with(&app, "agent", &[]).await;
    let api = client_with(&app, "api", &[API, REPORTS]).await;
    // The family is granted API and FILES; the subject token, refreshed, names API alone.
    let tokens = user_token(&app, &agent, &[("resource", API), ("resource", FILES)]).await;
    let (status, refreshed) = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &agent.id),
            ("client_secret", &agent.secret),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("resource", API),
        ])
        .await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    let subject = refreshed["access_token"].as_str().unwrap();
    assert_eq!(claims(&app, subject).await["aud"], API);

    // Without `resource` or `audience`: the subject's own `aud`, not this deployment.
    for client in [&agent, &api] {
        let (status, body) = exchange(&app, client, subject, &[]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(claims_aud(&app, &body).await, API, "{body}");
    }
    // One the family was granted: allowed, as `resource` or `audience`.
    for name in ["resource", "audience"] {
        let (status, body) = exchange(&app, &agent, subject, &[(name, FILES)]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(claims_aud(&app, &body).await, FILES);
    }
    // One of the exchanging client's own resources: allowed.
    let (status, body) = exchange(&app, &api, subject, &[("resource", REPORTS)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(claims_aud(&app, &body).await, REPORTS);
    // Neither: 160, alone or beside an allowed one.
    let refused = exchange(&app, &agent, subject, &[("resource", ELSEWHERE)]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let refused = exchange(&app, &agent, subject, &[("audience", REPORTS)]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let refused = exchange(
        &app,
        &api,
        subject,
        &[("resource", API), ("resource", ELSEWHERE)],
    )
    .await;
    assert_token_error(&refused, 400, "invalid_target", 160);

    // A client's own application token (no family): its `aud` by default, and no resource it
    // was never granted.
    let own = app.app_token(&agent).await;
    let (status, body) = exchange(&app, &agent, &own, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        claims_aud(&app, &body).await,
        claims(&app, &own).await["aud"]
    );
    let refused = exchange(&app, &agent, &own, &[("resource", FILES)]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
}
