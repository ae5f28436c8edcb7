//! The migration at scale: 100,000 old tokens through the import, then a random sample of them
//! exchanged over HTTP. Slow (DynamoDB Local takes minutes), so ignored by default; run with
//! `infra/bench-exchange-import.sh`, or
//! `cargo test -p integration-tests --test integration exchange::import_benchmark -- --ignored --nocapture`.

use std::io::{BufReader, Write};
use std::time::Instant;

use crate::support::app::{Backend, TestApp};
use serde_json::json;
use token_core::import::import_legacy_tokens;
use token_domain::clock::Clock;
use token_domain::secrets::TokenHash;
use uuid::Uuid;

use super::{assert_ok, Migration};

const TOKENS: usize = 100_000;
const SAMPLE: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: imports 100,000 tokens"]
async fn sqlite() {
    run(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: imports 100,000 tokens into DynamoDB Local"]
async fn dynamodb() {
    run(Backend::DynamoDb).await;
}

async fn run(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let m = Migration::new(&app, "read write profile admin").await;
    let company = app.create_company("Bench Co").await;
    app.enable_company_for(&company, &m.client).await;

    // A random sample is exchanged below; the first company token and the first WSAdmin
    // token always among them. Their principals exist (the exchange refuses unknown ones),
    // the others' are random.
    let mut picked = std::collections::BTreeSet::from([0, 1]);
    while picked.len() < SAMPLE {
        picked.insert((Uuid::new_v4().as_u128() % TOKENS as u128) as usize);
    }
    let mut principals = std::collections::HashMap::new();
    for &i in &picked {
        let id = if i % 10 == 0 {
            let sampled = app.create_company(&format!("Sampled {i}")).await;
            app.enable_company_for(&sampled, &m.client).await;
            sampled.id
        } else {
            app.create_user(&format!("sampled-{i}"), "pw").await.id
        };
        principals.insert(i, id.to_string());
    }

    // A realistic file: users and companies, one WSAdmin token in 50, some expiring later.
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut tokens = Vec::with_capacity(TOKENS);
    {
        let mut out = std::io::BufWriter::new(file.as_file());
        let later = app.clock.now() + 30 * 86_400;
        for i in 0..TOKENS {
            let token = format!("legacy-{}-{}", i, Uuid::new_v4().simple());
            let mut line = json!({
                "token": token,
                "consumer_key": m.consumer_key,
                "principal_type": if i % 10 == 0 { "company" } else { "user" },
                "principal_id": principals
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| Uuid::new_v4().to_string()),
                "scopes": if i % 3 == 0 { vec!["read", "write"] } else { vec!["read"] },
                "wsadmin": i % 50 == 1,
            });
            if i % 50 == 1 {
                line["company_id"] = json!(company.id.to_string());
            }
            if i % 4 == 0 {
                line["expires_at"] = json!(later);
            }
            writeln!(out, "{line}").unwrap();
            tokens.push(token);
        }
        out.flush().unwrap();
    }
    let bytes = file.as_file().metadata().unwrap().len();

    let started = Instant::now();
    let reader = BufReader::new(std::fs::File::open(file.path()).unwrap());
    let report = import_legacy_tokens(app.ctx(), reader, |_| {})
        .await
        .unwrap();
    let import_time = started.elapsed();
    assert_eq!(report.imported, TOKENS as u64, "{:?}", report.skipped_lines);
    assert_eq!(report.skipped, 0);

    // The sample, each exchanged over HTTP and then linked in the store.
    let started = Instant::now();
    let mut exchanges: u32 = 0;
    for &i in &picked {
        exchanges += 1;
        let answer = m.exchange(&app, &tokens[i]).await;
        let body = assert_ok(&answer);
        let expected = if i % 10 == 0 { "company" } else { "user" };
        assert_eq!(body["principalType"], expected, "token {i}");
        if i % 50 == 1 {
            exchanges += 1;
            let as_company = m
                .exchange_with(&app, "?returnType=companyToken", &tokens[i])
                .await;
            assert_eq!(
                assert_ok(&as_company)["id"],
                company.id.to_string(),
                "token {i}"
            );
        }
    }
    let exchange_time = started.elapsed();
    for &i in &picked {
        assert!(app
            .store
            .legacy()
            .get_legacy_exchange(&TokenHash::of(&tokens[i]))
            .await
            .unwrap()
            .is_some());
    }
    // And tokens outside the sample are there, unexchanged.
    let mut checked = 0;
    for i in (0..TOKENS).step_by(997).filter(|i| !picked.contains(i)) {
        let stored = app
            .store
            .legacy()
            .get_legacy_token(&TokenHash::of(&tokens[i]), app.clock.now())
            .await
            .unwrap();
        assert!(stored.is_some(), "token {i} imported");
        checked += 1;
    }

    println!(
        "BENCH {backend:?}: imported {} tokens ({:.1} MB) in {:.2} s = {:.0} tokens/s; \
         {SAMPLE} sampled tokens: {exchanges} exchanges over HTTP in {:.2} s ({:.1} ms each); \
         {checked} further tokens read back",
        report.imported,
        bytes as f64 / 1e6,
        import_time.as_secs_f64(),
        report.imported as f64 / import_time.as_secs_f64(),
        exchange_time.as_secs_f64(),
        exchange_time.as_secs_f64() * 1000.0 / f64::from(exchanges),
    );
}
