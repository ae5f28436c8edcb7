//! Clients.

use super::records::*;
use crate::domain::ClientId;
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;

pub async fn client_round_trip_and_replace(store: &dyn Store) {
    let now = now();
    let mut client = client(now);
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client");
    assert_eq!(
        store
            .clients()
            .get_client(&client.id)
            .await
            .expect("get_client"),
        Some(client.clone()),
        "a client reads back as written"
    );

    client.enabled = false;
    client.connect_url = None;
    store
        .clients()
        .put_client(&client)
        .await
        .expect("put_client again");
    assert_eq!(
        store
            .clients()
            .get_client(&client.id)
            .await
            .expect("get_client"),
        Some(client),
        "put_client replaces the stored client"
    );

    let unknown = ClientId::new(OsRandom.uuid());
    assert_eq!(
        store
            .clients()
            .get_client(&unknown)
            .await
            .expect("get_client"),
        None,
        "an unknown client is absent"
    );
}
