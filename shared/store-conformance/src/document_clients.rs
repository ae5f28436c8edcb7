//! The clients of client ID metadata documents: kept whole (the client and its document's
//! times), found by the id derived from the URL until they expire, fresh or not, and replaced by
//! a newer fetch.

use super::records::*;
use crate::domain::{ClientId, DocumentClient, DocumentUrl, MetadataDocument};
use crate::store::prelude::*;

fn document_client(url: &str, now: i64, lifetime: i64, name: &str) -> DocumentClient {
    let url = DocumentUrl::parse(url).expect("a document URL");
    let body = format!(
        r#"{{"client_id": "{url}", "client_name": "{name}",
            "redirect_uris": ["https://agent.example/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none"}}"#
    );
    let checked = MetadataDocument::parse(body.as_bytes(), &url)
        .and_then(|document| document.check(&scopes("openid profile"), None))
        .expect("a valid document");
    DocumentClient::new(&url, checked, now, lifetime)
}

pub async fn document_client_is_kept_past_its_freshness_until_it_expires(store: &dyn Store) {
    let now = now();
    let url = format!("https://agent.example/{}/client.json", unique_login());
    let documents = store.document_clients();
    let id = ClientId::of_document_url(&url);
    assert_eq!(documents.get_document_client(&id, now).await.unwrap(), None);
    let record = document_client(&url, now, 300, "Agent");
    documents
        .put_document_client(&record)
        .await
        .expect("put_document_client");
    let read = documents.get_document_client(&id, now).await.unwrap();
    assert_eq!(read.as_ref(), Some(&record), "the client round-trips whole");
    let client = read.unwrap().client;
    assert_eq!(client.document_url.as_deref(), Some(url.as_str()));
    assert!(client.is_public() && client.is_self_registered());

    let stale = documents
        .get_document_client(&id, record.fresh_until + 1)
        .await
        .unwrap()
        .expect("kept past its freshness");
    assert!(!stale.is_fresh(record.fresh_until + 1));
    assert_eq!(
        documents
            .get_document_client(&id, record.expires_at)
            .await
            .unwrap(),
        None,
        "expired at its expiry, even while the item lingers"
    );

    let refetched = document_client(&url, now + 400, 3600, "Agent, renamed");
    documents.put_document_client(&refetched).await.unwrap();
    let read = documents
        .get_document_client(&id, now + 400)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        read.client.name, "Agent, renamed",
        "a newer fetch replaces it"
    );
    assert_eq!(read.fresh_until, now + 4000);
    assert_eq!(
        store.clients().get_client(&id).await.unwrap(),
        None,
        "never a registered client"
    );
}
