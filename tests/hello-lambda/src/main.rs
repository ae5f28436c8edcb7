//! Hello world on `lambda_http` that also builds the functions' DynamoDB client (the shared SDK
//! configuration, the same HTTPS client, timeouts and retries) and sends nothing with it: no
//! configuration, no key ring, no request to a store. Its init and first request are the floor
//! the functions' cold starts are measured against, AWS SDK set-up included.

use lambda_http::{service_fn, Error, Request};
use token_store::dynamodb::DynamoStore;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let table = env("TABLE_NAME").unwrap_or_else(|| "tokens".to_owned());
    let store = DynamoStore::connect(&table, env("DYNAMODB_ENDPOINT").as_deref()).await;
    lambda_http::run(service_fn(move |_: Request| {
        // Held by the handler, as the functions hold theirs, so it is not optimised away.
        let _client = store.client();
        async { Ok::<_, Error>("hello") }
    }))
    .await
}
