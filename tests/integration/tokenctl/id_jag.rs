//! `clients id-jag-targets add|list|remove` and `companies set-id-jag`, with the service on the
//! same store: a target added by the tool is what the token exchange asserts to (its resources
//! and scopes the only ones), a company switched off gets 182 until switched on, a removed
//! target is refused (160), and each change is audited.

use reqwest::StatusCode;
use token_domain::audit::AuditSubject;
use token_domain::{ClientId, PrincipalId};

use super::output::str_field;
use super::target::{Target, UNKNOWN};
use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN, PASSWORD};
use crate::federation::id_jag_fixture::{ID_JAG, ID_TOKEN, TOKEN_EXCHANGE};
use crate::support::assertions::assert_token_error;

const AUDIENCE: &str = "https://mcp-as.example.com";
const MCP: &str = "https://mcp.example.com/mcp";

pub async fn targets_and_switch(t: &Target) {
    let app = super::app_on(t).await;
    let company = t.json(&["companies", "create", "--name", "Acme"]);
    let company_id = str_field(&company, "company_id").to_owned();
    let company_pid = PrincipalId::parse(&company_id).unwrap();
    app.create_user_with(LOGIN, PASSWORD, |user| {
        user.company_id = Some(company_pid);
    })
    .await;
    let agent = code_client(&app).await;
    let agent_id = ClientId::parse(&agent.id).unwrap();
    let add = |audience: &'static str| {
        [
            "clients",
            "id-jag-targets",
            "add",
            agent.id.as_str(),
            "--audience",
            audience,
            "--client-id",
            "agent-at-the-mcp",
            "--resource",
            MCP,
            "--scopes",
            "tools:read",
        ]
    };
    let added = t.json(&add(AUDIENCE));
    assert_eq!(added["client_id"], agent.id.as_str(), "{added}");
    assert_eq!(added["target"]["audience"], AUDIENCE, "{added}");
    assert_eq!(added["target"]["client_id"], "agent-at-the-mcp");
    assert_eq!(added["target"]["resources"][0], MCP);
    assert_eq!(added["target"]["scopes"], "tools:read");
    let stored = t.stored_client(&agent_id).await;
    assert_eq!(stored.id_jag_targets.len(), 1);
    assert_eq!(stored.id_jag_targets[0].client_id, "agent-at-the-mcp");
    let listed = t.json(&["clients", "id-jag-targets", "list", &agent.id]);
    assert_eq!(listed[0]["audience"], AUDIENCE, "{listed}");
    let text = t.text(&["clients", "id-jag-targets", "list", &agent.id]);
    assert!(text.contains(AUDIENCE), "{text}");
    // Not a client, not a URI: refused, nothing stored.
    let mut unknown = add(AUDIENCE);
    unknown[3] = UNKNOWN;
    t.fails(&unknown, 3);
    let mut bad_resource = add("https://other-as.example.com");
    bad_resource[8] = "not a uri";
    t.fails(&bad_resource, 2);
    assert_eq!(t.stored_client(&agent_id).await.id_jag_targets.len(), 1);

    // The service asserts to the target as the tool set it.
    let code = approved_code(&app, &agent).await;
    let (status, tokens) = exchange(&app, &agent, &code, &[]).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let id_token = tokens["id_token"].as_str().unwrap().to_owned();
    let ask = |scope: &'static str| {
        let id_token = id_token.clone();
        let agent = &agent;
        let app = &app;
        async move {
            let form = [
                ("grant_type", TOKEN_EXCHANGE),
                ("client_id", agent.id.as_str()),
                ("client_secret", agent.secret.as_str()),
                ("requested_token_type", ID_JAG),
                ("subject_token", id_token.as_str()),
                ("subject_token_type", ID_TOKEN),
                ("audience", AUDIENCE),
                ("resource", MCP),
                ("scope", scope),
            ];
            app.token(&form).await
        }
    };
    let (status, answer) = ask("tools:read").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let claims = crate::dpop::claims(answer["access_token"].as_str().unwrap());
    assert_eq!(claims["aud"], AUDIENCE, "{claims}");
    assert_eq!(claims["client_id"], "agent-at-the-mcp", "{claims}");
    assert_eq!(claims["resource"], MCP, "{claims}");
    assert_token_error(&ask("tools:call").await, 400, "invalid_scope", 54);

    // Off for the company: refused; on again: asserted.
    let off = t.json(&["companies", "set-id-jag", &company_id, "off"]);
    assert_eq!(off["id_jag"], "off", "{off}");
    let stored = app.store.principals().get_company(&company_pid).await;
    assert!(!stored.unwrap().unwrap().id_jag);
    assert_token_error(&ask("tools:read").await, 403, "access_denied", 182);
    let on = t.text(&["companies", "set-id-jag", &company_id, "on"]);
    assert!(on.contains("identity assertions on"), "{on}");
    assert_eq!(ask("tools:read").await.0, StatusCode::OK);
    t.fails(&["companies", "set-id-jag", UNKNOWN, "on"], 3);

    // Removed: the audience is no target any more.
    let removed = t.json(&[
        "clients",
        "id-jag-targets",
        "remove",
        &agent.id,
        "--audience",
        AUDIENCE,
    ]);
    assert_eq!(removed["removed"], true, "{removed}");
    assert!(t.stored_client(&agent_id).await.id_jag_targets.is_empty());
    assert_token_error(&ask("tools:read").await, 400, "invalid_target", 160);
    let text = t.text(&["clients", "id-jag-targets", "list", &agent.id]);
    assert!(text.contains("no identity assertion target"), "{text}");

    let kinds = |events: Vec<token_domain::audit::AuditEvent>| {
        events
            .iter()
            .map(|event| event.kind.name().to_owned())
            .collect::<Vec<_>>()
    };
    let of_client = kinds(crate::audit::events_of(&app, AuditSubject::Client(agent_id)).await);
    for kind in ["client.id_jag_target_added", "client.id_jag_target_removed"] {
        assert!(of_client.iter().any(|k| k == kind), "{kind}: {of_client:?}");
    }
    let of_company =
        kinds(crate::audit::events_of(&app, AuditSubject::Principal(company_pid)).await);
    let switched = of_company.iter().filter(|k| *k == "company.id_jag_set");
    assert_eq!(switched.count(), 2, "{of_company:?}");
}
