//! The storage conformance suite against SQLite.
