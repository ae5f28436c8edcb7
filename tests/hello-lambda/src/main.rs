//! Hello world on `lambda_http` that builds the functions' DynamoDB client (the shared SDK
//! configuration, the same HTTPS client, timeouts and retries) and reads one item with it per
//! request: issue 46's cold-start baseline, "a hello world whose first request reads one item".
//! No configuration, no key ring, no write. Its init and first request are the floor the
//! functions' cold starts are measured against, the SDK's set-up and its first connection
//! included. A failed read answers 500, so the baseline cannot pass without reading.

use aws_sdk_dynamodb::types::AttributeValue;
use lambda_http::{service_fn, Body, Error, Request, Response};
use token_store::dynamodb::DynamoStore;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let table = env("TABLE_NAME").unwrap_or_else(|| "tokens".to_owned());
    let store = DynamoStore::connect(&table, env("DYNAMODB_ENDPOINT").as_deref()).await;
    lambda_http::run(service_fn(move |_: Request| {
        // An item no function writes: a read that finds nothing costs what a hit costs.
        let read = store
            .client()
            .get_item()
            .table_name(store.table_name())
            .key("pk", AttributeValue::S("HELLO#baseline".to_owned()))
            .key("sk", AttributeValue::S("HELLO".to_owned()))
            .send();
        async move {
            let answer = match read.await {
                Ok(_) => Response::new(Body::from("hello")),
                Err(error) => {
                    let mut failed = Response::new(Body::from(format!("read failed: {error}")));
                    *failed.status_mut() = 500.try_into()?;
                    failed
                }
            };
            Ok::<_, Error>(answer)
        }
    }))
    .await
}
