//! The local all-in-one server: every route of the three Lambda functions on
//! `127.0.0.1:$PORT`, over the embedded SQLite store by default, with demo data.
//! Not deployed; the functions under `functions/` are. It is the workspace's default member, so
//! `cargo run` from the root starts it.

mod demo;
mod demo_callback;
mod log_output;

use anyhow::Context as _;
use token_core::config::{Config, StoreKind};
use token_core::mail::MailConfig;
use token_core::{bootstrap, telemetry};
use token_http as http;
use token_store::sqlite::{sweeper, SqliteStore};

/// mimalloc rather than glibc's allocator: a token request allocates and frees many small
/// buffers, and glibc's `malloc`/`free` took about a tenth of the server's CPU under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Held to the end of main: dropping it writes the log lines still buffered.
    let (log_output, _flush_on_exit) = log_output::buffered_stdout();
    telemetry::init_with(log_output);
    let config = Config::from_env().context("configuration")?;
    let services = bootstrap::services(&config).await.context("start-up")?;
    let demo = demo::ensure(&services.ctx, services.geolocation(), &config.data_dir)
        .await
        .context("demo data")?;
    if config.store == StoreKind::Sqlite {
        // Its own connection to the file, so sweeps never hold the server's; on DynamoDB the
        // table's TTL removes expired items instead.
        SqliteStore::open_in_dir(&config.data_dir)
            .context("open the SQLite store for the sweeper")?
            .spawn_sweeper(services.ctx.clock.clone(), sweeper::SWEEP_INTERVAL);
    }

    let address = std::net::SocketAddr::from(([127, 0, 0, 1], config.port));
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("bind {address} (set PORT to use another port)"))?;
    let base = format!("http://{address}");
    demo_callback::register(&services.ctx, &demo, &base)
        .await
        .context("demo callback")?;
    println!("{}", demo.instructions(&base));
    println!("{}", demo_callback::instructions(&demo, &base));
    println!("{}", mail_destination(&config)?);
    println!(
        "Token service listening on http://{address} (geolocation {}); Ctrl-C stops it.",
        services.geolocation()
    );

    let router = http::local_router(services).merge(demo_callback::routes(demo, base));
    // With the peer's address, which the per-address limits count.
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    // The spans still batched, when traces are exported (off the async workers: it blocks).
    let _ = tokio::task::spawn_blocking(token_core::traces::flush).await;
    Ok(())
}

/// Where one-time passwords go, so the developer knows where to read them.
fn mail_destination(config: &Config) -> anyhow::Result<String> {
    let mail = MailConfig::from_env(config).context("mail configuration")?;
    Ok(match &mail.smtp_url {
        Some(url) => format!(
            "One-time-password mails go to the SMTP server {}:{} (SMTP_URL).",
            url.host, url.port
        ),
        None => format!(
            "One-time-password mails are written as .eml files to {} (set SMTP_URL to send them).",
            mail.outbox_dir.display()
        ),
    })
}
