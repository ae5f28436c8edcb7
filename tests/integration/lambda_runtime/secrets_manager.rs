//! The token function as deployed reads its secrets: the signing keys from the Secrets Manager
//! secret `SIGNING_KEYS_SECRET_ARN` names and the SMTP URL from `SMTP_URL_SECRET_ARN`, both on the
//! local emulator (moto, started for KMS, serves Secrets Manager too), with an empty `DATA_DIR`
//! that holds no key to fall back on. A `client_credentials` token is signed with the secret's
//! key; a one-time password is mailed through the secret's SMTP server.

use std::sync::Arc;

use aws_sdk_secretsmanager::config::{Credentials, Region};
use token_core::admin::{self, NewClient, NewUser};
use token_core::context::Context;
use token_core::signing::{self, KeyRingDocument, LOCAL_KEY_FILE};
use token_domain::clock::SystemClock;
use token_domain::random::OsRandom;
use token_domain::secrets::Secret;
use token_domain::{Geolocation, Login, Scopes, UserStatus};

use super::function::{FunctionEnv, RunningFunction};
use super::{http_api_event, GEOLOCATION};
use crate::support::smtp_server::start_smtp_server;

const ADDRESS: &str = "secrets@lambda-runtime.example";

fn moto_endpoint() -> String {
    std::env::var("KMS_ENDPOINT")
        .ok()
        .filter(|v| !v.is_empty())
        .expect(
            "KMS_ENDPOINT: `export KMS_ENDPOINT=$(infra/kms-local.sh start)` (infra/test.sh does)",
        )
}

/// A new secret on the emulator holding `value`: its ARN.
async fn secret(client: &aws_sdk_secretsmanager::Client, name: &str, value: &str) -> String {
    client
        .create_secret()
        .name(format!("{name}-{}", uuid::Uuid::new_v4().simple()))
        .secret_string(value)
        .send()
        .await
        .expect("create a secret on the local Secrets Manager")
        .arn()
        .expect("its ARN")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn the_token_function_signs_and_mails_with_what_secrets_manager_holds() {
    let Some(store) = crate::support::dynamodb::fresh_table().await else {
        return;
    };
    let endpoint = moto_endpoint();
    // The service's own SDK set-up (its HTTPS client), sent to the emulator.
    let sdk = token_store::aws_sdk::config_loader()
        .endpoint_url(&endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "test"))
        .load()
        .await;
    let secrets = aws_sdk_secretsmanager::Client::new(&sdk);
    // The signing-key document, made where the function cannot see it.
    let elsewhere = tempfile::tempdir().unwrap();
    let kid = signing::rotate_local(elsewhere.path(), &OsRandom, &SystemClock).unwrap();
    let document = std::fs::read_to_string(elsewhere.path().join(LOCAL_KEY_FILE)).unwrap();
    let parsed: KeyRingDocument = serde_json::from_str(&document).unwrap();
    assert_eq!(
        parsed.keys.last().map(|k| k.kid.as_str()),
        Some(kid.as_str())
    );
    let smtp = start_smtp_server();
    let keys_arn = secret(&secrets, "signing-keys", &document).await;
    let smtp_arn = secret(&secrets, "smtp-url", &smtp.url()).await;

    let ctx = Context::new(Arc::new(store.clone()));
    let geolocation = Geolocation::parse(GEOLOCATION).unwrap();
    let client = admin::create_client(
        &ctx,
        NewClient::named("secrets app", Scopes::parse("read").unwrap()),
    )
    .await
    .unwrap();
    let user = NewUser {
        login: Login::parse("secrets-user").unwrap(),
        password: Secret::new("a password of the user's"),
        company_id: None,
        is_admin: false,
        geolocation,
        status: UserStatus::Active,
        email: Some(ADDRESS.to_owned()),
    };
    admin::create_user(&ctx, user).await.unwrap();

    let env = FunctionEnv {
        endpoint: crate::support::dynamodb::endpoint().unwrap(),
        table_name: store.table_name().to_owned(),
        data_dir: tempfile::Builder::new()
            .prefix("secrets-")
            .tempdir()
            .unwrap(),
    };
    let function = RunningFunction::start_with(
        "token",
        &env,
        &[
            ("SIGNING_KEYS_SECRET_ARN", keys_arn.as_str()),
            ("SMTP_URL_SECRET_ARN", smtp_arn.as_str()),
            ("AWS_ENDPOINT_URL_SECRETS_MANAGER", endpoint.as_str()),
        ],
    )
    .await;
    let basic = {
        use base64::Engine;
        let pair = format!("{}:{}", client.client.id, client.secret.expose());
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    };

    let grant = [("grant_type", "client_credentials")];
    let (issued, _) = function
        .invoke(http_api_event("/v0/token", &basic, Some(&grant)))
        .await;
    assert_eq!(issued.status, 200, "{}", issued.body);
    let token = issued.body["access_token"].as_str().unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(
        header.kid.as_deref(),
        Some(kid.as_str()),
        "signed with the secret's key"
    );
    assert!(
        !env.data_dir.path().join(LOCAL_KEY_FILE).exists(),
        "no local key made instead"
    );

    let form = [("channel_type", "email"), ("channel_handle", ADDRESS)];
    let (requested, _) = function
        .invoke(http_api_event("/oauth2/v0/otp", &basic, Some(&form)))
        .await;
    assert_eq!(requested.status, 200, "{}", requested.body);
    let mails = smtp.wait_for(1).await;
    let text = mails[0].part("text/plain").unwrap_or_default();
    assert!(
        text.split(|c: char| !c.is_ascii_digit())
            .any(|run| run.len() == 6),
        "a one-time password in the mail: {text:?}"
    );
}
