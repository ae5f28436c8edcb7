//! The events of token families and sign-ins, each after the flow that causes it.

use crate::support::app::{json_of, TestApp, TestClient};
use crate::support::logs::{assert_no_secret_logged, captured_lines_with};
use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin;
use token_domain::audit::rfc3339;
use token_domain::clock::Clock;
use token_domain::FamilyId;
use uuid::Uuid;

use super::{
    client_subject, events_of, family_of, family_subject, json, names, principal_subject,
    USER_AGENT,
};
use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN, PASSWORD, VERIFIER};
use crate::openid::{oidc_client, password_tokens};

crate::on_both_stores!(
    a_family_is_started_refreshed_and_revoked_on_reuse,
    each_revocation_says_why,
    a_code_redeemed_twice_revokes_its_family_as_code_replay,
    the_failure_that_fills_the_window_locks_the_login,
    no_secret_reaches_an_event_or_the_audit_log,
);

/// A password grant of `login` sent with a correlation id and a user agent of the test's own.
async fn signed_in(app: &TestApp, client: &TestClient, login: &str, correlation_id: &str) -> Value {
    let response = app
        .http
        .post(app.url("/v0/token"))
        .header("x-correlation-id", correlation_id)
        .header("user-agent", USER_AGENT)
        .form(&[
            ("grant_type", "password"),
            ("client_id", client.id.as_str()),
            ("client_secret", client.secret.as_str()),
            ("username", login),
            ("password", PASSWORD),
            ("scope", "openid read"),
        ])
        .send()
        .await
        .unwrap();
    let (status, tokens) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

fn text<'a>(tokens: &'a Value, name: &str) -> &'a str {
    tokens[name].as_str().unwrap()
}

async fn a_family_is_started_refreshed_and_revoked_on_reuse(app: TestApp) {
    let client = app.create_client("read").await;
    let login = format!("audit-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, PASSWORD).await;
    let correlation_id = format!("audit-{}", Uuid::new_v4());
    let tokens = signed_in(&app, &client, &login, &correlation_id).await;
    let family_id = family_of(&app, &tokens).await;

    let events = events_of(&app, family_subject(&family_id)).await;
    assert_eq!(names(&events), ["family.started"]);
    let started = json(&events[0]);
    assert_eq!(started["event"], "family.started");
    assert_eq!(started["grant"], "password");
    assert_eq!(started["client_id"], client.id);
    assert_eq!(started["principal_type"], "user");
    assert_eq!(started["principal_id"], user.id.to_string());
    assert_eq!(started["family_id"], family_id);
    assert_eq!(started["time"], rfc3339::format(app.clock.now()));
    assert_eq!(started["source_address"], "127.0.0.1");
    assert_eq!(started["user_agent"], USER_AGENT);
    assert_eq!(started["correlation_id"], correlation_id);
    // Filed under its client and its principal as well.
    for subject in [client_subject(&client.id), principal_subject(user.id)] {
        assert!(
            events_of(&app, subject).await.contains(&events[0]),
            "{subject:?}"
        );
    }
    // And written to the `audit` log target, with the request's correlation id.
    let logged: Vec<String> = captured_lines_with(&correlation_id)
        .into_iter()
        .filter(|line| line.contains("\"target\":\"audit\""))
        .collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].contains("family.started"), "{}", logged[0]);

    app.clock.advance(1);
    let (status, rotated) = app.refresh(&client, text(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let events = events_of(&app, family_subject(&family_id)).await;
    assert_eq!(names(&events), ["family.refreshed", "family.started"]);
    let refreshed = json(&events[0]);
    assert_eq!(refreshed["generation"], 1);
    assert_eq!(refreshed["principal_id"], user.id.to_string());
    assert_eq!(refreshed["client_id"], client.id);
    // Listed for its client and principal too (on DynamoDB through the family: stored there).
    for subject in [client_subject(&client.id), principal_subject(user.id)] {
        let mut of_subject = events_of(&app, subject).await;
        of_subject.retain(|e| e.family_id == events[0].family_id);
        assert_eq!(of_subject, events, "{subject:?}");
    }

    // The first token again, after the retry window: reuse, and the family revoked for it.
    app.clock
        .advance(app.services.policy.refresh_grace_seconds + 1);
    let (status, body) = app.refresh(&client, text(&tokens, "refresh_token")).await;
    assert_ne!(status, StatusCode::OK, "{body}");
    let events = events_of(&app, family_subject(&family_id)).await;
    let mut newest: Vec<&str> = names(&events[..2]);
    newest.sort_unstable();
    assert_eq!(newest, ["family.revoked", "refresh.reuse_detected"]);
    let revoked = events[..2]
        .iter()
        .find(|event| event.kind.name() == "family.revoked")
        .unwrap();
    assert_eq!(json(revoked)["reason"], "reuse_detected");
    assert_eq!(names(&events[2..]), ["family.refreshed", "family.started"]);

    // Once more: the family is revoked already, and is not revoked twice.
    app.clock.advance(1);
    app.refresh(&client, text(&tokens, "refresh_token")).await;
    let again = events_of(&app, family_subject(&family_id)).await;
    assert_eq!(again, events, "nothing more to record");
}

/// The `reason` of the newest event of `family_id`, which must be its revocation.
async fn revoked_because(app: &TestApp, family_id: &str) -> String {
    let events = events_of(app, family_subject(family_id)).await;
    let revocations: Vec<Value> = events
        .iter()
        .filter(|event| event.kind.name() == "family.revoked")
        .map(json)
        .collect();
    assert_eq!(revocations.len(), 1, "one revocation: {events:?}");
    assert_eq!(events[0].kind.name(), "family.revoked", "{events:?}");
    revocations[0]["reason"].as_str().unwrap().to_owned()
}

async fn each_revocation_says_why(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = oidc_client(&app, "audited party").await;

    // RFC 7009 revocation of a refresh token.
    let revoked = password_tokens(&app, &client, "openid read").await;
    let response = app
        .post_form(
            "/oauth2/v0/revoke",
            &[
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("token", text(&revoked, "refresh_token")),
            ],
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let at_revocation = family_of(&app, &revoked).await;
    assert_eq!(
        revoked_because(&app, &at_revocation).await,
        "revocation_endpoint"
    );

    // The connections endpoint: every live family of the user with the client.
    app.clock.advance(1);
    let first = password_tokens(&app, &client, "openid read").await;
    let second = password_tokens(&app, &client, "openid read").await;
    let response = app
        .http
        .delete(app.url("/app-mgmt/v0/connections"))
        .bearer_auth(text(&first, "access_token"))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    for tokens in [&first, &second] {
        let id = family_of(&app, tokens).await;
        assert_eq!(revoked_because(&app, &id).await, "connections_endpoint");
    }
    // The family revoked before got no second revocation (`revoked_because` counts one).
    assert_eq!(
        revoked_because(&app, &at_revocation).await,
        "revocation_endpoint"
    );

    // RP-initiated logout.
    app.clock.advance(1);
    let signed_out = password_tokens(&app, &client, "openid read").await;
    let response = app
        .http
        .get(app.url("/oauth2/v0/logout"))
        .query(&[("id_token_hint", text(&signed_out, "id_token"))])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = family_of(&app, &signed_out).await;
    assert_eq!(revoked_because(&app, &id).await, "logout");

    // tokenctl tokens revoke-family, twice.
    app.clock.advance(1);
    let by_admin = password_tokens(&app, &client, "openid read").await;
    let id = family_of(&app, &by_admin).await;
    let family_id = FamilyId::parse(&id).unwrap();
    admin::revoke_family(app.ctx(), &family_id).await.unwrap();
    admin::revoke_family(app.ctx(), &family_id).await.unwrap();
    assert_eq!(revoked_because(&app, &id).await, "admin");
    let events = events_of(&app, family_subject(&id)).await;
    assert_eq!(json(&events[0])["principal_type"], "user");
    assert_eq!(json(&events[0])["client_id"], client.id);
}

async fn a_code_redeemed_twice_revokes_its_family_as_code_replay(app: TestApp) {
    app.create_user(LOGIN, PASSWORD).await;
    let client = code_client(&app).await;
    let code = approved_code(&app, &client).await;
    let (status, tokens) = exchange(&app, &client, &code, &[("code_verifier", VERIFIER)]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let id = family_of(&app, &tokens).await;
    let started = events_of(&app, family_subject(&id)).await;
    assert_eq!(json(&started[0])["grant"], "authorization_code");

    app.clock.advance(1);
    let (status, body) = exchange(&app, &client, &code, &[("code_verifier", VERIFIER)]).await;
    assert_ne!(status, StatusCode::OK, "{body}");
    assert_eq!(revoked_because(&app, &id).await, "code_replay");
}

async fn the_failure_that_fills_the_window_locks_the_login(app: TestApp) {
    let client = app.create_client("read").await;
    let login = format!("locked-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, PASSWORD).await;
    let threshold = app.services.policy.lockout_threshold;
    for attempt in 1..=threshold {
        let (status, _) = app
            .password_grant(&client, &login, "not the password", &[])
            .await;
        assert_ne!(status, StatusCode::OK);
        let locked = events_of(&app, principal_subject(user.id))
            .await
            .iter()
            .filter(|event| event.kind.name() == "login.locked")
            .count();
        assert_eq!(
            locked,
            usize::from(attempt == threshold),
            "after attempt {attempt} of {threshold}"
        );
    }
    let events = events_of(&app, principal_subject(user.id)).await;
    let locked = json(&events[0]);
    assert_eq!(locked["event"], "login.locked");
    assert_eq!(locked["principal_type"], "user");
    assert_eq!(locked["source_address"], "127.0.0.1");
    // `tokenctl audit --client` finds it too: the app the guesses came through.
    assert_eq!(locked["client_id"], client.id.as_str(), "{locked}");
    let by_client = events_of(&app, client_subject(&client.id)).await;
    assert!(
        names(&by_client).contains(&"login.locked"),
        "{:?}",
        names(&by_client)
    );
    assert!(
        !locked.to_string().contains(&login),
        "the login itself is never recorded: {locked}"
    );
}

/// A whole flow's events and its audit log lines hold no client secret, password or token.
async fn no_secret_reaches_an_event_or_the_audit_log(app: TestApp) {
    let client = app.create_client("read").await;
    let login = format!("secretive-{}", Uuid::new_v4().simple());
    let user = app.create_user(&login, PASSWORD).await;
    let correlation_id = format!("audit-{}", Uuid::new_v4());
    let first = signed_in(&app, &client, &login, &correlation_id).await;
    app.clock.advance(1);
    let (_, second) = app.refresh(&client, text(&first, "refresh_token")).await;
    app.clock
        .advance(app.services.policy.refresh_grace_seconds + 1);
    app.refresh(&client, text(&first, "refresh_token")).await;
    for _ in 0..app.services.policy.lockout_threshold {
        app.password_grant(&client, &login, "a wrong password", &[])
            .await;
    }

    let mut stored = String::new();
    for subject in [client_subject(&client.id), principal_subject(user.id)] {
        for event in events_of(&app, subject).await {
            stored.push_str(&event.to_json());
        }
    }
    assert!(stored.contains("family.started") && stored.contains("login.locked"));
    let secrets = [
        client.secret.as_str(),
        PASSWORD,
        "a wrong password",
        text(&first, "access_token"),
        text(&first, "refresh_token"),
        text(&first, "id_token"),
        text(&second, "access_token"),
        text(&second, "refresh_token"),
    ];
    for (i, secret) in secrets.iter().enumerate() {
        assert!(!stored.contains(secret), "secret #{i} is in an audit event");
    }
    assert_no_secret_logged(&secrets);
}
