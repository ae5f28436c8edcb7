//! `POST /Bulk` (RFC 7644 3.7): at most [`MAX_OPERATIONS`] operations (the body's size is the
//! HTTP layer's to bound), run in order, each as on its own; `bulkId:` references resolve to
//! the ids the same request created; `failOnErrors` stops after that many errors.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::domain::scim::{ScimError, ScimType, BULK_RESPONSE_SCHEMA};
use crate::services::Services;

use super::listing::json_body;
use super::{groups, users, Failure, Provisioner, ScimReply, ScimResult};

pub const MAX_OPERATIONS: usize = 100;
pub const MAX_PAYLOAD_BYTES: usize = 1_048_576;

fn invalid_syntax(detail: &str) -> Failure {
    Failure::Scim(ScimError::bad_request(ScimType::InvalidSyntax, detail))
}

/// Replaces every `bulkId:x` string (whole, or as a path's last segment) with the id `x` got.
fn resolve(value: &mut Value, ids: &HashMap<String, String>) -> Result<(), String> {
    match value {
        Value::String(text) => {
            if let Some(reference) = text.strip_prefix("bulkId:") {
                let id = ids.get(reference).ok_or_else(|| reference.to_owned())?;
                *text = id.clone();
            }
        }
        Value::Array(items) => {
            for item in items {
                resolve(item, ids)?;
            }
        }
        Value::Object(fields) => {
            for (_, item) in fields.iter_mut() {
                resolve(item, ids)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn resolve_path(path: &str, ids: &HashMap<String, String>) -> Result<String, String> {
    match path.rsplit_once("/bulkId:") {
        Some((head, reference)) => ids
            .get(reference)
            .map(|id| format!("{head}/{id}"))
            .ok_or_else(|| reference.to_owned()),
        None => Ok(path.to_owned()),
    }
}

async fn run(
    services: &Services,
    p: &Provisioner,
    method: &str,
    path: &str,
    data: &[u8],
    version: Option<&str>,
) -> ScimResult<ScimReply> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method, segments.as_slice()) {
        ("POST", ["Users"]) => users::create_user(services, p, data).await,
        ("POST", ["Groups"]) => groups::create_group(services, p, data).await,
        ("PUT", ["Users", id]) => users::replace_user(services, p, id, data, version).await,
        ("PUT", ["Groups", id]) => groups::replace_group(services, p, id, data, version).await,
        ("PATCH", ["Users", id]) => users::patch_user(services, p, id, data, version).await,
        ("PATCH", ["Groups", id]) => groups::patch_group(services, p, id, data, version).await,
        ("DELETE", ["Users", id]) => users::delete_user(services, p, id, version).await,
        ("DELETE", ["Groups", id]) => groups::delete_group(services, p, id, version).await,
        _ => Err(invalid_syntax(
            "an operation's method and path name no resource",
        )),
    }
}

pub async fn bulk(services: &Services, p: &Provisioner, body: &[u8]) -> ScimResult<ScimReply> {
    if body.len() > MAX_PAYLOAD_BYTES {
        return Err(Failure::Scim(ScimError::new(
            413,
            None,
            "the request is larger than maxPayloadSize (1048576 bytes)",
        )));
    }
    let request = json_body(body)?;
    let operations = request["Operations"]
        .as_array()
        .ok_or_else(|| invalid_syntax("a BulkRequest needs Operations"))?;
    if operations.len() > MAX_OPERATIONS {
        return Err(Failure::Scim(ScimError::new(
            413,
            None,
            "the request has more than maxOperations (100) operations",
        )));
    }
    let fail_on_errors = request["failOnErrors"].as_u64().filter(|n| *n > 0);
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut answered = Vec::new();
    let mut errors = 0u64;
    for operation in operations {
        if fail_on_errors.is_some_and(|limit| errors >= limit) {
            break;
        }
        let method = operation["method"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase();
        let bulk_id = operation["bulkId"].as_str().map(str::to_owned);
        let version = operation["version"].as_str();
        let outcome = match (operation["path"].as_str(), method.as_str()) {
            (None, _) => Err(invalid_syntax("an operation needs a path")),
            (Some(_), "POST") if bulk_id.is_none() => {
                Err(invalid_syntax("a POST operation needs a bulkId"))
            }
            (Some(path), _) => {
                let mut data = operation["data"].clone();
                match (resolve_path(path, &ids), resolve(&mut data, &ids)) {
                    (Ok(path), Ok(())) => {
                        let data = serde_json::to_vec(&data).unwrap_or_default();
                        run(services, p, &method, &path, &data, version).await
                    }
                    (Err(reference), _) | (_, Err(reference)) => {
                        Err(Failure::Scim(ScimError::bad_request(
                            ScimType::InvalidValue,
                            format!("bulkId {reference} names no resource created before it"),
                        )))
                    }
                }
            }
        };
        let mut entry = json!({ "method": method });
        if let Some(bulk_id) = &bulk_id {
            entry["bulkId"] = Value::from(bulk_id.as_str());
        }
        match outcome {
            Ok(reply) => {
                if let (Some(bulk_id), Some(body)) = (&bulk_id, &reply.body) {
                    if let Some(id) = body["id"].as_str() {
                        ids.insert(bulk_id.clone(), id.to_owned());
                    }
                }
                if let Some(location) = reply.location {
                    entry["location"] = Value::from(location);
                }
                if let Some(etag) = reply.etag {
                    entry["version"] = Value::from(etag);
                }
                entry["status"] = Value::from(reply.status.to_string());
            }
            // Ours: the whole request answers 503, to be retried.
            Err(Failure::Server(error)) => return Err(Failure::Server(error)),
            Err(Failure::RateLimited { retry_after }) => {
                return Err(Failure::RateLimited { retry_after })
            }
            Err(Failure::Scim(error)) => {
                errors += 1;
                entry["status"] = Value::from(error.status.to_string());
                entry["response"] = error.to_json();
            }
        }
        answered.push(entry);
    }
    Ok(ScimReply::message(
        200,
        json!({ "schemas": [BULK_RESPONSE_SCHEMA], "Operations": answered }),
    ))
}
