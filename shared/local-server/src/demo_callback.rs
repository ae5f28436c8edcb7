//! The demo client's own redirect URI, served by the local server only: after the consent page
//! the browser lands here, and the page shows the code it received with a ready-to-paste
//! `curl` for the token request. A newcomer can try the whole authorization code flow with
//! nothing but a browser and a terminal.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Html;
use axum::routing::get;
use axum::Router;
use std::collections::HashMap;
use token_core::context::Context;
use token_domain::ClientId;

use crate::demo::DemoData;

pub const CALLBACK_PATH: &str = "/demo/callback";

/// `http://127.0.0.1:$PORT/demo/callback`: depends on the port, so it is registered (added to
/// the demo client's redirect URIs) at every start rather than once with the demo data.
pub fn redirect_uri(base: &str) -> String {
    format!("{base}{CALLBACK_PATH}")
}

/// Adds this start's callback to the demo client's registered redirect URIs.
pub async fn register(ctx: &Context, demo: &DemoData, base: &str) -> anyhow::Result<()> {
    let id = ClientId::parse(&demo.client_id)?;
    let mut client = ctx
        .store
        .clients()
        .get_client(&id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("the demo client is missing"))?;
    let uri = redirect_uri(base);
    if !client.redirect_uris.contains(&uri) {
        client.redirect_uris.push(uri);
        ctx.store.clients().put_client(&client).await?;
    }
    Ok(())
}

/// The authorize URL a person opens to start the flow.
pub fn authorize_url(demo: &DemoData, base: &str) -> String {
    let query = serde_urlencoded::to_string([
        ("client_id", demo.client_id.as_str()),
        ("redirect_uri", redirect_uri(base).as_str()),
        ("response_type", "code"),
        ("scope", "profile payroll"),
        ("state", "demo"),
    ])
    .expect("strings encode");
    format!("{base}/oauth2/v0/authorize?{query}")
}

/// The lines added to the welcome text.
pub fn instructions(demo: &DemoData, base: &str) -> String {
    format!(
        "8. Authorization code flow in a browser: open\n{}\n   sign in as {} / {}, allow, and the page you land on shows the curl for the token request.\n\n\
         9. SCIM provisioning as the demo company's identity provider (its provisioning token):\n\
         curl -s {base}/scim/v2/Users -H 'Authorization: Bearer {}'\n",
        authorize_url(demo, base),
        demo.user_login,
        demo.user_password,
        demo.scim_token
    )
}

struct CallbackState {
    demo: DemoData,
    base: String,
}

/// The callback route, to merge into the local router.
pub fn routes(demo: DemoData, base: String) -> Router {
    Router::new()
        .route(CALLBACK_PATH, get(callback))
        .with_state(Arc::new(CallbackState { demo, base }))
}

async fn callback(
    State(state): State<Arc<CallbackState>>,
    Query(query): Query<HashMap<String, String>>,
) -> Html<String> {
    let get = |name: &str| query.get(name).map(String::as_str).unwrap_or_default();
    let body = if let Some(code) = query.get("code") {
        let curl = format!(
            "curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=authorization_code -d code={code} -d redirect_uri={redirect}",
            base = state.base,
            id = state.demo.client_id,
            secret = state.demo.client_secret,
            code = code,
            redirect = redirect_uri(&state.base),
        );
        format!(
            "<h1>The demo app received a code</h1>\n<p>code: <code>{}</code><br>state: <code>{}</code><br>geolocation: <code>{}</code></p>\n<p>Exchange it within five minutes (it works once):</p>\n<pre>{}</pre>",
            escape(code),
            escape(get("state")),
            escape(get("geolocation")),
            escape(&curl)
        )
    } else {
        format!(
            "<h1>The demo app received an error</h1>\n<p>error: <code>{}</code><br>error_code: <code>{}</code><br>{}</p>",
            escape(get("error")),
            escape(get("error_code")),
            escape(get("error_description"))
        )
    };
    Html(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Demo callback</title></head><body>\n{body}\n</body></html>\n"
    ))
}

/// HTML text escaping: the query is whatever the browser was sent to.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}
