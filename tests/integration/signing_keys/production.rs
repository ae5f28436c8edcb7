//! The signing keys as a `SigningKeys=kms` stack has them: the ring on DynamoDB, its keys in KMS
//! (the local moto KMS), rotated by the built `rotate-keys` function on the schedule's event and
//! by `tokenctl keys rotate`, and the built token function signing with them. The KMS keys must
//! carry the tag that the template's `kms:Sign` condition names, or no function could sign in
//! AWS; a retired key past its tokens' lifetime leaves the ring and its KMS key is scheduled for
//! deletion; each rotation is a `key.rotated` audit event on the table.
//!
//! Between rotations the stored ring is moved back in time (every key's times, sealed again with
//! the deployment's server secret), as if the schedule's interval had passed: the functions and
//! the tool rotate at the real time.

use std::sync::Arc;

use aws_sdk_kms::types::KeyState as KmsKeyState;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use serde_norway::Value as Yaml;
use token_core::admin::{self, NewClient};
use token_core::context::Context;
use token_core::signing::authenticated::{open_ring, seal_ring, Unauthenticated};
use token_core::signing::kms::RING_TAG;
use token_core::signing::ring::{
    KeyState, PrivateKey, RingDocument, MIN_NEXT_SECONDS, RETIRED_KEPT_SECONDS,
};
use token_core::signing::{ServerSecret, LOCAL_KEY_FILE};
use token_domain::Scopes;
use token_store::dynamodb::DynamoStore;
use token_store::{RingWrite, SigningKeyRingStore};

use crate::lambda_runtime::function::{FunctionEnv, RunningFunction};
use crate::lambda_runtime::http_api_event;
use crate::support::signing_lifecycle as lifecycle;
use crate::tokenctl::output::{assert_success, str_field};
use crate::tokenctl::target::{Backend, Target};

/// The tag key every `kms:Sign` statement of template.yaml conditions on
/// (`aws:ResourceTag/<key>`), each with the stack's name as its value, which is also the
/// `SIGNING_KEY_RING_NAME` the template gives every function.
fn template_signing_tag() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml");
    let template: Yaml =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).expect("template.yaml");
    let stack_name = |value: &Yaml| {
        matches!(value, Yaml::Tagged(tagged)
            if tagged.tag == "Ref" && tagged.value.as_str() == Some("AWS::StackName"))
    };
    let ring_name =
        &template["Globals"]["Function"]["Environment"]["Variables"]["SIGNING_KEY_RING_NAME"];
    assert!(
        stack_name(ring_name),
        "SIGNING_KEY_RING_NAME: {ring_name:?}"
    );

    let mut keys = Vec::new();
    sign_conditions(&template["Resources"], &mut keys);
    assert!(!keys.is_empty(), "no kms:Sign statement in template.yaml");
    let mut names = Vec::new();
    for (key, value) in &keys {
        assert!(stack_name(value), "{key}: {value:?}");
        names.push(key.clone());
    }
    names.dedup();
    assert_eq!(names.len(), 1, "one tag for every role: {names:?}");
    names.remove(0)
}

/// The `aws:ResourceTag/<key>` conditions of every statement allowing `kms:Sign` under `node`,
/// both branches of an `!If` included.
fn sign_conditions(node: &Yaml, found: &mut Vec<(String, Yaml)>) {
    match node {
        Yaml::Mapping(map) => {
            let allows_sign = match &node["Action"] {
                Yaml::String(action) => action == "kms:Sign",
                Yaml::Sequence(actions) => actions.iter().any(|a| a.as_str() == Some("kms:Sign")),
                _ => false,
            };
            if allows_sign {
                let Yaml::Mapping(equals) = &node["Condition"]["StringEquals"] else {
                    panic!("a kms:Sign statement without a StringEquals condition: {node:?}");
                };
                for (key, value) in equals {
                    if let Some(tag) = key
                        .as_str()
                        .and_then(|k| k.strip_prefix("aws:ResourceTag/"))
                    {
                        found.push((tag.to_owned(), value.clone()));
                    }
                }
            }
            map.values().for_each(|value| sign_conditions(value, found));
        }
        Yaml::Sequence(items) => items.iter().for_each(|item| sign_conditions(item, found)),
        Yaml::Tagged(tagged) => sign_conditions(&tagged.value, found),
        _ => {}
    }
}

async fn kms_client(endpoint: &str) -> aws_sdk_kms::Client {
    let config = token_store::aws_sdk::config_loader()
        .endpoint_url(endpoint)
        .region(aws_sdk_kms::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_kms::config::Credentials::new(
            "local", "local", None, None, "test",
        ))
        .load()
        .await;
    aws_sdk_kms::Client::new(&config)
}

/// The KMS key behind `kid`: its tags and its state.
async fn kms_key(
    kms: &aws_sdk_kms::Client,
    ring: &RingDocument,
    kid: &str,
) -> (Vec<(String, String)>, KmsKeyState) {
    let key = ring
        .keys
        .iter()
        .find(|k| k.kid == kid)
        .expect("the kid in the ring");
    let PrivateKey::Kms { key_arn } = &key.private else {
        panic!("{kid} is not a KMS key: {:?}", key.private);
    };
    let tags = kms
        .list_resource_tags()
        .key_id(key_arn)
        .send()
        .await
        .unwrap();
    let tags = tags
        .tags()
        .iter()
        .map(|t| (t.tag_key().to_owned(), t.tag_value().to_owned()))
        .collect();
    let described = kms.describe_key().key_id(key_arn).send().await.unwrap();
    let state = described
        .key_metadata()
        .unwrap()
        .key_state()
        .unwrap()
        .clone();
    (tags, state)
}

async fn stored(store: &DynamoStore, secret: &ServerSecret) -> (u64, RingDocument) {
    let stored = store
        .load_signing_key_ring()
        .await
        .unwrap()
        .expect("a ring");
    let ring = open_ring(&stored.document, secret, Unauthenticated::Refuse).unwrap();
    (stored.version, ring)
}

fn kids(ring: &RingDocument, state: KeyState) -> Vec<String> {
    ring.keys
        .iter()
        .filter(|k| k.state == state)
        .map(|k| k.kid.clone())
        .collect()
}

/// Moves every time of the stored ring `seconds` into the past.
async fn backdate(store: &DynamoStore, secret: &ServerSecret, seconds: i64) {
    let (version, mut ring) = stored(store, secret).await;
    for key in &mut ring.keys {
        key.created -= seconds;
        key.activated = key.activated.map(|at| at - seconds);
        key.retired = key.retired.map(|at| at - seconds);
    }
    let document = seal_ring(&ring, secret).unwrap();
    let written = store
        .replace_signing_key_ring(Some(version), &document)
        .await
        .unwrap();
    assert!(matches!(written, RingWrite::Written { .. }), "{written:?}");
}

fn scheduled_event() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/eventbridge/scheduled_rotation.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn kms_keys_on_dynamodb_rotate_by_schedule_and_tokenctl_and_sign_in_the_function() {
    let Some(mut tool) = Target::dynamodb().await else {
        return;
    };
    let kms_endpoint = super::kms_endpoint();
    let kms = kms_client(&kms_endpoint).await;
    let tag = template_signing_tag();
    assert_eq!(tag, RING_TAG);
    // The stack's name, as the template names the ring.
    let ring_name = format!("stack-{}", uuid::Uuid::new_v4().simple());
    let kms_env = [
        ("SIGNING_KEYS", "kms".to_owned()),
        ("KMS_ENDPOINT", kms_endpoint.clone()),
        ("SIGNING_KEY_RING_NAME", ring_name.clone()),
    ];
    tool.env.extend(kms_env.iter().cloned());
    let kms_env: Vec<(&str, &str)> = kms_env.iter().map(|(k, v)| (*k, v.as_str())).collect();

    // A KMS deployment's secret holds the server secret alone, for the functions and the tool.
    let secret_document = lifecycle::secret_only();
    let secret = secret_document.server_secret().unwrap();
    let env = FunctionEnv {
        endpoint: crate::support::dynamodb::endpoint().unwrap(),
        table_name: tool
            .env
            .iter()
            .find(|(k, _)| *k == "TABLE_NAME")
            .unwrap()
            .1
            .clone(),
        data_dir: tempfile::Builder::new()
            .prefix("kms-ring-")
            .tempdir()
            .unwrap(),
    };
    for dir in [tool.dir.path(), env.data_dir.path()] {
        let text = serde_json::to_string(&secret_document).unwrap();
        std::fs::write(dir.join(LOCAL_KEY_FILE), text).unwrap();
    }
    let Backend::Dynamo(store) = &tool.backend else {
        unreachable!()
    };
    let store = store.clone();

    // The first scheduled rotation: an empty ring gets an active and a next KMS key, both
    // tagged with the ring's name.
    let rotate = RunningFunction::start_with("rotate-keys", &env, &kms_env).await;
    let (first_run, _) = rotate.invoke_raw(scheduled_event()).await;
    assert_eq!(
        first_run["result"]["outcome"], "next key published",
        "{first_run}"
    );
    let (_, ring) = stored(&store, &secret).await;
    let (key1, key2) = (kids(&ring, KeyState::Active), kids(&ring, KeyState::Next));
    assert_eq!(
        (key1.len(), key2.len(), ring.keys.len()),
        (1, 1, 2),
        "{ring:?}"
    );
    let (key1, key2) = (key1[0].clone(), key2[0].clone());
    for kid in [&key1, &key2] {
        let (tags, state) = kms_key(&kms, &ring, kid).await;
        assert_eq!(tags, [(tag.clone(), ring_name.clone())], "{kid}");
        assert_eq!(state, KmsKeyState::Enabled, "{kid}");
    }

    // The second, once the next key has been published long enough: it signs, the first key is
    // retired, a new next key is made in KMS.
    backdate(&store, &secret, MIN_NEXT_SECONDS).await;
    let (second_run, _) = rotate.invoke_raw(scheduled_event()).await;
    assert_eq!(second_run["result"]["outcome"], "rotated", "{second_run}");
    assert_eq!(second_run["active"], key2.as_str(), "{second_run}");
    let (_, ring) = stored(&store, &secret).await;
    assert_eq!(kids(&ring, KeyState::Retired), [key1.as_str()]);
    let key3 = str_field(&second_run, "next").to_owned();
    assert_eq!(
        kms_key(&kms, &ring, &key3).await.0,
        [(tag.clone(), ring_name.clone())]
    );
    drop(rotate);

    // `tokenctl keys list` on the table shows the three states.
    let listed = tool.json(&["keys", "list"]);
    let states: Vec<(&str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (str_field(k, "kid"), str_field(k, "state")))
        .collect();
    assert_eq!(
        states,
        [
            (key1.as_str(), "retired"),
            (key2.as_str(), "active"),
            (key3.as_str(), "next")
        ]
    );

    // Once every token the first key signed has expired, `tokenctl keys rotate` removes it and
    // schedules its KMS key for deletion; the key it retires is kept.
    backdate(&store, &secret, RETIRED_KEPT_SECONDS).await;
    let rotated = tool.json(&["keys", "rotate"]);
    assert_eq!(str_field(&rotated, "active"), key3, "{rotated}");
    let key4 = str_field(&rotated, "next").to_owned();
    let (_, after) = stored(&store, &secret).await;
    let states: Vec<(String, KeyState)> = after
        .keys
        .iter()
        .map(|k| (k.kid.clone(), k.state))
        .collect();
    assert_eq!(
        states,
        [
            (key2.clone(), KeyState::Retired),
            (key3.clone(), KeyState::Active),
            (key4.clone(), KeyState::Next)
        ]
    );
    assert_eq!(
        kms_key(&kms, &ring, &key1).await.1,
        KmsKeyState::PendingDeletion
    );
    assert_eq!(kms_key(&kms, &after, &key2).await.1, KmsKeyState::Enabled);
    assert_eq!(
        kms_key(&kms, &after, &key4).await.0,
        [(tag.clone(), ring_name.clone())]
    );

    // The token function signs with the active KMS key; its JWK Set publishes the ring's keys
    // and no longer the removed one.
    let ctx = Context::new(Arc::new(store.clone()));
    let client = admin::create_client(
        &ctx,
        NewClient::named("kms app", Scopes::parse("read").unwrap()),
    )
    .await
    .unwrap();
    let token = RunningFunction::start_with("token", &env, &kms_env).await;
    let credentials = format!("{}:{}", client.client.id, client.secret.expose());
    let basic = format!("Basic {}", STANDARD.encode(credentials));
    let grant = [("grant_type", "client_credentials")];
    let (answer, _) = token
        .invoke(http_api_event("/v0/token", &basic, Some(&grant)))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let access = str_field(&answer.body, "access_token").to_owned();
    let mut jwks_event = http_api_event("/oauth2/v0/jwks", "none", None);
    jwks_event["requestContext"]["http"]["method"] = json!("GET");
    let (jwks, _) = token.invoke(jwks_event).await;
    assert_eq!(jwks.status, 200, "{}", jwks.body);
    let mut published: Vec<&str> = jwks.body["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    published.sort_unstable();
    let mut ring_keys = [key2.as_str(), key3.as_str(), key4.as_str()];
    ring_keys.sort_unstable();
    assert_eq!(published, ring_keys, "{}", jwks.body);
    assert_eq!(
        jsonwebtoken::decode_header(&access).unwrap().kid.as_deref(),
        Some(key3.as_str())
    );
    let claims: Value = super::verify_independently(&access, &jwks.body);
    assert_eq!(claims["client_id"], client.client.id.to_string());

    // Each of the three rotations is an audit event of the deployment, on the table.
    let args = ["--json", "audit", "--deployment"];
    let out = tool.output(&args);
    assert_success(&out, &args);
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let rotations: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["active"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rotations,
        [
            ("key.rotated", key3.as_str()),
            ("key.rotated", key2.as_str()),
            ("key.rotated", key1.as_str())
        ],
        "newest first: {events:?}"
    );
}
