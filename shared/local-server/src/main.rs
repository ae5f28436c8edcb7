//! The local all-in-one server: every route of the three Lambda functions on
//! `127.0.0.1:$PORT`, over the embedded SQLite store by default, with demo data.
//! Not deployed; the functions under `functions/` are. It is the workspace's default member, so
//! `cargo run` from the root starts it.

mod demo;
mod demo_callback;
mod log_output;

use anyhow::Context as _;
use demo::DemoData;
use token_adapters::mail::MailConfig;
use token_adapters::{bootstrap, telemetry};
use token_core::config::{Config, StoreKind};
use token_http as http;
use token_store::sqlite::{sweeper, SqliteStore};

/// mimalloc rather than glibc's allocator: a token request allocates and frees many small
/// buffers, and glibc's `malloc`/`free` took about a tenth of the server's CPU under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The console's log filter when `RUST_LOG` is unset, empty or invalid: `info`, except the
/// `audit` target (`token_core::audit::TARGET`), which logs from `warn` only.
///
/// Decision: audit events stay off the console by default. Every event (`client.created`,
/// `user.created`, …, logged at INFO to the `audit` target) is still stored and read with
/// `tokenctl audit`; on the console, the demo data's first start buried the instructions under
/// a screenful of them, and each flow tried added more between the request lines.
/// `RUST_LOG=info` (or `RUST_LOG=info,audit=info`) shows them again. The Lambda functions keep
/// plain `info` (`telemetry::DEFAULT_DIRECTIVES`, the template's `LogLevel`): there the line is
/// the event's copy in CloudWatch.
const CONSOLE_DEFAULT_DIRECTIVES: &str = "info,audit=warn";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Held to the end of main: dropping it writes the log lines still buffered.
    let (log_output, console) = log_output::buffered_stdout();
    let config = Config::from_env().context("configuration")?;
    telemetry::init_with(&config.telemetry, log_output, CONSOLE_DEFAULT_DIRECTIVES);
    // Bound first: with `PORT=0` the system picks the port, which the geolocation then names.
    let requested = std::net::SocketAddr::from(([127, 0, 0, 1], config.port));
    let listener = tokio::net::TcpListener::bind(requested)
        .await
        .with_context(|| format!("bind {requested} (set PORT to use another port, 0 for any)"))?;
    let address = listener.local_addr().context("the bound address")?;
    let config = config
        .listening_on(address.port())
        .context("configuration")?;
    let services = bootstrap::services(&config).await.context("start-up")?;
    let demo = demo::ensure(&services.ctx, services.geolocation(), &config.data_dir)
        .await
        .context("demo data")?;
    if config.store.kind == StoreKind::Sqlite {
        // A store of its own on the file, sharing the server's writer: each batch of a sweep is
        // one write of the group commit. On DynamoDB the table's TTL removes expired items.
        SqliteStore::open_in_dir(&config.data_dir)
            .context("open the SQLite store for the sweeper")?
            .spawn_sweeper(services.ctx.clock.clone(), sweeper::SWEEP_INTERVAL);
    }

    let base = format!("http://{address}");
    demo_callback::register(&services.ctx, &demo, &base)
        .await
        .context("demo callback")?;
    // Start-up is done (bound, demo data written): the instructions come once, after the log
    // lines start-up wrote, and are not cut by them.
    let first_screen = banner(
        &demo,
        &base,
        &mail_destination(&config)?,
        services.geolocation().as_str(),
    );
    console
        .print_after_logs(&first_screen)
        .context("print the instructions")?;

    let scrape =
        std::sync::Arc::new(token_adapters::metrics::prometheus::PrometheusScrape::installed());
    let router = http::local_router(services, scrape).merge(demo_callback::routes(demo, base));
    // With the peer's address, which the per-address limits count.
    let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, service)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    // The spans still batched, when traces are exported (off the async workers: it blocks).
    let _ = tokio::task::spawn_blocking(token_adapters::traces::flush).await;
    Ok(())
}

/// The first screen: the demo credentials and a `curl` per flow, the browser flow, where mails
/// go, and where the server listens.
fn banner(demo: &DemoData, base: &str, mail_destination: &str, geolocation: &str) -> String {
    format!(
        "{}\n{}\n{mail_destination}\nToken service listening on {base} (geolocation \
         {geolocation}); Ctrl-C stops it.\n",
        demo.instructions(base),
        demo_callback::instructions(demo, base),
    )
}

/// Where one-time passwords go, so the developer knows where to read them.
fn mail_destination(config: &Config) -> anyhow::Result<String> {
    let mail = MailConfig::from_config(config).context("mail configuration")?;
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
