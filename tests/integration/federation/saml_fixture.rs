//! An app with a company whose domain `acme.example` signs in at a pysaml2 IdP, added as an
//! administrator adds it (its metadata fetched from its URL under the outbound rules, our
//! metadata imported there), and a code-flow client; and the HTTP steps of a browser through it.

use std::sync::Arc;

use reqwest::{header, StatusCode};
use token_core::admin::{self, MetadataSource, NewSamlIdp};
use token_core::outbound::AllowedHosts;
use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::{Company, IdpId, LinkBy, PrincipalId, UpstreamSubject};
use token_store::Store;

use super::fixture::{see_other, DOMAIN};
use crate::authorize::flow::{code_client, csrf, query, Session};
use crate::support::app::{AppOptions, Backend, TestApp, TestClient};
use crate::support::saml_idp::{SamlIdp, SamlPost};

pub struct SamlFederated {
    pub app: TestApp,
    pub idp: SamlIdp,
    pub company: Company,
    pub idp_id: IdpId,
    pub client: TestClient,
}

/// The app and its SAML IdP (IdP-initiated sign-in allowed, just-in-time users, linking by
/// email) and a client.
pub async fn saml_federated(backend: Backend) -> Option<SamlFederated> {
    saml_federated_on(backend, None).await
}

/// [`saml_federated`] on `store` (a DynamoDB table behind a fault proxy, say), else a fresh one.
pub async fn saml_federated_on(
    backend: Backend,
    store: Option<Arc<dyn Store>>,
) -> Option<SamlFederated> {
    let idp = SamlIdp::start().await;
    let allowed = AllowedHosts::parse(&format!("127.0.0.1:{}", idp.port)).unwrap();
    let options = AppOptions {
        document_fetcher: Some(token_adapters::outbound::fetcher(allowed)),
        ..AppOptions::default()
    };
    let app = match store {
        Some(store) => TestApp::with_store(store, backend, options).await,
        None => TestApp::spawn_with(backend, options).await?,
    };
    let company = app.create_company("Acme").await;
    let client = code_client(&app).await;
    let new = NewSamlIdp {
        company_id: company.id,
        name: "Sign in with Acme".to_owned(),
        metadata: MetadataSource::Url(idp.entity_id()),
        domains: vec![DOMAIN.to_owned()],
        allow_idp_initiated: true,
        email_attribute: None,
        link_by: LinkBy::Email,
        jit: true,
        trust_mfa: false,
        id_jag: false,
    };
    let (added, ours) = admin::add_saml_idp(&app.services, new)
        .await
        .unwrap_or_else(|error| panic!("the SAML IdP is added: {error}"));
    let metadata = app.http.get(&ours.entity_id).send().await.unwrap();
    assert_eq!(metadata.status(), StatusCode::OK);
    idp.register_sp(&metadata.text().await.unwrap()).await;
    Some(SamlFederated {
        app,
        idp,
        company,
        idp_id: added.id,
        client,
    })
}

impl SamlFederated {
    pub fn sp_entity_id(&self) -> String {
        self.app
            .url(&format!("/federation/v0/saml/{}/metadata", self.idp_id))
    }

    pub fn acs(&self) -> String {
        self.app
            .url(&format!("/federation/v0/saml/{}/acs", self.idp_id))
    }

    /// The authorize page, then its sign-in form with `login` and no password: the IdP's
    /// single sign-on URL the browser is sent to, with our `AuthnRequest`.
    pub async fn leave_for_idp(&self, session: &mut Session<'_>, login: &str) -> String {
        let page = session.open(&query(&self.client, &[])).await;
        assert_eq!(page.status(), StatusCode::OK);
        let html = page.text().await.unwrap();
        let leaving = session
            .post(&[
                ("csrf_token", &csrf(&html)),
                ("login", login),
                ("password", ""),
            ])
            .await;
        let sso = see_other(&leaving);
        assert!(sso.starts_with(&format!("{}/sso?", self.idp.base)), "{sso}");
        sso
    }

    /// What the IdP posts, at our ACS: its answer (a `303` on, or the error page).
    pub async fn post_acs(&self, post: &SamlPost) -> reqwest::Response {
        assert_eq!(post.acs, self.acs(), "the IdP posts to our ACS");
        self.app
            .http
            .post(&post.acs)
            .form(&post.form())
            .send()
            .await
            .unwrap()
    }

    /// The ACS's answer followed to the authorize page the sign-in left.
    pub async fn come_back(&self, session: &mut Session<'_>, post: &SamlPost) -> reqwest::Response {
        let answer = self.post_acs(post).await;
        if answer.status() != StatusCode::SEE_OTHER {
            return answer;
        }
        let resume = see_other(&answer);
        let query = resume
            .strip_prefix(&self.app.url("/oauth2/v0/authorize?"))
            .unwrap_or_else(|| panic!("back to the authorize page: {resume}"));
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
    /// to, the IdP's next response made in `mode`.
    pub async fn sign_in(
        &self,
        session: &mut Session<'_>,
        login: &str,
        mode: &str,
    ) -> reqwest::Response {
        let sso = self.leave_for_idp(session, login).await;
        self.idp.set_mode(mode).await;
        let post = self.idp.login(&sso, login, false).await;
        self.come_back(session, &post).await
    }

    /// The user the IdP's subject for `login` is linked to, if any.
    pub async fn linked_user(&self, login: &str) -> Option<PrincipalId> {
        self.linked_subject(&SamlIdp::name_id_of(login)).await
    }

    pub async fn linked_subject(&self, name_id: &str) -> Option<PrincipalId> {
        let subject = UpstreamSubject::new(&self.idp.entity_id(), name_id).unwrap();
        let link = self
            .app
            .store
            .federation()
            .get_federation_link(&self.idp_id, &subject);
        link.await.unwrap().map(|link| link.user_id)
    }

    /// The audit events filed under the company, oldest first.
    pub async fn company_events(&self) -> Vec<AuditKind> {
        let subject = AuditSubject::Principal(self.company.id);
        let mut events = crate::audit::events_of(&self.app, subject).await;
        events.reverse();
        events.into_iter().map(|event| event.kind).collect()
    }

    /// The reasons of the company's `federation.refused` events, oldest first.
    pub async fn refusals(&self) -> Vec<String> {
        self.company_events()
            .await
            .into_iter()
            .filter_map(|kind| match kind {
                AuditKind::FederationRefused { reason, .. } => Some(reason),
                _ => None,
            })
            .collect()
    }
}

/// The `Set-Cookie` values of an answer, as `name=value` for a `Cookie` header.
pub fn cookies_set(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .map(str::to_owned)
        .collect()
}
