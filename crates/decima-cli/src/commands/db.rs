//! `decima db migrate`: bringing a database's schema up to this version, on purpose.

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
