//! The DynamoDB backend (production).
//!
//! One table, partition key `pk` (S) and sort key `sk` (S), TTL on `expires_at` (N, Unix
//! seconds). Every entity is one item whose other attributes are the entity's fields at the top
//! level, so that conditions can name them (`current_token`, `revoked_at`, `expires_at`,
//! `generation`, `family_id`). Absent optional fields are left out of the item rather than
//! stored as NULL, so `attribute_not_exists(revoked_at)` means "not revoked".
//!
//! | pk                      | sk                      | item                                  |
//! |-------------------------|-------------------------|---------------------------------------|
//! | `CLIENT#<client_id>`    | `CLIENT`                | client                                |
//! | `USER#<user_id>`        | `USER`                  | user                                  |
//! | `LOGIN#<login>`         | `LOGIN`                 | `user_id`: uniqueness of logins       |
//! | `COMPANY#<company_id>`  | `COMPANY`               | company                               |
//! | `COMPANY#<company_id>`  | `CLIENT#<client_id>`    | the company is enabled for the client |
//! | `LEGACYAPP#<key>`       | `LEGACYAPP`             | legacy app link                       |
//! | `LEGACY#<hash>`         | `LEGACY`                | imported legacy token (TTL if any)    |
//! | `LEGACY#<hash>`         | `EXCHANGE`              | the family of the latest exchange     |
//! | `FAMILY#<family_id>`    | `FAMILY`                | token family (TTL)                    |
//! | `REFRESH#<hash>`        | `REFRESH`               | record of a token without a name (TTL) |
//! | `ACCESS#<jti>`          | `ACCESS`                | access token record (TTL)             |
//! | `AUTHTOKEN#<hash>`      | `AUTHTOKEN`             | company auth token (TTL)              |
//! | `AUTHCODE#<hash>`       | `AUTHCODE`              | authorization code (TTL)              |
//! | `FAILEDLOGIN#<login>`   | `ATTEMPTS`              | login attempt counter and window (TTL)|
//! | `OTP#<address hash>`    | `<created, 20 digits>#<id>` | one-time password (TTL)           |
//! | `EMAIL#<address hash>`  | `EMAIL`                 | `user_id`: uniqueness of addresses    |
//! | `SIGNINGKEYS#RING`      | `RING`                  | signing key ring document, `version`  |
//! | `RATE#<counter>#<hash>` | `WINDOW#<start, 20 digits>` | rate-limit hits in a window (TTL) |
//! | `RATE#<counter>#<hash>` | `BLOCK`                 | a rate-limit block, `until` (TTL)     |
//! | `JTI#<kind>#<hash>`     | `JTI`                   | a used JWT `jti` (TTL: the JWT's `exp`) |
//! | `AUDIT#<subject>`       | `<time, 20 digits>#<event id>` | audit event `body`, or a compact `c` (TTL 400 days) |
//!
//! `<hash>` is the hex SHA-256 of the credential; no credential is ever stored or logged.
//! `<address hash>` is the hex SHA-256 of the lower-cased e-mail address. `<subject>` is
//! `PRINCIPAL#<id>`, `CLIENT#<id>`, `FAMILY#<id>` or `DEPLOYMENT`: an event is written once
//! under each subject it names (`audit.rs`).

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::Client;

mod audit;
mod auth_tokens;
mod authorization_codes;
mod batch;
mod clients;
mod codec;
mod device_authorizations;
mod directory;
mod document_clients;
mod errors;
mod families;
mod federation;
mod legacy;
mod lockout;
mod otp;
mod passkeys;
mod principals;
mod pushed_authorizations;
mod rate_limits;
mod registration_tokens;
mod replays;
mod requests;
mod revocation;
mod second_factors;
mod sessions;
mod signing_key_ring;
mod table;
#[cfg(test)]
mod template_iam;

/// Which item kinds each function writes, for the deployment's IAM conditions.
pub use codec::keys::{prefix, FUNCTION_READS, FUNCTION_WRITES};

/// The SDK, so that users of [`DynamoStore::client`] can name its types without depending on
/// the same version themselves.
pub use aws_sdk_dynamodb as sdk;

/// The table's TTL attribute.
pub const TTL_ATTRIBUTE: &str = "expires_at";

/// How long a request waits for a TCP connection to DynamoDB.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long one attempt of a request may take, retries excluded.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a request may take, all retries included: then the store is `Unavailable` (503),
/// well within the functions' 10 s timeout.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// Cheap to clone: clones share the SDK client, and so its connection pool.
#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

impl std::fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamoStore")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl DynamoStore {
    /// A store on `table_name`, with AWS's default configuration chain (the Lambda role, the
    /// environment, a profile). With `endpoint` (DynamoDB Local), requests go there, under the
    /// one rule for local endpoints ([`crate::aws_sdk::loader_for`]).
    pub async fn connect(table_name: &str, endpoint: Option<&str>) -> Self {
        // A hung or unreachable store must turn into a 503 within a few seconds, not hold a
        // Lambda invocation until its own timeout: bounded attempts, each bounded in time.
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .operation_attempt_timeout(ATTEMPT_TIMEOUT)
            .operation_timeout(OPERATION_TIMEOUT)
            .build();
        let retries = RetryConfig::standard()
            .with_max_attempts(3)
            .with_initial_backoff(Duration::from_millis(100))
            .with_max_backoff(Duration::from_secs(1));
        let loader = crate::aws_sdk::loader_for(endpoint, "dynamodb-local")
            .timeout_config(timeouts)
            .retry_config(retries);
        let config = loader.load().await;
        Self::from_client(Client::new(&config), table_name)
    }

    /// A store on an already configured client (tests with special settings).
    pub fn from_client(client: Client, table_name: &str) -> Self {
        Self {
            client,
            table: table_name.to_owned(),
        }
    }

    /// The underlying client, for administration and for tests that inspect raw items.
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table_name(&self) -> &str {
        &self.table
    }
}
