//! Demo data for the local server: one of everything, so every flow can be tried with `curl`.
//!
//! Created on the first start and remembered in `DATA_DIR/demo.json`, credentials included, so
//! later starts print the same ones; each start moves the demo company and users to its own
//! geolocation. This is local demo data only: the production functions never call this module.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use token_core::admin::{self, NewClient, NewUser};
use token_core::context::Context;
use token_domain::random::RandomExt;
use token_domain::secrets::{Secret, TokenHash};
use token_domain::{
    ClientId, ConsumerKey, Geolocation, GrantType, LegacyToken, Login, PrincipalId, PrincipalType,
    Scopes, UserStatus,
};

pub const DEMO_FILE: &str = "demo.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DemoData {
    pub client_id: String,
    pub client_secret: String,
    /// The first-party "Admin console" the administrator signs in to: only its users' tokens may
    /// request company auth tokens. Empty in a `demo.json` written before it existed (added on
    /// the next start).
    #[serde(default)]
    pub console_client_id: String,
    #[serde(default)]
    pub console_client_secret: String,
    pub company_id: String,
    pub admin_login: String,
    pub admin_password: String,
    pub user_login: String,
    pub user_password: String,
    pub consumer_key: String,
    pub legacy_user_token: String,
    pub legacy_wsadmin_token: String,
    /// The demo company's SCIM provisioning token (`/scim/v2`). Empty in a `demo.json` written
    /// before it existed (added on the next start).
    #[serde(default)]
    pub scim_token: String,
}

/// Loads the demo data, creating it (and the file) if the store does not have it yet.
pub async fn ensure(
    ctx: &Context,
    geolocation: &Geolocation,
    data_dir: &Path,
) -> anyhow::Result<DemoData> {
    let path = data_dir.join(DEMO_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let mut demo: DemoData = serde_json::from_str(&text)?;
        if ctx
            .store
            .clients()
            .get_client(&ClientId::parse(&demo.client_id)?)
            .await?
            .is_some()
        {
            if demo.scim_token.is_empty() {
                let company = PrincipalId::parse(&demo.company_id)?;
                demo.scim_token = admin::create_provisioning_token(ctx, &company, None)
                    .await?
                    .token;
                write_private(&path, &serde_json::to_string_pretty(&demo)?)?;
            }
            if demo.console_client_id.is_empty() {
                let console = create_console(ctx).await?;
                demo.console_client_id = console.client.id.to_string();
                console
                    .secret
                    .expose()
                    .clone_into(&mut demo.console_client_secret);
                write_private(&path, &serde_json::to_string_pretty(&demo)?)?;
            }
            follow_geolocation(ctx, &demo, geolocation).await?;
            return Ok(demo);
        }
    }
    let demo = create(ctx, geolocation).await?;
    write_private(&path, &serde_json::to_string_pretty(&demo)?)?;
    Ok(demo)
}

/// Moves the demo company and its users to this start's geolocation: a start on another `PORT`
/// is another geolocation (`http://127.0.0.1:$PORT` by default), and a user of the first would
/// be told that they live elsewhere (code 16) on every sign-in.
async fn follow_geolocation(
    ctx: &Context,
    demo: &DemoData,
    geolocation: &Geolocation,
) -> anyhow::Result<()> {
    let principals = ctx.store.principals();
    if let Some(mut company) = principals
        .get_company(&PrincipalId::parse(&demo.company_id)?)
        .await?
    {
        if company.geolocation != *geolocation {
            company.geolocation = geolocation.clone();
            principals.put_company(&company).await?;
        }
    }
    for login in [&demo.admin_login, &demo.user_login] {
        if let Some(mut user) = principals.get_user_by_login(&Login::parse(login)?).await? {
            if user.geolocation != *geolocation {
                user.geolocation = geolocation.clone();
                principals.put_user(&user).await?;
            }
        }
    }
    Ok(())
}

/// The demo user's address: its one-time passwords land in `DATA_DIR/outbox/` locally.
const DEMO_USER_EMAIL: &str = "user@demo.example";

/// The administration console: a first-party client that only signs users in.
async fn create_console(ctx: &Context) -> anyhow::Result<admin::CreatedClient> {
    let mut console = NewClient::named("Admin console", Scopes::parse("profile")?);
    console.first_party = true;
    console.grants = [GrantType::Password, GrantType::RefreshToken].into();
    Ok(admin::create_client(ctx, console).await?)
}

async fn create(ctx: &Context, geolocation: &Geolocation) -> anyhow::Result<DemoData> {
    let scopes = Scopes::parse("accounting payroll profile")?;
    let mut new_client = NewClient::named("Demo App", scopes.clone());
    new_client.connect_url = Some("https://app.example.com/connect?source=demo".into());
    let client = admin::create_client(ctx, new_client).await?;
    let console = create_console(ctx).await?;

    let company = admin::create_company(ctx, "Demo Company", geolocation.clone()).await?;
    admin::enable_company_for_client(ctx, &company.id, &client.client.id).await?;

    let admin_password = ctx.random.opaque_token()[..16].to_owned();
    let admin_user = admin::create_user(
        ctx,
        NewUser {
            login: Login::parse("admin@demo.example")?,
            password: Secret::new(admin_password.clone()),
            company_id: Some(company.id),
            is_admin: true,
            geolocation: geolocation.clone(),
            status: UserStatus::Active,
            email: None,
        },
    )
    .await?;
    let user_password = ctx.random.opaque_token()[..16].to_owned();
    let user = admin::create_user(
        ctx,
        NewUser {
            login: Login::parse("user@demo.example")?,
            password: Secret::new(user_password.clone()),
            company_id: Some(company.id),
            is_admin: false,
            geolocation: geolocation.clone(),
            status: UserStatus::Active,
            // One-time passwords reach the demo user here.
            email: Some(DEMO_USER_EMAIL.to_owned()),
        },
    )
    .await?;

    let consumer_key = ConsumerKey::parse("demo-consumer-key")?;
    admin::link_legacy_app(ctx, consumer_key.clone(), &client.client.id).await?;
    let legacy_user_token = format!("legacy-{}", ctx.random.opaque_token());
    let legacy_wsadmin_token = format!("legacy-wsadmin-{}", ctx.random.opaque_token());
    ctx.store
        .legacy()
        .put_legacy_tokens(&[
            LegacyToken {
                token_hash: TokenHash::of(&legacy_user_token),
                consumer_key: consumer_key.clone(),
                principal_type: PrincipalType::User,
                principal_id: user.id,
                scopes: scopes.clone(),
                wsadmin: false,
                company_id: None,
                expires_at: None,
            },
            LegacyToken {
                token_hash: TokenHash::of(&legacy_wsadmin_token),
                consumer_key: consumer_key.clone(),
                principal_type: PrincipalType::User,
                principal_id: admin_user.id,
                scopes,
                wsadmin: true,
                company_id: Some(company.id),
                expires_at: None,
            },
        ])
        .await?;

    let scim_token = admin::create_provisioning_token(ctx, &company.id, None)
        .await?
        .token;
    Ok(DemoData {
        scim_token,
        client_id: client.client.id.to_string(),
        client_secret: client.secret.expose().to_owned(),
        console_client_id: console.client.id.to_string(),
        console_client_secret: console.secret.expose().to_owned(),
        company_id: company.id.to_string(),
        admin_login: admin_user.login.to_string(),
        admin_password,
        user_login: user.login.to_string(),
        user_password,
        consumer_key: consumer_key.to_string(),
        legacy_user_token,
        legacy_wsadmin_token,
    })
}

fn write_private(path: &PathBuf, contents: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(contents.as_bytes())
}

impl DemoData {
    /// The welcome text: credentials and a ready-to-paste `curl` for each flow.
    pub fn instructions(&self, base: &str) -> String {
        let DemoData {
            client_id: id,
            client_secret: secret,
            console_client_id: console_id,
            console_client_secret: console_secret,
            company_id: company,
            admin_login,
            admin_password,
            user_login,
            user_password,
            consumer_key,
            legacy_user_token,
            legacy_wsadmin_token,
            scim_token,
        } = self;
        format!(
            r#"Demo data (local only; kept in {DEMO_FILE} under DATA_DIR):
  client_id      {id}
  client_secret  {secret}
  admin console  {console_id} / {console_secret} (first-party)
  company_id     {company}
  administrator  {admin_login} / {admin_password}
  user           {user_login} / {user_password}
  legacy app     consumer key {consumer_key}
  SCIM token     {scim_token} (the company's provisioning token, /scim/v2)

1. Application token (client_credentials):
curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=client_credentials

2. User tokens (password grant):
curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=password -d username={user_login} -d password={user_password}

3. Refresh (paste the refresh_token from 2; every use rotates it):
curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=refresh_token -d refresh_token=REFRESH_TOKEN

4. Exchange an old refresh token (APP_TOKEN = access_token from 1):
curl -s '{base}/appmgmt/v0/legacyApps/{consumer_key}/exchangeRefreshToken/me' -H "Authorization: Bearer APP_TOKEN" -d token={legacy_user_token} -d secret={secret}
   WSAdmin token to a company token: the same with '?returnType=companyToken' and -d token={legacy_wsadmin_token}

5. Company auth token. The administrator signs in to the Admin console (a first-party client:
   only its tokens may request company auth tokens):
curl -s {base}/v0/token -u '{console_id}:{console_secret}' -d grant_type=password -d username={admin_login} -d password={admin_password}
   then, with ADMIN_TOKEN = that access_token:
curl -s '{base}/profile-service/v1/keys/principals/{company}/authtoken/?client_id={id}' -X POST -H "Authorization: Bearer ADMIN_TOKEN"
   add &redirect=true to get the 301 to the app's Connect URL instead.

6. Company tokens (AUTH_TOKEN = token from 5):
curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=password -d credtype=authtoken -d username={company} -d password=AUTH_TOKEN

7. One-time password by e-mail, then user tokens with it (OTP = the six digits in the mail):
curl -s {base}/oauth2/v0/otp -u '{id}:{secret}' -d channel_type=email -d channel_handle={DEMO_USER_EMAIL}
curl -s {base}/v0/token -u '{id}:{secret}' -d grant_type=otp -d channel_type=email -d channel_handle={DEMO_USER_EMAIL} -d otp=OTP
"#
        )
    }
}
