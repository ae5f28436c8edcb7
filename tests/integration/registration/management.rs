//! The 201 body, and RFC 7592 management with the registration access token: GET, PUT, DELETE;
//! a wrong token is 401 and changes nothing; only hashes of the credentials are stored.

use super::*;

crate::on_both_stores!(with crate::registration::open();
    a_confidential_registration_answers_201_with_its_credentials_once,
    management_needs_the_registration_access_token,
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

async fn management_needs_the_registration_access_token(app: TestApp) {
    let (_, answer) = register(&app, &metadata(json!({"client_name": "Before"})), None).await;
    let uri = answer["registration_client_uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let token = answer["registration_access_token"]
        .as_str()
        .unwrap()
        .to_owned();

    let read = |bearer: Option<String>| {
        let mut request = app.http.get(&uri);
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        async move { json_of(request.send().await.unwrap()).await }
    };
    let (status, current) = read(Some(token.clone())).await;
    assert_eq!(status, StatusCode::OK, "{current}");
    assert_eq!(current["client_name"], "Before");
    assert!(current.get("client_secret").is_none(), "{current}");
    assert!(
        current.get("registration_access_token").is_none(),
        "{current}"
    );
    assert_eq!(read(None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(read(Some("wrong".into())).await.0, StatusCode::UNAUTHORIZED);

    // A wrong token changes nothing.
    let update = metadata(json!({"client_name": "After"}));
    let (status, _) = json_of(
        app.http
            .put(&uri)
            .bearer_auth("wrong")
            .json(&update)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(read(Some(token.clone())).await.1["client_name"], "Before");
    let response = app
        .http
        .delete(&uri)
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(read(Some(token.clone())).await.0, StatusCode::OK);

    // PUT replaces, with the same checks as registration.
    let (status, replaced) = json_of(
        app.http
            .put(&uri)
            .bearer_auth(&token)
            .json(&update)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["client_name"], "After");
    let bad = json!({"redirect_uris": ["http://agent.example/cb"]});
    let (status, refused) = json_of(
        app.http
            .put(&uri)
            .bearer_auth(&token)
            .json(&bad)
            .send()
            .await
            .unwrap(),
    )
    .await;
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
    assert_eq!(read(Some(token.clone())).await.0, StatusCode::UNAUTHORIZED);
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
