//! The token service's adapters (crate `token-adapters`): what `token-core`'s ports are on AWS,
//! SMTP and HTTP, and the start-up that builds the services from the configuration. The
//! binaries use it; `token-core` never does, so the protocol links no AWS SDK, mail library,
//! HTTP client or trace exporter.
//!
//! - [`bootstrap`]: the services of a binary from its `Config`;
//! - [`kms`] (the key service on AWS KMS), [`secrets`] (Secrets Manager), [`sqs`] (the logout
//!   queue on SQS), [`mail`] (SMTP with lettre, the outbox), [`outbound`] (the fetcher's HTTP
//!   exchange on hyper and rustls);
//! - [`telemetry`] (logs) and [`traces`] (OTLP), [`metrics`] (the EMF and Prometheus exporters),
//!   [`lambda`] (a function's router that writes its metrics and spans after each invocation).

pub mod bootstrap;
pub mod kms;
pub mod lambda;
pub mod mail;
pub mod metrics;
pub mod outbound;
pub mod secrets;
pub mod sqs;
pub mod telemetry;
pub mod traces;

pub use lambda::lambda;
