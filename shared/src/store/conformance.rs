//! The conformance suite every backend must pass (filled in with the SQLite backend).
