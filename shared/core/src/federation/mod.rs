//! Company identity providers (docs/decisions.md, "Company identity providers: what is
//! stored"): what the service keeps of them that only it may read. Knows neither grants nor
//! flows: both, and the administration, call it.

mod sealing;

pub use sealing::{open_client_secret, seal_client_secret};
