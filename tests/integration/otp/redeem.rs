//! Redeeming a password with the `otp` grant: the user family it yields once, what the grant
//! refuses, wrong passwords, the facts that must match, and the user's status and home.

use crate::support::app::TestApp;
use crate::support::assertions::assert_token_error;
use token_domain::{Geolocation, UserStatus};

use super::*;
use crate::authorize::flow::assert_id_token;

crate::on_both_stores!(
    the_password_yields_a_user_family_once,
    grant_refusals_56_57_58_80_81_and_83,
    wrong_passwords_85_and_the_fifth_closes_it,
    facts_must_match_84_and_expiry_83,
    company_and_link_facts_must_match_84,
    unknown_address_is_answered_alike_then_55,
    user_status_and_home_decide_after_the_password,
    a_company_that_requires_a_second_factor_refuses_it_180,
    a_company_that_signs_in_through_its_idps_refuses_it_181,
    a_users_own_second_factor_refuses_it_180,
    another_clients_requests_and_guesses_leave_this_clients_password_alone,
    openid_needs_no_registration_on_the_otp_grant,
    parallel_redemptions_leave_one_family_and_revoke_the_others_as_otp_replay,
);

/// Ten redemptions of one password at once: one answers tokens; every other family a
/// redemption started before losing the race is revoked, audited as `otp_replay`.
async fn parallel_redemptions_leave_one_family_and_revoke_the_others_as_otp_replay(base: TestApp) {
    use token_domain::audit::{AuditKind, AuditSubject, RevocationReason};
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[]).await;
    let form = [
        ("otp", password.as_str()),
        ("channel_type", "email"),
        ("channel_handle", ADDRESS),
    ];
    let answers = futures::future::join_all((0..10).map(|_| otp_grant(&app, &client, &form))).await;
    let winners = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(winners, 1, "{answers:?}");
    let events = crate::audit::events_of(&app, AuditSubject::Principal(user.id)).await;
    let started = events
        .iter()
        .filter(|e| matches!(e.kind, AuditKind::FamilyStarted { .. }))
        .count();
    let replays = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                AuditKind::FamilyRevoked {
                    reason: RevocationReason::OtpReplay
                }
            )
        })
        .count();
    assert!(started >= 1);
    assert_eq!(
        replays,
        started - 1,
        "every losing family revoked: {events:?}"
    );
}

/// OpenID Connect's `openid` scope, never registered with the client, is granted with the OTP
/// grant like with the code and password grants, and echoed.
async fn openid_needs_no_registration_on_the_otp_grant(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read write").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[]).await;
    let form = [
        ("otp", password.as_str()),
        ("channel_type", "email"),
        ("channel_handle", ADDRESS),
        ("scope", "openid read"),
    ];
    let (status, body) = otp_grant(&app, &client, &form).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], "openid read");
    assert_id_token(&app, &body, &user.id.to_string(), &client, "user").await;
}

async fn the_password_yields_a_user_family_once(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read write").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let facts = [
        ("name", "Ann"),
        ("company", "ACME"),
        ("link", "https://app.example.com/x"),
    ];
    let password = mailed_password(&app, &server, &client, &facts).await;
    assert!(
        !app.data.contains(&password).await,
        "an open password is stored only as a hash"
    );
    assert!(
        app.data.contains("ann").await,
        "the scan sees what is stored in clear"
    );
    let text = server.received()[0].part("text/plain").unwrap();
    assert!(
        text.contains("https://app.example.com/x"),
        "the link is shown"
    );

    // The address in another case is the same address.
    let upper = ADDRESS.to_uppercase();
    let mut form = vec![
        ("otp", password.as_str()),
        ("channel_type", "email"),
        ("channel_handle", upper.as_str()),
    ];
    form.extend_from_slice(&facts);
    let (status, body) = otp_grant(&app, &client, &form).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["principal_type"], "user");
    assert_eq!(body["id"], user.id.to_string());
    assert!(body["refresh_token"].is_string(), "{body}");
    assert_eq!(body["scope"], "read write");
    let claims = assert_id_token(&app, &body, &user.id.to_string(), &client, "user").await;
    assert!(
        claims.get("nonce").is_none(),
        "no nonce was given: {claims}"
    );
    assert!(
        !app.data.contains(&password).await,
        "the password is never stored in clear, open or consumed"
    );

    let again = otp_grant(&app, &client, &form).await;
    assert_token_error(&again, 400, "invalid_request", 83);
}

async fn grant_refusals_56_57_58_80_81_and_83(base: TestApp) {
    let (app, _server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let refusals: [(&[(&str, &str)], u64); 6] = [
        (&CHANNEL, 56),
        (&[("otp", "123456"), ("channel_handle", ADDRESS)], 57),
        (&[("otp", "123456"), ("channel_type", "email")], 58),
        (
            &[
                ("otp", "123456"),
                ("channel_type", "sms"),
                ("channel_handle", ADDRESS),
            ],
            80,
        ),
        (
            &[
                ("otp", "123456"),
                ("channel_type", "email"),
                ("channel_handle", "x@"),
            ],
            81,
        ),
        (&[("otp", "123456"), CHANNEL[0], CHANNEL[1]], 83),
    ];
    for (form, code) in refusals {
        let answer = otp_grant(&app, &client, form).await;
        assert_token_error(&answer, 400, "invalid_request", code);
    }
}

async fn wrong_passwords_85_and_the_fifth_closes_it(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[]).await;
    let wrong = if password == "000000" {
        "000001"
    } else {
        "000000"
    };
    for _ in 0..5 {
        let answer = otp_grant(&app, &client, &[("otp", wrong), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 400, "invalid_request", 85);
    }
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_token_error(&answer, 400, "invalid_request", 83);
}

async fn facts_must_match_84_and_expiry_83(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[("name", "Ann")]).await;
    let base_form = [("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
    let answer = otp_grant(&app, &client, &base_form).await;
    assert_token_error(&answer, 400, "invalid_request", 84);
    let mut other = base_form.to_vec();
    other.push(("name", "Bob"));
    let answer = otp_grant(&app, &client, &other).await;
    assert_token_error(&answer, 400, "invalid_request", 84);

    // Another client cannot redeem it.
    let stranger = app.create_client("read").await;
    let mut right = base_form.to_vec();
    right.push(("name", "Ann"));
    let answer = otp_grant(&app, &stranger, &right).await;
    assert_token_error(&answer, 400, "invalid_request", 83);

    app.clock.advance(600);
    let answer = otp_grant(&app, &client, &right).await;
    assert_token_error(&answer, 400, "invalid_request", 83);
}

/// `company` and `link` are facts like `name`: each must be sent again, unchanged, with the
/// password; the password still works once they are.
async fn company_and_link_facts_must_match_84(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = client_with_links(&app, "read").await;
    user_with_email(&app, "ann", UserStatus::Active).await;
    let company = ("company", "ACME");
    let link = ("link", "https://app.example.com/x");
    let password = mailed_password(&app, &server, &client, &[company, link]).await;
    let with_facts = |facts: &[(&'static str, &'static str)]| {
        let mut form = vec![("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
        form.extend_from_slice(facts);
        form
    };
    for facts in [
        vec![link],
        vec![("company", "Other Corp"), link],
        vec![company],
        vec![company, ("link", "https://app.example.com/y")],
    ] {
        let answer = otp_grant(&app, &client, &with_facts(&facts)).await;
        assert_token_error(&answer, 400, "invalid_request", 84);
    }
    let (status, body) = otp_grant(&app, &client, &with_facts(&[company, link])).await;
    assert_eq!(status, 200, "the right facts: {body}");
}

async fn unknown_address_is_answered_alike_then_55(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    // No user has the address: the request answers exactly as for a user's address.
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_token_error(&answer, 400, "invalid_request", 55);
}

async fn user_status_and_home_decide_after_the_password(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let user = user_with_email(&app, "ann", UserStatus::Disabled).await;
    let elsewhere = Geolocation::parse("https://eu.api.example.com").unwrap();
    let expectations = [
        (UserStatus::Disabled, None, "invalid_grant", 10),
        (UserStatus::LogonDenied, None, "invalid_grant", 12),
        (
            UserStatus::Active,
            Some(elsewhere.clone()),
            "invalid_request",
            16,
        ),
    ];
    for (status, home, error, code) in expectations {
        let mut stored = app
            .store
            .principals()
            .get_user(&user.id)
            .await
            .unwrap()
            .unwrap();
        stored.status = status;
        if let Some(home) = home {
            stored.geolocation = home;
        }
        app.store.principals().put_user(&stored).await.unwrap();
        let password = mailed_password(&app, &server, &client, &[]).await;
        let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
        assert_token_error(&answer, 400, error, code);
        if code == 16 {
            assert_eq!(answer.1["geolocation"], elsewhere.as_str());
        }
    }
}

/// A one-time password alone is one factor: a user whose company requires a second one is
/// refused (403 `access_denied`, 180), the password used up all the same; optional, it works.
async fn a_company_that_requires_a_second_factor_refuses_it_180(base: TestApp) {
    use token_domain::MfaPolicy;
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let company = app.create_company("Acme").await;
    app.create_user_with("ann", "a password", |new| {
        new.email = Some(ADDRESS.to_owned());
        new.company_id = Some(company.id);
    })
    .await;
    let policy = |policy| token_core::admin::set_company_mfa(app.ctx(), &company.id, policy);
    policy(MfaPolicy::Required).await.unwrap();
    let password = mailed_password(&app, &server, &client, &[]).await;
    let form = [("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
    let answer = otp_grant(&app, &client, &form).await;
    assert_token_error(&answer, 403, "access_denied", 180);
    let again = otp_grant(&app, &client, &form).await;
    assert_eq!(again.1["code"], 83, "used up: {again:?}");
    policy(MfaPolicy::Optional).await.unwrap();
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(answer.0, 200, "{answer:?}");
}

/// A company that signs its users in through its identity providers refuses a one-time
/// password (403 `access_denied`, 181), used up all the same; a break-glass user gets tokens,
/// and so does everyone once the policy is optional.
async fn a_company_that_signs_in_through_its_idps_refuses_it_181(base: TestApp) {
    use token_domain::SsoPolicy;
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let company = app.create_company("Acme").await;
    let user = app
        .create_user_with("ann", "a password", |new| {
            new.email = Some(ADDRESS.to_owned());
            new.company_id = Some(company.id);
        })
        .await;
    let policy = |policy| token_core::admin::set_company_sso(app.ctx(), &company.id, policy);
    policy(SsoPolicy::Required).await.unwrap();
    let password = mailed_password(&app, &server, &client, &[]).await;
    let form = [("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
    let answer = otp_grant(&app, &client, &form).await;
    assert_token_error(&answer, 403, "access_denied", 181);
    let again = otp_grant(&app, &client, &form).await;
    assert_eq!(again.1["code"], 83, "used up: {again:?}");

    let local = |on| token_core::admin::set_user_local_sign_in(app.ctx(), &user.id, on);
    local(true).await.unwrap();
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(answer.0, 200, "a break-glass user: {answer:?}");
    local(false).await.unwrap();
    policy(SsoPolicy::Optional).await.unwrap();
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(answer.0, 200, "{answer:?}");
}

/// A factor the user enrolled is required of them as a company's policy would require one: a
/// one-time password alone is refused (180) while they have an authenticator app.
async fn a_users_own_second_factor_refuses_it_180(base: TestApp) {
    use token_domain::clock::Clock;
    let (app, server) = smtp_app(base).await;
    let client = app.create_client("read").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let factor = token_domain::TotpFactor {
        principal_id: user.id,
        sealed_secret: "sealed-secret-bytes".into(),
        last_used_step: 0,
        recovery_codes: Vec::new(),
        enrolled_at: app.clock.now(),
    };
    let factors = app.store.second_factors();
    assert!(factors.put_totp_factor(&factor).await.unwrap());
    let password = mailed_password(&app, &server, &client, &[]).await;
    let form = [("otp", password.as_str()), CHANNEL[0], CHANNEL[1]];
    let answer = otp_grant(&app, &client, &form).await;
    assert_token_error(&answer, 403, "access_denied", 180);
    assert!(factors.delete_totp_factor(&user.id).await.unwrap());
    let password = mailed_password(&app, &server, &client, &[]).await;
    let answer = otp_grant(&app, &client, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(answer.0, 200, "the app removed: {answer:?}");
    let claims = app
        .claims_of(answer.1["access_token"].as_str().unwrap())
        .await;
    assert_eq!(claims.amr, [token_domain::AuthMethod::Otp]);
}

async fn another_clients_requests_and_guesses_leave_this_clients_password_alone(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let ours = app.create_client("read").await;
    let theirs = app.create_client("read").await;
    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &ours, &[]).await;

    // The other client opens its five requests (newer than ours) and guesses wrong ten times.
    for _ in 0..5 {
        let their_password = mailed_password(&app, &server, &theirs, &[]).await;
        let wrong = if their_password == "000000" {
            "000001"
        } else {
            "000000"
        };
        for _ in 0..2 {
            let answer = otp_grant(&app, &theirs, &[("otp", wrong), CHANNEL[0], CHANNEL[1]]).await;
            assert_token_error(&answer, 400, "invalid_request", 85);
        }
    }
    let capped = request_otp(&app, &theirs, &CHANNEL).await;
    assert_token_error(&capped, 400, "invalid_request", 82);
    let blocked = otp_grant(&app, &theirs, &[("otp", "123456"), CHANNEL[0], CHANNEL[1]]).await;
    assert_token_error(&blocked, 429, "slow_down", 143);

    let (status, body) =
        otp_grant(&app, &ours, &[("otp", &password), CHANNEL[0], CHANNEL[1]]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], user.id.to_string());
    mailed_password(&app, &server, &ours, &[]).await;
}
