//! DynamoDB Local test stores: a fresh table per test on the emulator the test command started.
