//! The DynamoDB backend (production).
