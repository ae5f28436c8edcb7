use super::*;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::domain::{ConsumerKey, LegacyApp, LegacyExchange, PrincipalType};
use crate::store::StoreResult;

const NOW: UnixTime = 1_700_000_000;
const USER: &str = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const COMPANY: &str = "0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6";

fn line(token: &str) -> String {
    format!(
        r#"{{"token":"{token}","consumer_key":"qyprd-OLD","principal_type":"user","principal_id":"{USER}","scopes":["read","write"],"wsadmin":false}}"#
    )
}

fn parse(text: &str) -> Result<LegacyToken, String> {
    parse_line(text.as_bytes(), NOW)
}

#[test]
fn parses_a_valid_line_and_keeps_only_the_hash() {
    let token = parse(&line("old-secret-token")).unwrap();
    assert_eq!(token.token_hash, TokenHash::of("old-secret-token"));
    assert_eq!(token.consumer_key.as_str(), "qyprd-OLD");
    assert_eq!(token.principal_type, PrincipalType::User);
    assert_eq!(token.principal_id.to_string(), USER);
    assert_eq!(token.scopes.to_string(), "read write");
    assert!(!token.wsadmin);
    assert_eq!(token.company_id, None);
    assert_eq!(token.expires_at, None);
}

#[test]
fn parses_wsadmin_company_and_expiry() {
    let text = format!(
        r#"{{"token":"t","consumer_key":"k","principal_type":"company","principal_id":"{COMPANY}","scopes":[],"wsadmin":true,"company_id":"{COMPANY}","expires_at":{},"extra":"ignored"}}"#,
        NOW + 60
    );
    let token = parse(&text).unwrap();
    assert_eq!(token.principal_type, PrincipalType::Company);
    assert!(token.wsadmin);
    assert_eq!(token.company_id.unwrap().to_string(), COMPANY);
    assert_eq!(token.expires_at, Some(NOW + 60));
    assert!(token.scopes.is_empty());
}

fn reason(text: &str) -> String {
    parse(text).unwrap_err()
}

#[test]
fn rejects_invalid_lines_with_a_reason() {
    let valid: serde_json::Value = serde_json::from_str(&line("tok")).unwrap();
    let with = |key: &str, value: serde_json::Value| {
        let mut v = valid.clone();
        v[key] = value;
        v.to_string()
    };
    let without = |key: &str| {
        let mut v = valid.clone();
        v.as_object_mut().unwrap().remove(key);
        v.to_string()
    };
    assert!(reason("not json").contains("not a JSON object"));
    assert!(reason("[1,2]").contains("invalid type"));
    assert!(reason(&without("token")).contains("missing field `token`"));
    assert!(reason(&without("wsadmin")).contains("missing field `wsadmin`"));
    assert!(reason(&without("scopes")).contains("missing field `scopes`"));
    assert_eq!(reason(&with("token", "".into())), "token is empty");
    assert!(reason(&with("token", " tok".into())).contains("whitespace"));
    assert!(reason(&with("consumer_key", "".into())).starts_with("consumer_key"));
    assert!(reason(&with("principal_type", "application".into())).contains("principal_type"));
    assert_eq!(
        reason(&with("principal_id", "nope".into())),
        "principal id must be a UUID"
    );
    assert!(reason(&with("scopes", serde_json::json!(["a b"]))).starts_with("scopes"));
    assert!(reason(&with("scopes", serde_json::json!(["a\"b"]))).starts_with("scopes"));
    assert!(reason(&with("scopes", "read".into())).contains("invalid type"));
    assert!(reason(&with("wsadmin", "yes".into())).contains("invalid type"));
    assert_eq!(
        reason(&with("wsadmin", true.into())),
        "company_id is required when wsadmin is true"
    );
    assert_eq!(
        reason(&with("company_id", "x".into())),
        "company_id must be a UUID"
    );
    assert!(reason(&with("expires_at", NOW.into())).contains("expired"));
    assert!(reason(&with("expires_at", (-5).into())).contains("positive"));
    assert!(reason(&with("expires_at", "soon".into())).contains("invalid type"));
}

#[test]
fn reasons_never_contain_the_token() {
    let secret = "very-secret-old-token";
    let text = line(secret).replace(USER, "not-a-uuid");
    assert!(!reason(&text).contains(secret));
    let text = line(secret).replace("\"user\"", "\"robot\"");
    assert!(!reason(&text).contains(secret));
}

#[test]
fn a_token_of_another_type_is_refused_without_echoing_it() {
    let valid: serde_json::Value = serde_json::from_str(&line("tok")).unwrap();
    for (secret, token) in [
        (
            "918273645546372819",
            serde_json::json!(918273645546372819_u64),
        ),
        ("-918273645546", serde_json::json!(-918273645546_i64)),
        ("1234.5678", serde_json::json!(1234.5678)),
        ("true", serde_json::json!(true)),
        ("hidden-in-array", serde_json::json!(["hidden-in-array"])),
        (
            "hidden-in-object",
            serde_json::json!({"value": "hidden-in-object"}),
        ),
    ] {
        let mut value = valid.clone();
        value["token"] = token;
        let reason = reason(&value.to_string());
        assert_eq!(reason, "token must be a string", "{secret}");
        assert!(!reason.contains(secret), "{reason}");
    }
    assert!(reason(&line("tok").replace("\"tok\"", "null")).contains("must be a string"));
}

#[test]
fn long_lines_are_cut_and_the_rest_discarded() {
    let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
    input.extend_from_slice(b"\nnext\n");
    let mut reader = std::io::BufReader::with_capacity(16, input.as_slice());
    let mut buf = Vec::new();
    let first = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
    assert!(first.too_long);
    assert_eq!(first.bytes, (MAX_LINE_BYTES + 11) as u64);
    assert_eq!(buf.len(), MAX_LINE_BYTES + 1);
    buf.clear();
    let second = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
    assert!(!second.too_long);
    assert_eq!(buf, b"next");
    buf.clear();
    assert!(read_line_capped(&mut reader, &mut buf).unwrap().is_none());
}

#[test]
fn last_line_without_newline_is_read() {
    let mut reader = "a\r\nb".as_bytes();
    let mut buf = Vec::new();
    read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
    assert_eq!(trim_ascii_whitespace(&buf), b"a");
    buf.clear();
    let last = read_line_capped(&mut reader, &mut buf).unwrap().unwrap();
    assert_eq!((buf.as_slice(), last.bytes), (b"b".as_slice(), 1));
}

/// Only the legacy-token calls are implemented; the import uses nothing else.
#[derive(Debug, Default)]
struct RecordingStore {
    calls: Mutex<Vec<usize>>,
    tokens: Mutex<HashMap<TokenHash, LegacyToken>>,
    fail_after_calls: Option<usize>,
}

#[async_trait]
impl LegacyStore for RecordingStore {
    async fn put_legacy_tokens(&self, tokens: &[LegacyToken]) -> StoreResult<()> {
        let mut calls = self.calls.lock().unwrap();
        if self.fail_after_calls == Some(calls.len()) {
            return Err(StoreError::Unavailable("test outage".into()));
        }
        calls.push(tokens.len());
        let mut stored = self.tokens.lock().unwrap();
        for token in tokens {
            stored.insert(token.token_hash.clone(), token.clone());
        }
        Ok(())
    }
    async fn get_legacy_token(
        &self,
        hash: &TokenHash,
        _now: UnixTime,
    ) -> StoreResult<Option<LegacyToken>> {
        Ok(self.tokens.lock().unwrap().get(hash).cloned())
    }
    async fn put_legacy_app(&self, _: &LegacyApp) -> StoreResult<()> {
        unimplemented!()
    }
    async fn get_legacy_app(&self, _: &ConsumerKey) -> StoreResult<Option<LegacyApp>> {
        unimplemented!()
    }
    async fn get_legacy_exchange(&self, _: &TokenHash) -> StoreResult<Option<LegacyExchange>> {
        unimplemented!()
    }
}

/// The import at [`NOW`] into `store`.
async fn import<R: BufRead, F: FnMut(ImportProgress)>(
    store: &Arc<RecordingStore>,
    reader: R,
    progress: F,
) -> Result<ImportReport, ImportError> {
    import_legacy_tokens_into(store.clone(), |store| store, NOW, reader, progress).await
}

fn file(lines: usize, bad_every: usize) -> String {
    let mut text = String::new();
    for i in 1..=lines {
        if bad_every > 0 && i % bad_every == 0 {
            text.push_str("{\"token\":\"x\"}\n");
        } else if i % 7 == 0 {
            text.push_str("   \n");
        } else {
            text.push_str(&line(&format!("token-{i}")));
            text.push('\n');
        }
    }
    text
}

#[tokio::test]
async fn imports_in_batches_and_reports_every_line() {
    let store = Arc::new(RecordingStore::default());
    let input = file(2_500, 100);
    let mut seen = Vec::new();
    let report = import(&store, input.as_bytes(), |p| seen.push(p))
        .await
        .unwrap();

    let bad = 2_500 / 100;
    let blank = (1..=2_500).filter(|i| i % 7 == 0 && i % 100 != 0).count() as u64;
    assert_eq!(report.lines_read, 2_500);
    assert_eq!(report.skipped, bad as u64);
    assert_eq!(report.blank, blank);
    assert_eq!(report.imported, 2_500 - bad as u64 - blank);
    assert_eq!(
        report.lines_read,
        report.imported + report.skipped + report.blank
    );
    assert!(report.all_skips_listed());
    assert_eq!(report.skipped_lines[0].line, 100);
    assert!(report.skipped_lines[0].reason.contains("missing field"));

    let calls = store.calls.lock().unwrap().clone();
    assert_eq!(calls.iter().sum::<usize>() as u64, report.imported);
    assert!(calls.iter().all(|&n| n <= BATCH_SIZE), "{calls:?}");
    assert_eq!(store.tokens.lock().unwrap().len() as u64, report.imported);
    assert!(store
        .tokens
        .lock()
        .unwrap()
        .contains_key(&TokenHash::of("token-1")));

    assert_eq!(seen.len(), 3);
    let last = *seen.last().unwrap();
    assert_eq!(last.lines, 2_500);
    assert_eq!(last.bytes, input.len() as u64);
    assert_eq!(last.imported, report.imported);
}

#[tokio::test]
async fn reimport_and_repeated_tokens_leave_one_record_each() {
    let store = Arc::new(RecordingStore::default());
    let input = format!("{}\n{}\n\n{}\n", line("a"), line("b"), line("a"));
    let first = import(&store, input.as_bytes(), |_| {}).await.unwrap();
    let second = import(&store, input.as_bytes(), |_| {}).await.unwrap();
    assert_eq!((first.imported, first.blank, first.skipped), (3, 1, 0));
    assert_eq!(
        (first.lines_read, first.imported, first.skipped),
        (second.lines_read, second.imported, second.skipped)
    );
    assert_eq!(store.tokens.lock().unwrap().len(), 2);
    // Within a batch, a repeated token is written once.
    assert_eq!(*store.calls.lock().unwrap(), vec![2, 2]);
}

#[tokio::test]
async fn skip_reasons_are_capped_but_counted() {
    let store = Arc::new(RecordingStore::default());
    let input = "nope\n".repeat(MAX_REPORTED_SKIPS + 5);
    let report = import(&store, input.as_bytes(), |_| {}).await.unwrap();
    assert_eq!(report.skipped, (MAX_REPORTED_SKIPS + 5) as u64);
    assert_eq!(report.skipped_lines.len(), MAX_REPORTED_SKIPS);
    assert!(!report.all_skips_listed());
    assert_eq!(report.imported, 0);
}

#[tokio::test]
async fn a_store_failure_stops_the_import_and_says_how_far_it_got() {
    let store = Arc::new(RecordingStore {
        fail_after_calls: Some(1),
        ..Default::default()
    });
    let input = file(2_500, 0);
    let err = import(&store, input.as_bytes(), |_| {}).await.unwrap_err();
    match err {
        ImportError::Store { imported, .. } => assert_eq!(imported, BATCH_SIZE as u64),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_read_failure_names_the_line() {
    struct Broken;
    impl std::io::Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    use std::io::Read as _;
    let store = Arc::new(RecordingStore::default());
    let first = format!("{}\n", line("a"));
    let reader = std::io::BufReader::new(first.as_bytes().chain(Broken));
    let err = import(&store, reader, |_| {}).await.unwrap_err();
    assert!(matches!(err, ImportError::Read { line: 2, .. }), "{err:?}");
}

/// Who imported what, and when, is in the audit trail (under the deployment: an import names no
/// client or principal of its own).
#[tokio::test]
async fn a_finished_import_is_an_audit_event() {
    use crate::domain::audit::{AuditKind, AuditSubject};
    use crate::store::AuditQuery;

    let dir = tempfile::tempdir().unwrap();
    let store = crate::store::sqlite::SqliteStore::open_in_dir(dir.path()).unwrap();
    let ctx = Context::new(Arc::new(store));
    let input = file(20, 10);
    let report = import_legacy_tokens(&ctx, input.as_bytes(), |_| {})
        .await
        .unwrap();
    assert_eq!((report.imported, report.skipped), (16, 2));
    let events = ctx
        .store
        .audit()
        .audit_events(AuditQuery {
            subject: AuditSubject::Deployment,
            since: None,
            now: ctx.clock.now(),
        })
        .await
        .unwrap();
    let kinds: Vec<_> = events.iter().map(|event| event.kind.clone()).collect();
    assert_eq!(
        kinds,
        [AuditKind::LegacyTokensImported {
            imported: 16,
            skipped: 2
        }]
    );
}
