//! The exporters of the metrics `token_core::measure` records through the `metrics` facade:
//! [`emf`] (CloudWatch embedded metric format lines, in Lambda) and [`prometheus`] (the local
//! server's `GET /metrics`, through the [`token_core::measure::Scrape`] port).

pub mod emf;
pub mod prometheus;
