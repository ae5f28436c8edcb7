//! `DYNAMIC_REGISTRATION`: off hides the endpoint and the metadata field; token needs an
//! initial access token; the per-address limit answers 429 as the other limits.

use super::*;
use token_core::flows::registration::create_initial_access_token;

mod off {
    use super::*;

    crate::on_both_stores!(off_is_404_and_not_advertised,);

    async fn off_is_404_and_not_advertised(app: TestApp) {
        let (status, _) = register(&app, &metadata(json!({})), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let answer = app
            .http
            .get(app.url(&format!("{REGISTER}/00000000-0000-4000-8000-000000000000")))
            .bearer_auth("anything")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND);
        let document = app
            .get_json("/.well-known/oauth-authorization-server")
            .await;
        assert!(
            document.get("registration_endpoint").is_none(),
            "{document}"
        );
    }
}

mod open_mode {
    use super::*;

    crate::on_both_stores!(with crate::registration::open(); open_is_advertised);

    async fn open_is_advertised(app: TestApp) {
        let document = app.get_json("/.well-known/openid-configuration").await;
        assert_eq!(
            document["registration_endpoint"],
            app.url(REGISTER),
            "{document}"
        );
        let methods = document["token_endpoint_auth_methods_supported"]
            .as_array()
            .unwrap();
        assert!(methods.contains(&json!("none")), "{document}");
    }
}

mod advertised_scopes {
    use super::*;
    use token_domain::Scopes;

    pub(crate) fn with_scopes() -> AppOptions {
        let mut options = crate::registration::open();
        options.policy.registration.scopes =
            Scopes::parse("openid mcp:tools offline_access").unwrap();
        options
    }

    crate::on_both_stores!(with crate::registration::modes::advertised_scopes::with_scopes(); registration_scopes_are_advertised);

    /// What an arriving client may ask is in `scopes_supported` (an MCP agent picks its scopes
    /// there), after the scopes the server itself interprets; off, they are not.
    async fn registration_scopes_are_advertised(app: TestApp) {
        let document = app.get_json("/.well-known/openid-configuration").await;
        assert_eq!(
            document["scopes_supported"],
            json!(["openid", "profile", "email", "offline_access", "mcp:tools"]),
            "{document}"
        );
        let (status, body) = register(
            &app,
            &metadata(json!({ "scope": "mcp:tools", "token_endpoint_auth_method": "none" })),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["scope"], "mcp:tools", "{body}");
    }
}

mod token_mode {
    use super::*;

    crate::on_both_stores!(with crate::registration::registration(token_core::config::RegistrationMode::Token);
        an_initial_access_token_is_required);

    async fn an_initial_access_token_is_required(app: TestApp) {
        let body = metadata(json!({}));
        let (status, answer) = register(&app, &body, None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
        assert_eq!(answer["error"], "invalid_token");
        let (status, _) = register(&app, &body, Some("not-a-token")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);

        let (token, expires) = create_initial_access_token(app.ctx(), Some(1))
            .await
            .unwrap();
        assert!(expires > 0);
        assert!(
            !app.data.contains(token.expose()).await,
            "only the initial access token's hash is stored"
        );
        let (status, answer) = register(&app, &body, Some(token.expose())).await;
        assert_eq!(status, StatusCode::CREATED, "{answer}");

        // Past its expiry it no longer registers.
        app.clock.advance(86_400);
        let (status, _) = register(&app, &body, Some(token.expose())).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
}

mod rate_limited {
    use super::*;

    crate::on_both_stores!(with crate::registration::limited(2); registrations_past_the_limit_are_429);

    async fn registrations_past_the_limit_are_429(app: TestApp) {
        let body = metadata(json!({}));
        for _ in 0..2 {
            let (status, answer) = register(&app, &body, None).await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
        let answer = app
            .http
            .post(app.url(REGISTER))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(answer.headers().contains_key("retry-after"));
        let (_, body) = json_of(answer).await;
        assert_eq!(body["error"], "slow_down", "{body}");
        assert_eq!(body["code"], 144, "{body}");
    }
}
