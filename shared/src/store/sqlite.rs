//! The embedded SQLite backend (local default).
