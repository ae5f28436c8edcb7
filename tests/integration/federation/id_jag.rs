//! Identity assertions for agents (ID-JAG) between two deployments, on both
//! stores: the identity provider trades an ID token of a live sign-in for an assertion only for
//! a configured target, within its resources and scopes, unless the user's company turned it
//! off; the app redeems an assertion once, only from an IdP added with `--id-jag`, for itself
//! and the client it names, within its lifetime, for the user the link (or a first sign-in's
//! linking) gives, with an access token alone.

use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin;
use token_domain::audit::AuditSubject;
use token_domain::clock::Clock;
use token_domain::{ClientId, IdJagTarget, UserStatus};

use super::fixture::update_idp;
use super::id_jag_fixture::{Pair, ID_JAG, JWT_BEARER, MCP, SCOPES};
use crate::authorize::flow::{verify_with_jwks, LOGIN, PASSWORD};
use crate::support::assertions::assert_token_error;

crate::on_both_stores!(using crate::federation::id_jag_fixture::pair;
    an_id_token_becomes_an_assertion_the_app_redeems_once,
    an_assertion_redeemed_with_a_dpop_proof_binds_the_token_to_its_key,
    the_identity_provider_asserts_only_to_a_configured_target,
    only_a_live_id_token_of_the_client_is_exchanged,
    a_company_turns_assertions_off_and_on,
    the_app_redeems_only_a_typed_signed_assertion_for_itself,
    the_app_redeems_only_what_the_assertion_and_client_allow,
    the_app_redeems_only_for_an_active_user_it_can_link,
    a_redeemed_token_ends_when_its_user_is_deprovisioned,
    the_metadata_names_the_grant_and_its_profile,
);

async fn an_id_token_becomes_an_assertion_the_app_redeems_once(p: Pair) {
    let id_token = p.id_token().await;
    let (status, answer) = p.exchange(&id_token, &[]).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["issued_token_type"], ID_JAG, "{answer}");
    assert_eq!(answer["token_type"], "N_A", "{answer}");
    assert_eq!(answer["expires_in"], 300, "{answer}");
    assert!(answer.get("refresh_token").is_none() && answer.get("id_token").is_none());
    let assertion = answer["access_token"].as_str().unwrap();
    let (header, claims) = verify_with_jwks(&p.idp, assertion).await;
    assert_eq!(header["typ"], "oauth-id-jag+jwt", "{header}");
    assert_eq!(claims["iss"], p.idp.geolocation().as_str(), "{claims}");
    assert_eq!(claims["sub"], p.user.id.to_string(), "{claims}");
    assert_eq!(
        claims["aud"],
        p.app.geolocation().as_str(),
        "one string: {claims}"
    );
    assert_eq!(
        claims["client_id"], p.app_agent.id,
        "the client's id there: {claims}"
    );
    assert_eq!(claims["resource"], MCP, "{claims}");
    assert_eq!(claims["scope"], SCOPES, "{claims}");
    assert_eq!(claims["amr"], serde_json::json!(["pwd"]), "{claims}");
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["exp"].as_i64().unwrap() - iat, 300, "{claims}");
    assert!(claims["auth_time"].as_i64().unwrap() <= iat, "{claims}");
    assert!(claims["jti"].as_str().is_some_and(|jti| !jti.is_empty()));
    let events = crate::audit::events_of(&p.idp, AuditSubject::Principal(p.user.id)).await;
    let issued = events
        .iter()
        .find(|event| event.kind.name() == "token.id_jag_issued")
        .expect("token.id_jag_issued");
    assert_eq!(
        issued.client_id.map(|id| id.to_string()),
        Some(p.agent.id.clone())
    );

    let (status, tokens) = p.redeem(assertion, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer", "{tokens}");
    assert_eq!(tokens["scope"], SCOPES, "{tokens}");
    for absent in ["refresh_token", "id_token", "issued_token_type"] {
        assert!(tokens.get(absent).is_none(), "no {absent}: {tokens}");
    }
    let access_token = tokens["access_token"].as_str().unwrap();
    let (header, access) = verify_with_jwks(&p.app, access_token).await;
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(access["iss"], p.app.geolocation().as_str(), "{access}");
    assert_eq!(access["aud"], MCP, "{access}");
    assert_eq!(access["client_id"], p.app_agent.id, "{access}");
    // The subject was linked as a first sign-in links it: the assertion names no email, so to
    // a user of the app's company made just in time.
    let link = p.link().await;
    assert_eq!(access["sub"], link.user_id.to_string(), "{access}");
    assert_eq!(link.company_id, p.app_company.id);
    let events = crate::audit::events_of(&p.app, AuditSubject::Principal(link.user_id)).await;
    let kinds: Vec<&str> = events.iter().map(|event| event.kind.name()).collect();
    for kind in ["user.created", "federation.linked", "token.id_jag_redeemed"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let introspected = p
        .app
        .post_form(
            "/oauth2/v0/introspect",
            &[
                ("token", access_token),
                ("client_id", &p.app_agent.id),
                ("client_secret", &p.app_agent.secret),
            ],
        )
        .await;
    let introspected: Value = introspected.json().await.unwrap();
    assert_eq!(introspected["active"], true, "{introspected}");

    let replayed = p.redeem(assertion, &[]).await;
    assert_token_error(&replayed, 400, "invalid_grant", 168);
    // A second assertion of the same user goes to the same linked user.
    let (status, again) = p.redeem(&p.assertion().await, &[]).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let (_, access) = verify_with_jwks(&p.app, again["access_token"].as_str().unwrap()).await;
    assert_eq!(access["sub"], link.user_id.to_string());
}

async fn an_assertion_redeemed_with_a_dpop_proof_binds_the_token_to_its_key(p: Pair) {
    let assertion = p.assertion().await;
    let key = crate::dpop::DpopKey::generate();
    let form = [
        ("grant_type", JWT_BEARER),
        ("client_id", p.app_agent.id.as_str()),
        ("client_secret", p.app_agent.secret.as_str()),
        ("assertion", assertion.as_str()),
        ("resource", MCP),
    ];
    let proof = key.token_proof(&p.app);
    let (status, _, tokens) = crate::dpop::token_with(&p.app, &form, &[&proof]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "DPoP", "{tokens}");
    let claims = crate::dpop::claims(tokens["access_token"].as_str().unwrap());
    assert_eq!(claims["cnf"]["jkt"], key.thumbprint(), "{claims}");
}

async fn the_identity_provider_asserts_only_to_a_configured_target(p: Pair) {
    let id_token = p.id_token().await;
    // An audience not configured, none, a resource outside the target's.
    for extra in [
        [("audience", "https://elsewhere.example")],
        [("audience", "")],
        [("resource", "https://other.example/mcp")],
    ] {
        let refused = p.exchange(&id_token, &extra).await;
        assert_token_error(&refused, 400, "invalid_target", 160);
    }
    let two = p
        .idp
        .token(&[
            ("grant_type", super::id_jag_fixture::TOKEN_EXCHANGE),
            ("client_id", &p.agent.id),
            ("client_secret", &p.agent.secret),
            ("requested_token_type", ID_JAG),
            ("subject_token", &id_token),
            ("subject_token_type", super::id_jag_fixture::ID_TOKEN),
            ("audience", p.app.geolocation().as_str()),
            ("audience", "https://elsewhere.example"),
        ])
        .await;
    assert_token_error(&two, 400, "invalid_target", 160);
    let beyond = p
        .exchange(&id_token, &[("scope", "tools:read admin")])
        .await;
    assert_token_error(&beyond, 400, "invalid_scope", 54);
    // Within the target: fewer scopes, or none, and no resource at all.
    let (status, narrower) = p
        .exchange(&id_token, &[("scope", "tools:read"), ("resource", "")])
        .await;
    assert_eq!(status, StatusCode::OK, "{narrower}");
    let claims = crate::dpop::claims(narrower["access_token"].as_str().unwrap());
    assert_eq!(claims["scope"], "tools:read");
    assert!(claims.get("resource").is_none(), "{claims}");

    // Removed, the target is refused at once; added back, allowed again.
    let agent = ClientId::parse(&p.agent.id).unwrap();
    let audience = p.app.geolocation().as_str().to_owned();
    admin::remove_id_jag_target(p.idp.ctx(), &agent, &audience)
        .await
        .unwrap();
    let refused = p.exchange(&id_token, &[]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let target = IdJagTarget {
        audience,
        client_id: p.app_agent.id.clone(),
        resources: Vec::new(),
        scopes: None,
    };
    admin::add_id_jag_target(p.idp.ctx(), &agent, target)
        .await
        .unwrap();
    let (status, open) = p
        .exchange(
            &id_token,
            &[("resource", "https://any.example/api"), ("scope", "x")],
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a target without lists bounds nothing: {open}"
    );
}

async fn only_a_live_id_token_of_the_client_is_exchanged(p: Pair) {
    let id_token = p.id_token().await;
    // An access token is no ID token, whatever the type says.
    let tokens = p.idp.user_tokens(&p.agent, LOGIN, PASSWORD).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_token_error(&p.exchange(access, &[]).await, 400, "invalid_grant", 165);
    // The password grant's ID token has no sign-in session behind it.
    let sessionless = tokens["id_token"].as_str().unwrap();
    assert_token_error(
        &p.exchange(sessionless, &[]).await,
        400,
        "invalid_grant",
        165,
    );
    // Another client's ID token.
    let other = crate::authorize::flow::code_client(&p.idp).await;
    let refused = p
        .idp
        .token(&[
            ("grant_type", super::id_jag_fixture::TOKEN_EXCHANGE),
            ("client_id", &other.id),
            ("client_secret", &other.secret),
            ("requested_token_type", ID_JAG),
            ("subject_token", &id_token),
            ("subject_token_type", super::id_jag_fixture::ID_TOKEN),
            ("audience", p.app.geolocation().as_str()),
        ])
        .await;
    assert_token_error(&refused, 400, "invalid_grant", 165);
    // An actor token has no place in an assertion.
    let with_actor = p
        .exchange(
            &id_token,
            &[
                ("actor_token", access),
                (
                    "actor_token_type",
                    "urn:ietf:params:oauth:token-type:access_token",
                ),
            ],
        )
        .await;
    assert_token_error(&with_actor, 400, "invalid_grant", 166);
    // The session ends (every session of the user): the ID token no longer speaks for it.
    let sessions = p.idp.store.sessions();
    let now = p.idp.clock.now();
    for session in sessions.list_sessions(&p.user.id, now).await.unwrap() {
        sessions
            .delete_session(&p.user.id, &session.sid, now)
            .await
            .unwrap();
    }
    assert_token_error(&p.exchange(&id_token, &[]).await, 400, "invalid_grant", 165);
    // A disabled user's ID token from a live session is refused too.
    let id_token = p.id_token().await;
    admin::set_user_status(&p.idp.services, &p.user.id, UserStatus::Disabled)
        .await
        .unwrap();
    assert_token_error(&p.exchange(&id_token, &[]).await, 400, "invalid_grant", 165);
}

async fn a_company_turns_assertions_off_and_on(p: Pair) {
    let id_token = p.id_token().await;
    let company = admin::set_company_id_jag(p.idp.ctx(), &p.company.id, false)
        .await
        .unwrap();
    assert!(!company.id_jag);
    let refused = p.exchange(&id_token, &[]).await;
    assert_token_error(&refused, 403, "access_denied", 182);
    let events = crate::audit::events_of(&p.idp, AuditSubject::Principal(p.company.id)).await;
    assert!(events.iter().any(|e| e.kind.name() == "company.id_jag_set"));
    admin::set_company_id_jag(p.idp.ctx(), &p.company.id, true)
        .await
        .unwrap();
    let (status, body) = p.exchange(&id_token, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn the_app_redeems_only_a_typed_signed_assertion_for_itself(p: Pair) {
    // An ID token of the trusted issuer is not an assertion, though signed by the same keys.
    let id_token = p.id_token().await;
    assert_token_error(&p.redeem(&id_token, &[]).await, 400, "invalid_grant", 167);
    let assertion = p.assertion().await;
    let mut tampered = assertion.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    assert_token_error(&p.redeem(&tampered, &[]).await, 400, "invalid_grant", 167);
    let now = p.idp.clock.now();
    for forged in [
        p.forged(|c| c.aud = "https://elsewhere.example".into())
            .await,
        p.forged(|c| c.exp = c.iat + 301).await,
        p.forged(|c| {
            c.iat = now - 400;
            c.exp = now - 100;
        })
        .await,
    ] {
        assert_token_error(&p.redeem(&forged, &[]).await, 400, "invalid_grant", 167);
    }
    // Another client's assertion, presented by a client of the app that is not the one named.
    let other = p
        .app_client_with_grants(&[token_domain::GrantType::JwtBearer])
        .await;
    let refused = p
        .app
        .token(&[
            ("grant_type", JWT_BEARER),
            ("client_id", &other.id),
            ("client_secret", &other.secret),
            ("assertion", &assertion),
        ])
        .await;
    assert_token_error(&refused, 400, "invalid_grant", 105);
    // A client not allowed the grant.
    let no_grant = p
        .app_client_with_grants(&[token_domain::GrantType::ClientCredentials])
        .await;
    let refused = p
        .app
        .token(&[
            ("grant_type", JWT_BEARER),
            ("client_id", &no_grant.id),
            ("client_secret", &no_grant.secret),
            ("assertion", &assertion),
        ])
        .await;
    assert_token_error(&refused, 400, "invalid_grant", 60);
    let missing = p.redeem("", &[("assertion", "")]).await;
    assert_token_error(&missing, 400, "invalid_request", 169);
    // The IdP no longer trusted for assertions: the same good assertion is refused; nothing of
    // the refusals above spent it.
    update_idp(&p.app, &p.idp_id, |idp| idp.id_jag = false).await;
    assert_token_error(&p.redeem(&assertion, &[]).await, 400, "invalid_grant", 167);
    update_idp(&p.app, &p.idp_id, |idp| idp.id_jag = true).await;
    let (status, body) = p.redeem(&assertion, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn the_app_redeems_only_what_the_assertion_and_client_allow(p: Pair) {
    let resource_elsewhere = p
        .forged(|c| c.resource = Some("https://other.example/mcp".into()))
        .await;
    let refused = p.redeem(&resource_elsewhere, &[]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let narrow = p.forged(|c| c.scope = Some("tools:read".into())).await;
    let beyond = p.redeem(&narrow, &[("scope", SCOPES)]).await;
    assert_token_error(&beyond, 400, "invalid_scope", 54);
    let (status, body) = p.redeem(&narrow, &[("resource", "")]).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the assertion's resource and scope: {body}"
    );
    assert_eq!(body["scope"], "tools:read");
    let (_, access) = verify_with_jwks(&p.app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(access["aud"], MCP, "the assertion's resource: {access}");
}

async fn the_app_redeems_only_for_an_active_user_it_can_link(p: Pair) {
    // A subject no link names, no email, and no users made just in time: no account.
    update_idp(&p.app, &p.idp_id, |idp| idp.jit = false).await;
    let unknown = p.forged(|_| {}).await;
    assert_token_error(&p.redeem(&unknown, &[]).await, 400, "invalid_grant", 167);
    // A verified email names the company's user, who is then linked.
    let ann = p
        .app
        .create_user_with("ann@acme.example", PASSWORD, |user| {
            user.company_id = Some(p.app_company.id);
            user.email = Some("ann@acme.example".into());
        })
        .await;
    let email_only = p.forged(|_| {}).await;
    let with_email = {
        let mut claims = crate::dpop::claims(&email_only);
        claims["email"] = "ann@acme.example".into();
        claims["email_verified"] = true.into();
        claims
    };
    let signed = sign_claims(&p, with_email).await;
    let (status, body) = p.redeem(&signed, &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, access) = verify_with_jwks(&p.app, body["access_token"].as_str().unwrap()).await;
    assert_eq!(access["sub"], ann.id.to_string());
    // Disabled, the linked user is refused.
    admin::set_user_status(&p.app.services, &ann.id, UserStatus::Disabled)
        .await
        .unwrap();
    let again = p.forged(|_| {}).await;
    assert_token_error(&p.redeem(&again, &[]).await, 400, "invalid_grant", 167);
    let refusals = crate::audit::events_of(&p.app, AuditSubject::Principal(p.app_company.id)).await;
    assert!(
        refusals
            .iter()
            .any(|e| e.kind.name() == "federation.refused"),
        "each refusal of a user is recorded under the company"
    );
}

/// Claims signed as an assertion by the identity provider's keys, whatever they are.
async fn sign_claims(p: &Pair, claims: Value) -> String {
    p.idp.services.codec.sign_as_id_jag(&claims).await.unwrap()
}

async fn the_metadata_names_the_grant_and_its_profile(p: Pair) {
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let metadata = p.app.get_json(path).await;
        let grants = metadata["grant_types_supported"].as_array().unwrap();
        assert!(grants.iter().any(|g| g == JWT_BEARER), "{metadata}");
        assert_eq!(
            metadata["authorization_grant_profiles_supported"],
            serde_json::json!(["urn:ietf:params:oauth:grant-profile:id-jag"])
        );
        let requested = &metadata["identity_chaining_requested_token_types_supported"];
        assert!(
            requested.as_array().unwrap().iter().any(|t| t == ID_JAG),
            "{metadata}"
        );
    }
}

/// Active at the app's introspection while `token` is live.
async fn introspected_active(p: &Pair, token: &str) -> bool {
    let form = [
        ("token", token),
        ("client_id", p.app_agent.id.as_str()),
        ("client_secret", p.app_agent.secret.as_str()),
    ];
    let answer = p.app.post_form("/oauth2/v0/introspect", &form).await;
    let answer: Value = answer.json().await.unwrap();
    answer["active"] == true
}

async fn a_redeemed_token_ends_when_its_user_is_deprovisioned(p: Pair) {
    let (status, tokens) = p.redeem(&p.assertion().await, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    assert!(introspected_active(&p, &token).await);
    // The app's company deactivates its (just-in-time) user over SCIM: the token, of no
    // family, ends at once, and stays ended when the user is active again.
    let user = p.link().await.user_id;
    let scim_token = crate::scim::provisioning_token(&p.app, &p.app_company).await;
    let active = |on: bool| {
        let body = serde_json::json!({
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "replace", "value": {"active": on}}],
        });
        crate::scim::scim(
            &p.app,
            reqwest::Method::PATCH,
            &format!("/Users/{user}"),
            &scim_token,
        )
        .json(&body)
        .send()
    };
    assert_eq!(active(false).await.unwrap().status(), StatusCode::OK);
    assert!(!introspected_active(&p, &token).await);
    assert_eq!(active(true).await.unwrap().status(), StatusCode::OK);
    assert!(!introspected_active(&p, &token).await, "revived");
    // A new assertion is redeemed for the user, active again (a second later: what was
    // issued within the deactivation's second counts as before it).
    p.app.clock.advance(1);
    let (status, tokens) = p.redeem(&p.assertion().await, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert!(introspected_active(&p, tokens["access_token"].as_str().unwrap()).await);
}
