//! Tests of the store's backends beside the suite (the SQLite sweeper, the read cache) that
//! build their data with [`records`](crate::records): here, since the store crate cannot use
//! this crate in its own tests.

mod cached;
mod sweeper;
