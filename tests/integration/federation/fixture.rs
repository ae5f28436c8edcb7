//! An app with a company whose domain `acme.example` signs in at a node-oidc-provider, and a
//! code-flow client; and the HTTP steps of a browser through it.

use reqwest::{header, StatusCode};
use token_core::federation::seal_client_secret;
use token_core::outbound::AllowedHosts;
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::Clock;
use token_domain::random::RandomExt;
use token_domain::{
    Company, IdentityProvider, IdpDomains, IdpId, IdpProtocol, LinkBy, OidcConnection,
    TokenEndpointAuth,
};
use token_store::IdpInserted;

use crate::authorize::flow::{code_client, csrf, query, Session};
use crate::support::app::{AppOptions, Backend, TestApp, TestClient};
use crate::support::oidc_idp::{free_port, OidcIdp, CLIENT_ID, CLIENT_SECRET};

pub const DOMAIN: &str = "acme.example";

pub struct Federated {
    pub app: TestApp,
    pub idp: OidcIdp,
    pub company: Company,
    pub idp_id: IdpId,
    pub client: TestClient,
}

/// The app, its IdP (just-in-time users on, linking by email) and a client.
pub async fn federated(backend: Backend) -> Option<Federated> {
    let port = free_port();
    let allowed = AllowedHosts::parse(&format!("127.0.0.1:{port}")).unwrap();
    let options = AppOptions {
        document_fetcher: Some(token_adapters::outbound::fetcher(allowed)),
        ..AppOptions::default()
    };
    let app = TestApp::spawn_with(backend, options).await?;
    let idp = OidcIdp::start(port, &app.address).await;
    let company = app.create_company("Acme").await;
    let client = code_client(&app).await;
    let idp_id = add_idp(&app, &idp, &company, "Sign in with Acme", &[DOMAIN]).await;
    Some(Federated {
        app,
        idp,
        company,
        idp_id,
        client,
    })
}

/// Another IdP connection of `company` to `idp`, claiming `domains`.
pub async fn add_idp(
    app: &TestApp,
    idp: &OidcIdp,
    company: &Company,
    name: &str,
    domains: &[&str],
) -> IdpId {
    let id = IdpId::new(app.ctx().random.uuid());
    let record = IdentityProvider {
        id,
        company_id: company.id,
        name: name.to_owned(),
        protocol: IdpProtocol::Oidc(OidcConnection {
            issuer: idp.issuer.clone(),
            client_id: CLIENT_ID.to_owned(),
            client_secret: seal_client_secret(&app.services, &id, CLIENT_SECRET)
                .await
                .unwrap(),
            scopes: vec!["openid".into(), "email".into(), "profile".into()],
            token_endpoint_auth: TokenEndpointAuth::ClientSecretBasic,
        }),
        domains: IdpDomains::parse(domains).unwrap(),
        link_by: LinkBy::Email,
        jit: true,
        trust_mfa: false,
        id_jag: false,
        created_at: app.clock.now(),
    };
    let inserted = app.store.federation().put_identity_provider(&record).await;
    assert_eq!(inserted.unwrap(), IdpInserted::Inserted);
    id
}

/// Changes the IdP as `change` says.
pub async fn update_idp(app: &TestApp, id: &IdpId, change: impl FnOnce(&mut IdentityProvider)) {
    let federation = app.store.federation();
    let mut record = federation.get_identity_provider(id).await.unwrap().unwrap();
    federation.delete_identity_provider(id).await.unwrap();
    change(&mut record);
    assert_eq!(
        federation.put_identity_provider(&record).await.unwrap(),
        IdpInserted::Inserted
    );
}

/// A `303`'s `Location`.
#[track_caller]
pub fn see_other(response: &reqwest::Response) -> String {
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "a 303");
    response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned()
}

impl Federated {
    /// The authorize page, then its sign-in form with `login` and no password: where the
    /// browser is sent (the IdP's authorization endpoint, if discovery found it).
    pub async fn leave_for_idp(&self, session: &mut Session<'_>, login: &str) -> reqwest::Response {
        let page = session.open(&query(&self.client, &[])).await;
        assert_eq!(page.status(), StatusCode::OK);
        let html = page.text().await.unwrap();
        session
            .post(&[
                ("csrf_token", &csrf(&html)),
                ("login", login),
                ("password", ""),
            ])
            .await
    }

    /// The IdP's redirect back to us, followed to the page the sign-in left: that page's answer
    /// (the consent page, or a refusal), the callback's own answer when it refused.
    pub async fn come_back(&self, session: &mut Session<'_>, callback: &str) -> reqwest::Response {
        assert!(
            callback.starts_with(&self.app.url("/federation/v0/oidc/callback")),
            "{callback}"
        );
        let answer = self.app.http.get(callback).send().await.unwrap();
        if answer.status() != StatusCode::SEE_OTHER {
            return answer;
        }
        let resume = see_other(&answer);
        let path_and_query = resume
            .strip_prefix(&self.app.address)
            .expect("back to this deployment");
        let query = path_and_query
            .strip_prefix("/oauth2/v0/authorize?")
            .expect("back to the authorize page");
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        session.resume(&pairs).await
    }

    /// A whole sign-in at the IdP as `login`, from the authorize page to the page it comes back
    /// to.
    pub async fn sign_in(&self, session: &mut Session<'_>, login: &str) -> reqwest::Response {
        let leaving = self.leave_for_idp(session, login).await;
        let authorization = see_other(&leaving);
        assert!(
            authorization.starts_with(&self.idp.issuer),
            "{authorization}"
        );
        let callback = self.idp.sign_in(&authorization, login, false).await;
        self.come_back(session, &callback).await
    }

    /// The audit events filed under the company, oldest first.
    pub async fn company_events(&self) -> Vec<AuditKind> {
        let subject = AuditSubject::Principal(self.company.id);
        let mut events = crate::audit::events_of(&self.app, subject).await;
        events.reverse();
        events.into_iter().map(|event| event.kind).collect()
    }
}
