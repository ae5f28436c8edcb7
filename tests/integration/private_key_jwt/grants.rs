//! `private_key_jwt` at the grants the endpoint tests leave out: the code, one-time-password and
//! company grants; an assertion valid the full five minutes stays refused as a replay until its
//! `exp` (on both stores), and, on DynamoDB, the used `jti`'s item expires with the assertion.

use super::*;
use crate::authorize::flow::{query, Session, LOGIN, PASSWORD as PAGE_PASSWORD, REDIRECT_URI};
use crate::otp::{mailed_password, smtp_app, user_with_email, CHANNEL};
use token_domain::UserStatus;

crate::on_both_stores!(
    the_code_otp_and_company_grants_take_an_assertion,
    an_assertion_valid_five_minutes_stays_used_until_its_exp,
);

async fn grant(
    app: &TestApp,
    key: &ClientKey,
    client: &TestClient,
    form: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut fields: Vec<(&str, String)> = form.iter().map(|(k, v)| (*k, (*v).to_owned())).collect();
    fields.extend(assertion_fields(&key.sign(&claims(app, client))));
    post(app, "/oauth2/v0/token", &fields).await
}

async fn the_code_otp_and_company_grants_take_an_assertion(base: TestApp) {
    let (app, server) = smtp_app(base).await;
    let key = ClientKey::es256("grants");
    let mut new = NewClient::named("signing app", Scopes::parse("read").unwrap());
    new.grants = GrantType::ALL.into_iter().collect();
    new.redirect_uris = vec![REDIRECT_URI.to_owned()];
    new.jwks = Some(PublicJwkSet::parse(jwk_set(&[&key])).unwrap());
    let client = app.create_client_with(new).await;

    app.create_user(LOGIN, PAGE_PASSWORD).await;
    let redirect = Session::new(&app)
        .decide(&query(&client, &[]), "approve")
        .await;
    let code = [
        ("grant_type", "authorization_code"),
        ("code", redirect["code"].as_str()),
        ("redirect_uri", REDIRECT_URI),
    ];
    let (status, body) = grant(&app, &key, &client, &code).await;
    assert_eq!(status, StatusCode::OK, "code grant: {body}");
    assert_eq!(access_token_client(&body), client.id);

    let user = user_with_email(&app, "ann", UserStatus::Active).await;
    let password = mailed_password(&app, &server, &client, &[]).await;
    let otp = [
        ("grant_type", "otp"),
        ("otp", password.as_str()),
        CHANNEL[0],
        CHANNEL[1],
    ];
    let (status, body) = grant(&app, &key, &client, &otp).await;
    assert_eq!(status, StatusCode::OK, "otp grant: {body}");
    assert_eq!(body["id"], user.id.to_string());

    let company = app.create_company("Acme").await;
    let admin_user = app.create_company_admin("boss", PASSWORD, &company).await;
    app.enable_company_for(&company, &client).await;
    let auth_token = "auth-token-for-pkjwt-0123456789abcdef0123456789";
    app.put_auth_token(auth_token, &company, &client, &admin_user)
        .await;
    let company_id = company.id.to_string();
    let company_form = [
        ("grant_type", "password"),
        ("credtype", "authtoken"),
        ("username", company_id.as_str()),
        ("password", auth_token),
    ];
    let (status, body) = grant(&app, &key, &client, &company_form).await;
    assert_eq!(status, StatusCode::OK, "company grant: {body}");
    assert_eq!(body["principal_type"], "company");
}

async fn an_assertion_valid_five_minutes_stays_used_until_its_exp(app: TestApp) {
    let key = ClientKey::es256("k");
    let client = client_with_keys(&app, &[&key]).await;
    let now = app.clock.now();
    let long = with(claims(&app, &client), "exp", json!(now + 300));
    let assertion = key.sign(&long);
    let (status, body) = app_token(&app, &assertion).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.clock.advance(299);
    assert_token_error(
        &app_token(&app, &assertion).await,
        401,
        "invalid_client",
        63,
    );
    if let crate::support::stored_data::StoredData::Dynamo(store) = app.data.as_ref() {
        use token_store::dynamodb::sdk::types::AttributeValue;
        let used: Vec<_> = crate::support::stored_data::scan_table(store)
            .await
            .into_iter()
            .filter(|item| matches!(item.get("pk"), Some(AttributeValue::S(pk)) if pk.starts_with("JTI#")))
            .collect();
        assert_eq!(used.len(), 1, "{used:?}");
        assert_eq!(
            used[0]["expires_at"],
            AttributeValue::N((now + 300).to_string()),
            "kept until the assertion's exp, then deleted by the TTL"
        );
    }
    // On either store: the `jti` is kept used until the assertion's `exp`, and no longer.
    let used = ReplayKey::new(REPLAY_KIND, &client.id, jti(&long));
    let replays = app.store.replays();
    let before_exp = replays.first_use(&used, now + 600, now + 299).await;
    assert!(!before_exp.unwrap(), "used until its exp");
    let at_exp = replays.first_use(&used, now + 600, now + 300).await;
    assert!(at_exp.unwrap(), "and reusable from its exp");
    // Past its exp it is refused as expired, whatever the store still holds.
    app.clock.advance(2);
    assert_token_error(
        &app_token(&app, &assertion).await,
        401,
        "invalid_client",
        63,
    );
}
