//! Two deployments of the service (docs/decisions.md, "Identity assertion grants"): one the
//! company's identity provider, where the user signs in and the agent's client may ask identity
//! assertions for the other; one the authorization server of an app or MCP server, which trusts
//! the first as a company OpenID Provider added with `--id-jag`.

use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::{self, NewClient};
use token_core::federation::seal_client_secret;
use token_core::jwt::IdJagClaims;
use token_core::outbound::AllowedHosts;
use token_domain::clock::Clock;
use token_domain::random::RandomExt;
use token_domain::{
    ClientId, Company, FederationLink, GrantType, IdJagTarget, IdentityProvider, IdpDomains, IdpId,
    IdpProtocol, LinkBy, OidcConnection, Resource, Scopes, TokenEndpointAuth, UpstreamSubject,
    User,
};
use token_store::IdpInserted;

use crate::authorize::flow::{approved_code, code_client, exchange, LOGIN, PASSWORD};
use crate::support::app::{AppOptions, Backend, TestApp, TestClient};

/// The resource the agent's tokens are for (an MCP server; never fetched by these tests).
pub const MCP: &str = "http://127.0.0.1:9/mcp";
pub const SCOPES: &str = "tools:call tools:read";
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
pub const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub struct Pair {
    /// The company's identity provider: issues assertions.
    pub idp: TestApp,
    /// The app's authorization server: redeems them.
    pub app: TestApp,
    /// The agent's client at the identity provider (the code flow and token exchange).
    pub agent: TestClient,
    /// The agent's client at the app (the jwt-bearer grant).
    pub app_agent: TestClient,
    /// The user, at the identity provider, of `company` there.
    pub user: User,
    pub company: Company,
    /// The company at the app, and its connection to the identity provider.
    pub app_company: Company,
    pub idp_id: IdpId,
}

/// Both deployments on `backend`, the app's fetcher allowed to read the identity provider's
/// documents over loopback http.
pub async fn pair(backend: Backend) -> Option<Pair> {
    pair_with(backend, AppOptions::default()).await
}

pub async fn pair_with(backend: Backend, app_options: AppOptions) -> Option<Pair> {
    let idp = TestApp::spawn(backend).await?;
    let app = TestApp::spawn_with(backend, fetching_from(&idp, app_options)).await?;
    Some(Pair::between(idp, app).await)
}

/// `options` with a fetcher allowed to read `idp`'s documents over loopback http.
pub fn fetching_from(idp: &TestApp, options: AppOptions) -> AppOptions {
    let host = idp
        .address
        .strip_prefix("http://")
        .expect("served over http");
    let allowed = AllowedHosts::parse(host).unwrap();
    AppOptions {
        document_fetcher: Some(token_adapters::outbound::fetcher(allowed)),
        ..options
    }
}

impl Pair {
    /// The company, its user and the agent's client at `idp`, the agent's target at `app`, and
    /// `app`'s company trusting `idp` (`app` built [`fetching_from`] `idp`).
    pub async fn between(idp: TestApp, app: TestApp) -> Pair {
        let company = idp.create_company("Acme").await;
        let user = idp
            .create_user_with(LOGIN, PASSWORD, |user| {
                user.company_id = Some(company.id);
                user.email = Some(LOGIN.to_owned());
            })
            .await;
        let agent = code_client(&idp).await;
        let app_agent = app
            .create_client_with(NewClient::named("Agent", Scopes::parse(SCOPES).unwrap()))
            .await;
        let target = IdJagTarget {
            audience: app.geolocation().as_str().to_owned(),
            client_id: app_agent.id.clone(),
            resources: vec![Resource::parse(MCP).unwrap()],
            scopes: Some(Scopes::parse(SCOPES).unwrap()),
        };
        let agent_id = ClientId::parse(&agent.id).unwrap();
        admin::add_id_jag_target(idp.ctx(), &agent_id, target)
            .await
            .unwrap();
        let app_company = app.create_company("Acme at the app").await;
        let idp_id = trust(&app, &app_company, idp.geolocation().as_str(), true).await;
        Pair {
            idp,
            app,
            agent,
            app_agent,
            user,
            company,
            app_company,
            idp_id,
        }
    }

    /// The app's link of the identity provider's user, once an assertion made one.
    pub async fn link(&self) -> FederationLink {
        let subject =
            UpstreamSubject::new(self.idp.geolocation().as_str(), &self.user.id.to_string())
                .unwrap();
        self.app
            .store
            .federation()
            .get_federation_link(&self.idp_id, &subject)
            .await
            .unwrap()
            .expect("the subject is linked")
    }
}

/// `company`'s OpenID Connect connection to `issuer` at `app`: links by email, users just in
/// time, assertions accepted when `id_jag`.
pub async fn trust(app: &TestApp, company: &Company, issuer: &str, id_jag: bool) -> IdpId {
    let id = IdpId::new(app.ctx().random.uuid());
    let record = IdentityProvider {
        id,
        company_id: company.id,
        name: "Sign in with Acme".to_owned(),
        protocol: IdpProtocol::Oidc(OidcConnection {
            issuer: issuer.to_owned(),
            client_id: "app-at-the-idp".to_owned(),
            client_secret: seal_client_secret(&app.services, &id, "unused")
                .await
                .unwrap(),
            scopes: vec!["openid".into(), "email".into()],
            token_endpoint_auth: TokenEndpointAuth::ClientSecretBasic,
        }),
        domains: IdpDomains::default(),
        link_by: LinkBy::Email,
        jit: true,
        trust_mfa: false,
        id_jag,
        created_at: app.clock.now(),
    };
    let inserted = app.store.federation().put_identity_provider(&record).await;
    assert_eq!(inserted.unwrap(), IdpInserted::Inserted);
    id
}

/// `form` with `extra` added or overriding; an empty value removes the parameter.
fn merged<'a>(
    mut form: Vec<(&'a str, &'a str)>,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    for (name, value) in extra {
        form.retain(|(n, _)| n != name);
        if !value.is_empty() {
            form.push((name, value));
        }
    }
    form
}

impl Pair {
    /// An ID token of the agent at the identity provider, from a sign-in on its pages (so with
    /// a live session, `sid`).
    pub async fn id_token(&self) -> String {
        let code = approved_code(&self.idp, &self.agent).await;
        let (status, body) = exchange(&self.idp, &self.agent, &code, &[]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["id_token"].as_str().expect("an ID token").to_owned()
    }

    /// The token exchange for an assertion at the identity provider, `extra` as [`merged`].
    pub async fn exchange(&self, id_token: &str, extra: &[(&str, &str)]) -> (StatusCode, Value) {
        let audience = self.app.geolocation().as_str().to_owned();
        let form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("client_id", self.agent.id.as_str()),
            ("client_secret", self.agent.secret.as_str()),
            ("requested_token_type", ID_JAG),
            ("subject_token", id_token),
            ("subject_token_type", ID_TOKEN),
            ("audience", audience.as_str()),
            ("resource", MCP),
            ("scope", SCOPES),
        ];
        self.idp.token(&merged(form, extra)).await
    }

    /// An assertion from a fresh sign-in: the exchange's `access_token`.
    pub async fn assertion(&self) -> String {
        let id_token = self.id_token().await;
        let (status, body) = self.exchange(&id_token, &[]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// The jwt-bearer grant at the app with the agent's client there, `extra` as [`merged`].
    pub async fn redeem(&self, assertion: &str, extra: &[(&str, &str)]) -> (StatusCode, Value) {
        let form = vec![
            ("grant_type", JWT_BEARER),
            ("client_id", self.app_agent.id.as_str()),
            ("client_secret", self.app_agent.secret.as_str()),
            ("assertion", assertion),
            ("resource", MCP),
        ];
        self.app.token(&merged(form, extra)).await
    }

    /// An assertion signed by the identity provider's own keys with claims a real exchange
    /// would give, then `change`d: what a misconfigured or hostile identity provider could send.
    pub async fn forged(&self, change: impl FnOnce(&mut IdJagClaims)) -> String {
        let now = self.idp.clock.now();
        let mut claims = IdJagClaims {
            iss: String::new(),
            sub: self.user.id.to_string(),
            aud: self.app.geolocation().as_str().to_owned(),
            client_id: self.app_agent.id.clone(),
            jti: uuid::Uuid::new_v4().to_string(),
            iat: now,
            exp: now + 300,
            auth_time: Some(now),
            amr: Vec::new(),
            resource: Some(MCP.to_owned()),
            scope: Some(SCOPES.to_owned()),
        };
        change(&mut claims);
        self.idp.services.codec.encode_id_jag(claims).await.unwrap()
    }

    /// The agent's client at the app, allowed only `grants`.
    pub async fn app_client_with_grants(&self, grants: &[GrantType]) -> TestClient {
        let mut new = NewClient::named("Other agent", Scopes::parse(SCOPES).unwrap());
        new.grants = grants.iter().copied().collect();
        self.app.create_client_with(new).await
    }
}
