//! `audit`: the audit events of one subject, newest first (docs/decisions.md, Audit events).

use serde_json::Value;
use token_core::context::Context;
use token_domain::audit::{rfc3339, AuditEvent, AuditSubject};
use token_store::AuditQuery;

use crate::args::AuditArgs;
use crate::error::CliError;
use crate::output::Output;

pub async fn run(args: &AuditArgs, ctx: &Context) -> Result<Output, CliError> {
    let subject = match (args.principal, args.client, args.family) {
        (Some(id), _, _) => AuditSubject::Principal(id),
        (_, Some(id), _) => AuditSubject::Client(id),
        (_, _, Some(id)) => AuditSubject::Family(id),
        // clap requires exactly one of them.
        _ => AuditSubject::Deployment,
    };
    let events = ctx
        .store
        .audit()
        .audit_events(AuditQuery {
            subject,
            since: args.since,
            now: ctx.clock.now(),
        })
        .await?;
    let records = events
        .iter()
        .map(|event| serde_json::to_value(event).unwrap_or(Value::Null))
        .collect();
    Ok(Output::lines(records, table(&events)))
}

/// Time, event, what it says beyond its name, then whom and from where.
fn table(events: &[AuditEvent]) -> String {
    if events.is_empty() {
        return "No audit events.".to_owned();
    }
    let rows: Vec<[String; 7]> = events
        .iter()
        .map(|event| {
            let show = |id: Option<String>| id.unwrap_or_else(|| "-".to_owned());
            [
                rfc3339::format(event.time),
                event.kind.name().to_owned(),
                detail(event),
                show(event.client_id.map(|id| id.to_string())),
                show(event.principal_id.map(|id| id.to_string())),
                show(event.family_id.map(|id| id.to_string())),
                show(event.request.source_address.map(|a| a.to_string())),
            ]
        })
        .collect();
    let header = [
        "TIME",
        "EVENT",
        "DETAIL",
        "CLIENT",
        "PRINCIPAL",
        "FAMILY",
        "SOURCE",
    ]
    .map(str::to_owned);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            row.iter()
                .zip(widths)
                .map(|(cell, width)| format!("{cell:width$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The kind's own fields (`reason=logout`, `grant=password`), from its JSON form.
fn detail(event: &AuditEvent) -> String {
    let Ok(Value::Object(kind)) = serde_json::to_value(&event.kind) else {
        return String::new();
    };
    let parts: Vec<String> = kind
        .iter()
        .filter(|(name, _)| name.as_str() != "event")
        .map(|(name, value)| match value {
            Value::String(text) => format!("{name}={text}"),
            other => format!("{name}={other}"),
        })
        .collect();
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(" ")
    }
}
