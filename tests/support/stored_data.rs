//! The raw bytes a test store holds, for the promise "stored only as a hash": a check that a
//! secret is nowhere in the data, whatever record or column it might have slipped into.

use std::collections::HashMap;
use std::path::Path;

use tempfile::TempDir;
use token_store::dynamodb::sdk::types::AttributeValue;
use token_store::dynamodb::DynamoStore;

/// A second handle on a test store's data, below the `Store` trait.
pub enum StoredData {
    /// The directory of the SQLite database file (and its WAL), owned by the test app.
    Sqlite(TempDir),
    Dynamo(DynamoStore),
    /// A store the test built itself: nothing to look into.
    Opaque,
}

impl StoredData {
    /// Whether `needle` appears anywhere in the stored data, in clear.
    pub async fn contains(&self, needle: &str) -> bool {
        match self {
            Self::Sqlite(dir) => files_contain(dir.path(), |_| true, needle),
            Self::Dynamo(store) => table_contains(store, needle).await,
            Self::Opaque => panic!("this app's store was built by the test: no raw data to read"),
        }
    }
}

/// Whether any file directly in `dir` that `include` accepts holds `needle`, in clear.
pub fn files_contain(dir: &Path, include: impl Fn(&Path) -> bool, needle: &str) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && include(path))
        .any(|path| {
            // Read by another process: opening and closing the database file here would
            // drop the POSIX locks this process's own SQLite connection holds on it
            // (locks are per process), after which that connection reads stale data.
            let out = std::process::Command::new("cat")
                .arg(&path)
                .output()
                .unwrap();
            assert!(out.status.success(), "cat {}", path.display());
            out.stdout
                .windows(needle.len())
                .any(|window| window == needle.as_bytes())
        })
}

/// One stored DynamoDB item, as the SDK returns it.
pub type Item = HashMap<String, AttributeValue>;

/// Every item of a test table.
pub async fn scan_table(store: &DynamoStore) -> Vec<Item> {
    let mut items = Vec::new();
    let mut pages = store
        .client()
        .scan()
        .table_name(store.table_name())
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        items.extend(page.unwrap().items.unwrap_or_default());
    }
    items
}

/// Whether any attribute of any item of the table holds `needle`, in clear.
pub async fn table_contains(store: &DynamoStore, needle: &str) -> bool {
    scan_table(store)
        .await
        .iter()
        .any(|item| item.values().any(|value| holds(value, needle)))
}

/// Whether a stored attribute, at any depth, holds `needle` in a string.
fn holds(value: &AttributeValue, needle: &str) -> bool {
    match value {
        AttributeValue::S(text) => text.contains(needle),
        AttributeValue::Ss(texts) => texts.iter().any(|text| text.contains(needle)),
        AttributeValue::L(values) => values.iter().any(|v| holds(v, needle)),
        AttributeValue::M(map) => map.values().any(|v| holds(v, needle)),
        _ => false,
    }
}
