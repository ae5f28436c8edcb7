//! The TTL attribute DynamoDB expires items by: on every expiring item, as a top-level number,
//! renewed where the record's expiry moves, absent where a record never expires; and enabled
//! on the table.

use std::collections::HashMap;

use crate::support::dynamodb::fresh_table;
use token_domain::clock::UnixTime;
use token_domain::secrets::TokenHash;
use token_domain::{
    FederationLink, IdpId, Login, PendingUpstreamRequest, PrincipalId, SealedSecret,
    UpstreamSubject, ACCESS_TOKEN_TTL_SECONDS, AUTH_TOKEN_TTL_SECONDS,
    UPSTREAM_REQUEST_TTL_SECONDS,
};
use token_store::dynamodb::sdk::types::{AttributeValue, TimeToLiveStatus};
use token_store::dynamodb::{DynamoStore, TTL_ATTRIBUTE};
use token_store::prelude::*;
use token_store::AttemptLimit;
use token_store_conformance::fixtures::stored_application_token;
use token_store_conformance::records::{
    auth_token, legacy_token, now, rotation, unique_login, Bundle,
};
use token_store_conformance::writes::{rotate_refresh_token, Rotated};

type Item = HashMap<String, AttributeValue>;

async fn raw_item(store: &DynamoStore, pk: &str, sk: &str) -> Item {
    store
        .client()
        .get_item()
        .table_name(store.table_name())
        .key("pk", AttributeValue::S(pk.to_owned()))
        .key("sk", AttributeValue::S(sk.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem")
        .item
        .unwrap_or_else(|| panic!("no item {pk} / {sk}"))
}

/// The item a record keyed by a token hash is stored as: partition `{kind}#{hex}`, sort `kind`.
async fn hashed_item(store: &DynamoStore, kind: &str, hash: &TokenHash) -> Item {
    raw_item(store, &format!("{kind}#{}", hash.to_hex()), kind).await
}

#[track_caller]
fn assert_ttl(item: &Item, expected: UnixTime, what: &str) {
    assert_eq!(
        item.get(TTL_ATTRIBUTE),
        Some(&AttributeValue::N(expected.to_string())),
        "{what}: `{TTL_ATTRIBUTE}` must be a top-level number holding the expiry in epoch seconds"
    );
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn expiring_items_carry_the_ttl_attribute() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let refresh_expires_at = now + 180 * 86_400;

    let bundle = Bundle::new(now, refresh_expires_at);
    bundle.create(&store).await;
    let (family, refresh) = (&bundle.family, &bundle.refresh);
    let family_pk = format!("FAMILY#{}", family.id);
    let family_item = raw_item(&store, &family_pk, "FAMILY").await;
    assert_ttl(&family_item, refresh_expires_at, "family");
    assert_eq!(
        family_item.get("current_token"),
        Some(&AttributeValue::S(refresh.token_hash.to_hex())),
        "rotation's condition attribute is top-level"
    );
    assert_eq!(
        family_item.get("generation"),
        Some(&AttributeValue::N("0".into()))
    );
    assert!(
        !family_item.contains_key("revoked_at"),
        "a live family has no revoked_at attribute (not even NULL)"
    );
    assert_ttl(
        &hashed_item(&store, "REFRESH", &refresh.token_hash).await,
        refresh_expires_at,
        "refresh token",
    );
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", bundle.access.jti), "ACCESS").await,
        now + ACCESS_TOKEN_TTL_SECONDS,
        "access token of a family",
    );

    // Rotation renews the family's expiry, which is its successor's (it has no item of its own).
    let later = now + 10;
    let (successor, rotated_access) = bundle.successor(later, 1);
    assert_eq!(
        rotate_refresh_token(
            &store,
            rotation(
                family.id,
                &refresh.token_hash,
                &successor,
                &rotated_access,
                later,
            ),
            vec![],
        )
        .await,
        Rotated::Rotated
    );
    let family_item = raw_item(&store, &family_pk, "FAMILY").await;
    assert_ttl(&family_item, successor.expires_at, "family after rotation");
    assert_eq!(
        family_item.get("generation"),
        Some(&AttributeValue::N("1".into()))
    );
    assert_eq!(
        family_item.get("rotated_at"),
        Some(&AttributeValue::N(later.to_string())),
        "the family records when it rotated"
    );
    assert!(
        !hashed_item(&store, "REFRESH", &refresh.token_hash)
            .await
            .contains_key("rotated_at"),
        "the rotated token's record is left as it was: one write decides a rotation"
    );

    store
        .families()
        .revoke_family(&family.id, later + 1)
        .await
        .expect("revoke_family");
    assert_eq!(
        raw_item(&store, &family_pk, "FAMILY")
            .await
            .get("revoked_at"),
        Some(&AttributeValue::N((later + 1).to_string()))
    );

    let application = stored_application_token(&store, now).await;
    assert_ttl(
        &raw_item(&store, &format!("ACCESS#{}", application.jti), "ACCESS").await,
        application.expires_at,
        "application access token",
    );

    let auth = auth_token(now, now + AUTH_TOKEN_TTL_SECONDS);
    store
        .auth_tokens()
        .put_auth_token(&auth)
        .await
        .expect("put_auth_token");
    assert_ttl(
        &hashed_item(&store, "AUTHTOKEN", &auth.token_hash).await,
        now + AUTH_TOKEN_TTL_SECONDS,
        "company auth token",
    );

    let (expiring, forever) = (legacy_token(Some(now + 3600)), legacy_token(None));
    store
        .legacy()
        .put_legacy_tokens(&[expiring.clone(), forever.clone()])
        .await
        .expect("put_legacy_tokens");
    assert_ttl(
        &hashed_item(&store, "LEGACY", &expiring.token_hash).await,
        now + 3600,
        "legacy token with an expiry",
    );
    assert!(
        !hashed_item(&store, "LEGACY", &forever.token_hash)
            .await
            .contains_key(TTL_ATTRIBUTE),
        "a legacy token valid until exchanged has no TTL attribute"
    );

    let login = Login::parse(&unique_login()).unwrap();
    let limit = AttemptLimit {
        threshold: 5,
        window_seconds: 900,
    };
    store
        .lockout()
        .register_login_attempt(&login, limit, now)
        .await
        .expect("register_login_attempt");
    let failures = store
        .client()
        .query()
        .table_name(store.table_name())
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(format!("FAILEDLOGIN#{login}")))
        .send()
        .await
        .expect("Query")
        .items
        .unwrap_or_default();
    assert_eq!(failures.len(), 1, "one counter item per login");
    assert_ttl(&failures[0], now + 900, "login attempt counter");
}

#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn ttl_is_enabled_on_expires_at() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let description = store
        .client()
        .describe_time_to_live()
        .table_name(store.table_name())
        .send()
        .await
        .expect("DescribeTimeToLive")
        .time_to_live_description
        .expect("a TTL description");
    assert_eq!(
        description.time_to_live_status,
        Some(TimeToLiveStatus::Enabled)
    );
    assert_eq!(description.attribute_name.as_deref(), Some(TTL_ATTRIBUTE));
}

/// A sign-in sent to a company's IdP expires with the TTL; the IdP and its links never do.
#[tokio::test]
#[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
async fn upstream_requests_carry_the_ttl_attribute_and_links_none() {
    let Some(store) = fresh_table().await else {
        return;
    };
    let now = now();
    let request = PendingUpstreamRequest {
        state_hash: TokenHash::of(&unique_login()),
        idp_id: IdpId::new(uuid::Uuid::new_v4()),
        nonce: "nonce".to_owned(),
        pkce_verifier: SealedSecret::new("sealed verifier"),
        continuation: SealedSecret::new("sealed continuation"),
        created_at: now,
        expires_at: now + UPSTREAM_REQUEST_TTL_SECONDS,
    };
    store
        .federation()
        .put_upstream_request(&request)
        .await
        .expect("put_upstream_request");
    assert_ttl(
        &hashed_item(&store, "UPSTREAMREQ", &request.state_hash).await,
        now + UPSTREAM_REQUEST_TTL_SECONDS,
        "pending upstream request",
    );

    let link = FederationLink {
        idp_id: request.idp_id,
        subject: UpstreamSubject::new("https://idp.example", "sub").unwrap(),
        user_id: PrincipalId::new(uuid::Uuid::new_v4()),
        company_id: PrincipalId::new(uuid::Uuid::new_v4()),
        linked_at: now,
    };
    store
        .federation()
        .put_federation_link(&link)
        .await
        .expect("put_federation_link");
    let pk = format!("FEDLINK#{}", link.idp_id);
    assert!(
        !raw_item(&store, &pk, &link.subject.key())
            .await
            .contains_key(TTL_ATTRIBUTE),
        "a link lasts until it is removed"
    );
}
