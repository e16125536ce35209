//! Changing a JetStream KV bucket behind a service's back.

use anyhow::Context;
use async_nats::jetstream;

/// Deletes `key` from `bucket` and then purges what is left of it (the delete marker), as a
/// compaction of the bucket would: afterwards the bucket holds no trace of the key, so only a
/// client that reads the bucket afresh can tell it is gone.
pub async fn erase_kv_key(nats_url: &str, bucket: &str, key: &str) -> anyhow::Result<()> {
    let js = jetstream::new(async_nats::connect(nats_url).await?);
    let store = js.get_key_value(bucket).await?;
    store.delete(key).await.context("deleting the key")?;
    let stream = js.get_stream(format!("KV_{bucket}")).await?;
    stream
        .purge()
        .filter(format!("$KV.{bucket}.{key}"))
        .await
        .context("purging the key's subject")?;
    anyhow::ensure!(
        store.entry(key).await?.is_none(),
        "{key} is still in {bucket}"
    );
    Ok(())
}
