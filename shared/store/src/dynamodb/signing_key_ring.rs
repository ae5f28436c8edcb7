//! The signing key ring on DynamoDB: one item, `pk = SIGNINGKEYS#RING`, `sk = RING`, with the
//! document as a string and a numeric `version` that every replacement is conditional on.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;

use super::codec::{key, keys, n, s};
use super::requests::update_if;
use super::DynamoStore;
use crate::signing_key_ring::{RingWrite, SigningKeyRingStore, VersionedRing};
use crate::{StoreError, StoreResult};

const DOCUMENT: &str = "document";
const VERSION: &str = "version";

#[async_trait]
impl SigningKeyRingStore for DynamoStore {
    async fn load_signing_key_ring(&self) -> StoreResult<Option<VersionedRing>> {
        let Some(item) = self
            .get_item("GetSigningKeyRing", {
                let (pk, sk) = keys::signing_key_ring();
                key(pk, sk)
            })
            .await?
        else {
            return Ok(None);
        };
        let malformed = || StoreError::internal("malformed signing key ring item");
        let document = match item.get(DOCUMENT) {
            Some(AttributeValue::S(text)) => text.clone(),
            _ => return Err(malformed()),
        };
        let version = match item.get(VERSION) {
            Some(AttributeValue::N(number)) => number.parse().map_err(|_| malformed())?,
            _ => return Err(malformed()),
        };
        Ok(Some(VersionedRing { version, document }))
    }

    async fn replace_signing_key_ring(
        &self,
        expected: Option<u64>,
        document: &str,
    ) -> StoreResult<RingWrite> {
        let version = expected.map_or(1, |v| v + 1);
        let update = self
            .update_item(keys::signing_key_ring())
            .update_expression("SET #document = :document, #version = :version")
            .expression_attribute_names("#document", DOCUMENT)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_values(":document", s(document))
            .expression_attribute_values(":version", n(version));
        let update = match expected {
            None => update.condition_expression("attribute_not_exists(pk)"),
            Some(expected) => update
                .condition_expression("#version = :expected")
                .expression_attribute_values(":expected", n(expected)),
        };
        Ok(if update_if("PutSigningKeyRing", update).await? {
            RingWrite::Written { version }
        } else {
            RingWrite::Conflict
        })
    }
}
