//! SQLite test stores: a fresh database file in a temporary directory per test.
