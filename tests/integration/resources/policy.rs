//! A deployment with `RESOURCES` set: only the listed resources may be asked for, whatever the
//! client's own list says, and `http` ones too when listed.

use reqwest::StatusCode;

use super::{claims, token_with_resources, API, FILES};
use crate::authorize::flow::{code_client, query, redirect_query, Session};
use crate::support::app::{AppOptions, TestApp};
use crate::support::assertions::assert_token_error;
use token_core::config::Policy;
use token_domain::ResourcePolicy;

pub fn listed() -> AppOptions {
    AppOptions {
        policy: Policy {
            resources: ResourcePolicy::parse(&format!("{API}, http://internal.example.com/api"))
                .unwrap(),
            ..Policy::default()
        },
        ..AppOptions::default()
    }
}

crate::on_both_stores!(with super::listed(); only_the_deployment_resources_are_allowed);

async fn only_the_deployment_resources_are_allowed(app: TestApp) {
    let client = app.create_client("read").await;
    let form = [("grant_type", "client_credentials")];
    let (status, body) = token_with_resources(&app, &client, &form, &[API]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        claims(&app, body["access_token"].as_str().unwrap()).await["aud"],
        API
    );
    // Listed, so allowed though plain http.
    let internal = "http://internal.example.com/api";
    let (status, body) = token_with_resources(&app, &client, &form, &[internal]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Not listed: an https URI any empty RESOURCES would allow.
    let refused = token_with_resources(&app, &client, &form, &[FILES]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);
    let refused = token_with_resources(&app, &client, &form, &["http://127.0.0.1:9000/mcp"]).await;
    assert_token_error(&refused, 400, "invalid_target", 160);

    let code_client = code_client(&app).await;
    let mut query = query(&code_client, &[]);
    query.push(("resource", FILES));
    let answer = Session::new(&app).open(&query).await;
    let redirect = redirect_query(&answer);
    assert_eq!(redirect["error"], "invalid_target");
    assert_eq!(redirect["error_code"], "160");
}
