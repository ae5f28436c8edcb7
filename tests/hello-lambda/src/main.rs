//! Hello world on `lambda_http`: no configuration, no store, no signing key. Its init and first
//! request are the floor the functions' cold starts are measured against.

use lambda_http::{service_fn, Error, Request};

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::run(service_fn(|_: Request| async { Ok::<_, Error>("hello") })).await
}
