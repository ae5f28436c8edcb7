//! What a test creates before it starts: clients, users and companies made through the same
//! administration functions `tokenctl` calls, and the tokens most tests begin with.

use reqwest::StatusCode;
use serde_json::Value;
use token_core::admin::{self, NewClient, NewUser};
use token_domain::secrets::Secret;
use token_domain::{Company, Login, Scopes, User, UserStatus};

use super::{TestApp, TestClient};

impl TestApp {
    pub async fn create_client(&self, scopes: &str) -> TestClient {
        self.create_client_with(NewClient::named("test app", Scopes::parse(scopes).unwrap()))
            .await
    }

    /// A first-party app (the administration console): only its users' tokens may request company
    /// auth tokens (docs/decisions.md, Company auth tokens).
    pub async fn create_first_party_client(&self, scopes: &str) -> TestClient {
        self.create_client_with(NewClient {
            first_party: true,
            ..NewClient::named("admin console", Scopes::parse(scopes).unwrap())
        })
        .await
    }

    pub async fn create_client_with(&self, new: NewClient) -> TestClient {
        let created = admin::create_client(self.ctx(), new).await.unwrap();
        TestClient {
            id: created.client.id.to_string(),
            secret: created.secret.expose().to_owned(),
        }
    }

    pub async fn create_user(&self, login: &str, password: &str) -> User {
        self.create_user_with(login, password, |_| {}).await
    }

    /// A user living here, adjusted by `customise` before creation.
    pub async fn create_user_with(
        &self,
        login: &str,
        password: &str,
        customise: impl FnOnce(&mut NewUser),
    ) -> User {
        let mut new = NewUser {
            login: Login::parse(login).unwrap(),
            password: Secret::new(password),
            company_id: None,
            is_admin: false,
            geolocation: self.geolocation(),
            status: UserStatus::Active,
            email: None,
        };
        customise(&mut new);
        admin::create_user(self.ctx(), new).await.unwrap()
    }

    pub async fn create_company(&self, name: &str) -> Company {
        admin::create_company(self.ctx(), name, self.geolocation())
            .await
            .unwrap()
    }

    /// Password grant for a user; panics unless it succeeds. Returns the token response.
    pub async fn user_tokens(&self, client: &TestClient, login: &str, password: &str) -> Value {
        let (status, body) = self.password_grant(client, login, password, &[]).await;
        assert_eq!(status, StatusCode::OK, "password grant: {body}");
        body
    }

    /// Application token (client_credentials); panics unless it succeeds.
    pub async fn app_token(&self, client: &TestClient) -> String {
        let (status, body) = self
            .token(&[
                ("grant_type", "client_credentials"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
            ])
            .await;
        assert_eq!(status, StatusCode::OK, "client_credentials: {body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// An application token for the app's own secrets API: `client_credentials` naming
    /// `app-mgmt.secrets` (part 13).
    pub async fn secrets_token(&self, client: &TestClient) -> String {
        self.secrets_token_answer(client).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The whole token response of [`Self::secrets_token`].
    pub async fn secrets_token_answer(&self, client: &TestClient) -> serde_json::Value {
        let (status, body) = self
            .token(&[
                ("grant_type", "client_credentials"),
                ("client_id", &client.id),
                ("client_secret", &client.secret),
                ("scope", "app-mgmt.secrets"),
            ])
            .await;
        assert_eq!(status, StatusCode::OK, "client_credentials: {body}");
        body
    }
}
