//! `decima db migrate` and `decima db copy`: a shared database's schema brought up to this
//! version on purpose, and a local store moved into it.

use decima_store::{SchemaState, Store, StoreLocation};

use crate::error::CliError;

/// Applies the pending migrations and prints the schema version before and after.
pub async fn migrate(location: &StoreLocation) -> Result<(), CliError> {
    let (before, after) = Store::migrate(location).await?;
    let applied = before.pending.saturating_sub(after.pending);
    println!("database   {location}");
    println!("before     {}", describe(&before));
    println!("after      {}", describe(&after));
    if applied == 0 {
        println!("nothing to do: the schema was up to date");
    } else {
        println!("applied    {applied} migration(s)");
    }
    Ok(())
}

fn describe(state: &SchemaState) -> String {
    if state.applied == 0 {
        "empty (no Decima schema)".to_owned()
    } else if state.pending == 0 {
        format!("version {} (current)", state.applied)
    } else {
        format!(
            "version {} ({} migration(s) behind)",
            state.applied, state.pending
        )
    }
}

/// Copies the open (SQLite) store into the shared store at `to` and prints what it did.
pub async fn copy(store: &Store, to: &str) -> Result<(), CliError> {
    let location = StoreLocation::parse(to)?;
    let target = Store::connect(&location, decima_llm::tokens::store_counter()).await?;
    let report = store.copy_to(&target).await;
    target.close().await;
    let report = report?;
    println!("to         {location}");
    println!(
        "copied     {} conversation(s); {} already there, left alone",
        report.conversations_copied, report.conversations_present
    );
    let rows: Vec<String> = report
        .rows
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(table, n)| format!("{table} {n}"))
        .collect();
    if !rows.is_empty() {
        println!("rows       {}", rows.join(", "));
    }
    println!(
        "messages   {} here, {} there",
        report.source_messages, report.target_messages
    );
    println!("checksum   {} here", report.source_checksum);
    println!("           {} there", report.target_checksum);
    if report.source_checksum != report.target_checksum
        || report.source_messages != report.target_messages
    {
        return Err(CliError::Conflict(
            "the shared store's messages differ from this store's (see the checksums): a \
             conversation with the same id holds other messages there; nothing of it was \
             overwritten"
                .into(),
        ));
    }
    println!("verified   every message is there, unchanged");
    Ok(())
}
