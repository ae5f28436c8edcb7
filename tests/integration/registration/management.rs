//! The 201 body, and RFC 7592 management with the registration access token: GET, PUT, DELETE;
//! a wrong token is 401 and changes nothing; GET and PUT answer with a new token and the old one
//! is 401 from then on, also for two concurrent reads; only hashes of the credentials are stored.

use super::*;

crate::on_both_stores!(with crate::registration::open();
    a_confidential_registration_answers_201_with_its_credentials_once,
    management_needs_the_registration_access_token,
    reads_and_replaces_rotate_the_registration_access_token,
    of_two_concurrent_reads_with_one_token_one_gets_a_token,
);

async fn a_confidential_registration_answers_201_with_its_credentials_once(app: TestApp) {
    let body = metadata(json!({
        "client_name": "Research agent",
        "client_uri": "https://agent.example",
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "client_secret_post",
        "scope": "openid profile",
        "unknown_member": "ignored",
    }));
    let (status, answer) = register(&app, &body, None).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let client_id = answer["client_id"].as_str().unwrap();
    assert!(answer["client_id_issued_at"].as_i64().unwrap() > 0);
    assert_eq!(answer["client_secret_expires_at"], 0);
    assert_eq!(answer["client_name"], "Research agent");
    assert_eq!(answer["client_uri"], "https://agent.example");
    assert_eq!(
        answer["redirect_uris"],
        json!(["https://agent.example/callback"])
    );
    assert_eq!(
        answer["grant_types"],
        json!(["refresh_token", "authorization_code"])
    );
    assert_eq!(answer["response_types"], json!(["code"]));
    assert_eq!(answer["token_endpoint_auth_method"], "client_secret_post");
    assert_eq!(answer["scope"], "openid profile");
    assert_eq!(
        answer["registration_client_uri"],
        app.url(&format!("{REGISTER}/{client_id}"))
    );
    let secret = answer["client_secret"].as_str().unwrap();
    let access_token = answer["registration_access_token"].as_str().unwrap();
    assert!(
        !app.data.contains(secret).await,
        "the secret is stored as a hash"
    );
    assert!(
        !app.data.contains(access_token).await,
        "the registration access token is stored as a hash"
    );
    let stored = app
        .store
        .clients()
        .get_client(&client_id.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.first_party);
    assert!(stored.registration.is_some());
}

/// `GET` (or `PUT`) of `uri` with `bearer`: the status and the body.
async fn call(
    app: &TestApp,
    method: reqwest::Method,
    uri: &str,
    bearer: Option<&str>,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    let mut request = app.http.request(method, uri);
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    json_of(request.send().await.unwrap()).await
}

/// The registration access token of a management answer: present, and new.
fn rotated(answer: &Value, before: &str) -> String {
    let token = answer["registration_access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("the answer carries a token: {answer}"));
    assert_ne!(token, before, "a new token");
    token.to_owned()
}

async fn management_needs_the_registration_access_token(app: TestApp) {
    let (_, answer) = register(&app, &metadata(json!({"client_name": "Before"})), None).await;
    let uri = answer["registration_client_uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut token = answer["registration_access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let get = reqwest::Method::GET;

    let (status, current) = call(&app, get.clone(), &uri, Some(&token), None).await;
    assert_eq!(status, StatusCode::OK, "{current}");
    assert_eq!(current["client_name"], "Before");
    assert!(current.get("client_secret").is_none(), "{current}");
    assert_eq!(current["registration_client_uri"], uri.as_str());
    token = rotated(&current, &token);
    assert_eq!(
        call(&app, get.clone(), &uri, None, None).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        call(&app, get.clone(), &uri, Some("wrong"), None).await.0,
        StatusCode::UNAUTHORIZED
    );

    // A wrong token changes nothing.
    let update = metadata(json!({"client_name": "After"}));
    let (status, _) = call(
        &app,
        reqwest::Method::PUT,
        &uri,
        Some("wrong"),
        Some(&update),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (_, current) = call(&app, get.clone(), &uri, Some(&token), None).await;
    assert_eq!(current["client_name"], "Before");
    token = rotated(&current, &token);
    let response = app
        .http
        .delete(&uri)
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (status, current) = call(&app, get.clone(), &uri, Some(&token), None).await;
    assert_eq!(status, StatusCode::OK);
    token = rotated(&current, &token);

    // PUT replaces, with the same checks as registration.
    let (status, replaced) = call(
        &app,
        reqwest::Method::PUT,
        &uri,
        Some(&token),
        Some(&update),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["client_name"], "After");
    token = rotated(&replaced, &token);
    let bad = json!({"redirect_uris": ["http://agent.example/cb"]});
    let (status, refused) = call(&app, reqwest::Method::PUT, &uri, Some(&token), Some(&bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"], "invalid_redirect_uri");

    // DELETE disables the client; its registration is gone for the token too.
    let response = app
        .http
        .delete(&uri)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        call(&app, get, &uri, Some(&token), None).await.0,
        StatusCode::UNAUTHORIZED
    );
    let client_id = replaced["client_id"].as_str().unwrap().parse().unwrap();
    let stored = app
        .store
        .clients()
        .get_client(&client_id)
        .await
        .unwrap()
        .unwrap();
    assert!(!stored.enabled);
}

/// RFC 7592 3: each answer with the metadata carries the URI and a token; only the newest
/// token works, and a spent one is 401 and changes nothing.
async fn reads_and_replaces_rotate_the_registration_access_token(app: TestApp) {
    let (_, answer) = register(&app, &metadata(json!({"client_name": "Rotating"})), None).await;
    let uri = answer["registration_client_uri"].as_str().unwrap();
    let first = answer["registration_access_token"].as_str().unwrap();
    let get = reqwest::Method::GET;

    let (status, read) = call(&app, get.clone(), uri, Some(first), None).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["registration_client_uri"], uri);
    let second = rotated(&read, first);
    assert!(
        !app.data.contains(&second).await,
        "the new token is stored as a hash"
    );
    let (status, refused) = call(&app, get.clone(), uri, Some(first), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the old token: {refused}");
    assert_eq!(refused["error"], "invalid_token");

    let update = metadata(json!({"client_name": "Renamed"}));
    let (status, _) = call(&app, reqwest::Method::PUT, uri, Some(first), Some(&update)).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a spent token replaces nothing"
    );
    let (status, replaced) = call(
        &app,
        reqwest::Method::PUT,
        uri,
        Some(&second),
        Some(&update),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["registration_client_uri"], uri);
    let third = rotated(&replaced, &second);
    assert_eq!(
        call(&app, get.clone(), uri, Some(&second), None).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, read) = call(&app, get, uri, Some(&third), None).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["client_name"], "Renamed");
    rotated(&read, &third);
}

/// The rotation is a conditional write: of two reads racing with one token, exactly one gets
/// the metadata and a new token, the other 401, and the new token works.
async fn of_two_concurrent_reads_with_one_token_one_gets_a_token(app: TestApp) {
    let (_, answer) = register(&app, &metadata(json!({})), None).await;
    let uri = answer["registration_client_uri"].as_str().unwrap();
    let token = answer["registration_access_token"].as_str().unwrap();
    let get = reqwest::Method::GET;
    let (one, other) = tokio::join!(
        call(&app, get.clone(), uri, Some(token), None),
        call(&app, get.clone(), uri, Some(token), None),
    );
    let mut statuses = [one.0, other.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::UNAUTHORIZED],
        "{one:?} {other:?}"
    );
    let winner = if one.0 == StatusCode::OK {
        &one
    } else {
        &other
    };
    let new_token = rotated(&winner.1, token);
    assert_eq!(
        call(&app, get.clone(), uri, Some(&new_token), None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        call(&app, get, uri, Some(token), None).await.0,
        StatusCode::UNAUTHORIZED
    );
}
