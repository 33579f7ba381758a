//! The SQLite and PostgreSQL schemas, built by their own migrations, compared: tables, columns,
//! types (mapped), nullability, defaults' presence, checks, keys, foreign keys, indexes and
//! triggers. Each side is read from the database's own catalogue, not from the migration files,
//! so what is compared is what the migrations built.
//!
//! Where the two differ by design, the difference is listed below with its reason; anything
//! else is drift.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use decima_store::{StoreLocation, known_versions};
use regex::Regex;
use sqlx::{PgPool, Row, SqlitePool};

/// SQLite objects with no PostgreSQL twin: the FTS5 index and its shadow tables, and SQLite's
/// own bookkeeping. PostgreSQL's search reads the GIN trigram index `messages_search` instead.
const SQLITE_ONLY_TABLES: &[&str] = &[
    "messages_fts",
    "messages_fts_config",
    "messages_fts_data",
    "messages_fts_docsize",
    "messages_fts_idx",
    // The switch a bulk insert turns its trigger off with (see its migration).
    "messages_fts_live",
    "sqlite_sequence",
    "_sqlx_migrations",
];
/// The FTS5 index is kept by triggers; the trigram index needs none.
const SQLITE_ONLY_TRIGGERS: &[&str] = &[
    "messages_fts_delete",
    "messages_fts_insert",
    "messages_fts_update",
];
const POSTGRES_ONLY_INDEXES: &[&str] = &["messages_search"];
/// Live updates: PostgreSQL tells listening desktops what changed; SQLite has no listeners.
const POSTGRES_ONLY_TRIGGERS: &[&str] = &[
    "messages_notify",
    "messages_notify_update",
    "events_notify",
    "reviews_notify",
];
/// SQLite's implicit rowid, which search pages by, is a column on PostgreSQL (with its unique
/// constraint).
const POSTGRES_ONLY_COLUMNS: &[(&str, &str)] = &[("messages", "row_id")];
/// Run leases: machines sharing a database cannot see each other's lock files; on SQLite, one
/// machine's kernel lock already says who runs what.
const POSTGRES_ONLY_TABLES: &[&str] = &["execution_leases"];
/// The lease's fence, one statement trigger per table a run writes (`<table>_fence`).
const POSTGRES_ONLY_TRIGGER_SUFFIX: &str = "_fence";

#[derive(Debug, Default, PartialEq, Eq)]
struct Schema {
    /// table → column → (type, not null, has a default)
    columns: BTreeMap<String, BTreeMap<String, (String, bool, bool)>>,
    /// table → primary key columns
    primary_keys: BTreeMap<String, Vec<String>>,
    /// (table, columns) of UNIQUE constraints
    uniques: BTreeSet<(String, Vec<String>)>,
    /// (table, column, referenced table, referenced column, on delete)
    foreign_keys: BTreeSet<(String, String, String, String, String)>,
    /// table → number of CHECK constraints (those that make an integer a boolean excepted)
    check_counts: BTreeMap<String, usize>,
    /// (table, column, sorted allowed values) of every `column IN (…)` check
    enums: BTreeSet<(String, String, Vec<String>)>,
    /// (table, column, operator, number) of every `column >= n`-like check
    bounds: BTreeSet<(String, String, String, String)>,
    /// index name → (table, unique, columns ("expr" for an expression), partial)
    indexes: BTreeMap<String, (String, bool, Vec<String>, bool)>,
    /// (table, trigger)
    triggers: BTreeSet<(String, String)>,
}

fn enum_lists(table: &str, sql: &str, out: &mut BTreeSet<(String, String, Vec<String>)>) {
    let re = Regex::new(r"(?i)\b(\w+)\s+IN\s*\(([^()]*)\)").unwrap();
    let value = Regex::new(r"'([^']*)'").unwrap();
    for c in re.captures_iter(sql) {
        let mut values: Vec<String> = value
            .captures_iter(&c[2])
            .map(|v| v[1].to_owned())
            .collect();
        if values.is_empty() {
            continue; // (0, 1): a boolean, compared as a type
        }
        values.sort();
        out.insert((table.to_owned(), c[1].to_owned(), values));
    }
}

fn bounds(table: &str, sql: &str, out: &mut BTreeSet<(String, String, String, String)>) {
    let re = Regex::new(r"\b([a-z_]+)\s*(>=|<=|>|<)\s*(\d+|[a-z_]+)\b").unwrap();
    for c in re.captures_iter(sql) {
        out.insert((
            table.to_owned(),
            c[1].to_owned(),
            c[2].to_owned(),
            c[3].to_owned(),
        ));
    }
}

/// The CHECK clauses of a CREATE TABLE statement, each with its parenthesised body.
fn sqlite_checks(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let upper = sql.to_ascii_uppercase();
    let mut from = 0;
    while let Some(i) = upper[from..].find("CHECK") {
        let start = from + i;
        let open = start + sql[start..].find('(').unwrap();
        let mut depth = 0;
        let mut end = open;
        for (j, ch) in sql[open..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(sql[open + 1..end].to_owned());
        from = end;
    }
    out
}

fn sqlite_type(declared: &str) -> String {
    match declared.to_ascii_uppercase().as_str() {
        "INTEGER" => "integer",
        "TEXT" => "text",
        "REAL" => "real",
        "BLOB" => "blob",
        other => return format!("unmapped {other}"),
    }
    .to_owned()
}

fn postgres_type(declared: &str) -> String {
    match declared {
        "bigint" => "integer",
        "text" => "text",
        "double precision" => "real",
        "bytea" => "blob",
        "boolean" => "boolean",
        other => return format!("unmapped {other}"),
    }
    .to_owned()
}

async fn read_sqlite(pool: &SqlitePool) -> Schema {
    let mut s = Schema::default();
    let tables: Vec<(String, String)> =
        sqlx::query_as("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(pool)
            .await
            .unwrap();
    let boolean = Regex::new(r"(?i)\b(\w+)\s+IN\s*\(\s*0\s*,\s*1\s*\)").unwrap();
    for (table, sql) in tables {
        if SQLITE_ONLY_TABLES.contains(&table.as_str()) {
            continue;
        }
        let checks = sqlite_checks(&sql);
        let booleans: BTreeSet<String> = checks
            .iter()
            .filter_map(|c| boolean.captures(c).map(|m| m[1].to_owned()))
            .collect();
        s.check_counts
            .insert(table.clone(), checks.len() - booleans.len());
        for c in &checks {
            if boolean.is_match(c) {
                continue;
            }
            enum_lists(&table, c, &mut s.enums);
            bounds(&table, c, &mut s.bounds);
        }
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('{table}') \
             ORDER BY pk"
        )))
        .fetch_all(pool)
        .await
        .unwrap();
        let mut columns = BTreeMap::new();
        let mut pk = Vec::new();
        for r in rows {
            let name: String = r.get(0);
            let declared: String = r.get(1);
            let not_null: bool = r.get(2);
            let default: Option<String> = r.get(3);
            let pk_index: i64 = r.get(4);
            if pk_index > 0 {
                pk.push(name.clone());
            }
            let ty = if booleans.contains(&name) {
                "boolean".to_owned()
            } else {
                sqlite_type(&declared)
            };
            // An INTEGER PRIMARY KEY is the rowid: never NULL, numbered by SQLite.
            let rowid = declared.eq_ignore_ascii_case("INTEGER") && pk_index > 0 && pk.len() == 1;
            columns.insert(name, (ty, not_null || rowid, default.is_some() || rowid));
        }
        s.primary_keys.insert(table.clone(), pk);
        s.columns.insert(table.clone(), columns);

        let fks = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list('{table}')"
        )))
        .fetch_all(pool)
        .await
        .unwrap();
        for r in fks {
            s.foreign_keys.insert((
                table.clone(),
                r.get(0),
                r.get(1),
                r.get::<Option<String>, _>(2).unwrap_or_default(),
                r.get::<String, _>(3).to_ascii_lowercase(),
            ));
        }

        let indexes = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT name, \"unique\", origin, partial FROM pragma_index_list('{table}')"
        )))
        .fetch_all(pool)
        .await
        .unwrap();
        for r in indexes {
            let name: String = r.get(0);
            let unique: bool = r.get(1);
            let origin: String = r.get(2);
            let partial: bool = r.get(3);
            let cols: Vec<Option<String>> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT name FROM pragma_index_xinfo('{name}') WHERE key ORDER BY seqno"
            )))
            .fetch_all(pool)
            .await
            .unwrap();
            let cols: Vec<String> = cols
                .into_iter()
                .map(|c| c.unwrap_or_else(|| "expr".to_owned()))
                .collect();
            match origin.as_str() {
                "c" => {
                    s.indexes
                        .insert(name, (table.clone(), unique, cols, partial));
                }
                "u" => {
                    s.uniques.insert((table.clone(), cols));
                }
                _ => {}
            }
        }
    }
    let triggers: Vec<(String, String)> =
        sqlx::query_as("SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger'")
            .fetch_all(pool)
            .await
            .unwrap();
    for (table, name) in triggers {
        if !SQLITE_ONLY_TRIGGERS.contains(&name.as_str()) {
            s.triggers.insert((table, name));
        }
    }
    s
}

async fn read_postgres(pool: &PgPool) -> Schema {
    let mut s = Schema::default();
    let rows = sqlx::query(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, \
                column_default IS NOT NULL OR is_identity = 'YES' \
         FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name <> '_sqlx_migrations' \
           AND NOT table_name = ANY($1)",
    )
    .bind(POSTGRES_ONLY_TABLES)
    .fetch_all(pool)
    .await
    .unwrap();
    for r in rows {
        let table: String = r.get(0);
        let column: String = r.get(1);
        let ty: String = r.get(2);
        let nullable: String = r.get(3);
        let default: bool = r.get(4);
        if POSTGRES_ONLY_COLUMNS.contains(&(table.as_str(), column.as_str())) {
            continue;
        }
        s.columns
            .entry(table)
            .or_default()
            .insert(column, (postgres_type(&ty), nullable == "NO", default));
    }
    for table in s.columns.keys() {
        s.check_counts.insert(table.clone(), 0);
        s.primary_keys.insert(table.clone(), Vec::new());
    }
    // Constraints, with their columns in key order.
    let rows = sqlx::query(
        "SELECT t.relname::text, c.contype::text, pg_get_constraintdef(c.oid), \
                ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, o) \
                      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n \
                      ORDER BY k.o), \
                rt.relname::text, \
                ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, o) \
                      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n \
                      ORDER BY k.o), \
                c.confdeltype::text \
         FROM pg_constraint c \
         JOIN pg_class t ON t.oid = c.conrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace \
         LEFT JOIN pg_class rt ON rt.oid = c.confrelid \
         WHERE n.nspname = current_schema() AND t.relname <> '_sqlx_migrations' \
           AND NOT t.relname = ANY($1)",
    )
    .bind(POSTGRES_ONLY_TABLES)
    .fetch_all(pool)
    .await
    .unwrap();
    let any_array = Regex::new(r"\(?(\w+)\)?\s*=\s*ANY\s*\(+ARRAY\[([^\]]*)\]").unwrap();
    let value = Regex::new(r"'([^']*)'").unwrap();
    let cast = Regex::new(r"\((\d+)\)::[a-z ]+").unwrap();
    for r in rows {
        let table: String = r.get(0);
        let kind: String = r.get(1);
        let def: String = r.get(2);
        let cols: Vec<String> = r.get(3);
        match kind.as_str() {
            "p" => {
                s.primary_keys.insert(table, cols);
            }
            "u" if POSTGRES_ONLY_COLUMNS
                .iter()
                .any(|(t, c)| *t == table && cols == [*c]) => {}
            "u" => {
                s.uniques.insert((table, cols));
            }
            "f" => {
                let ref_table: String = r.get(4);
                let ref_cols: Vec<String> = r.get(5);
                let on_delete = match r.get::<String, _>(6).as_str() {
                    "c" => "cascade",
                    "n" => "set null",
                    "r" => "restrict",
                    _ => "no action",
                };
                s.foreign_keys.insert((
                    table,
                    cols[0].clone(),
                    ref_table,
                    ref_cols[0].clone(),
                    on_delete.to_owned(),
                ));
            }
            "c" => {
                *s.check_counts.entry(table.clone()).or_default() += 1;
                for c in any_array.captures_iter(&def) {
                    let mut values: Vec<String> = value
                        .captures_iter(&c[2])
                        .map(|v| v[1].to_owned())
                        .collect();
                    values.sort();
                    s.enums.insert((table.clone(), c[1].to_owned(), values));
                }
                // PostgreSQL quotes keywords and casts literals: `("position" >= 0)`,
                // `(factor > (0)::double precision)`.
                let unquoted = def.replace('"', "");
                let plain = cast.replace_all(&unquoted, "$1");
                bounds(&table, &plain, &mut s.bounds);
            }
            _ => {}
        }
    }
    let rows = sqlx::query(
        "SELECT i.relname::text, t.relname::text, ix.indisunique, ix.indpred IS NOT NULL, \
                ARRAY(SELECT CASE WHEN k.n = 0 THEN 'expr' ELSE \
                        (SELECT a.attname::text FROM pg_attribute a \
                         WHERE a.attrelid = t.oid AND a.attnum = k.n) END \
                      FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(n, o) ORDER BY k.o) \
         FROM pg_index ix \
         JOIN pg_class i ON i.oid = ix.indexrelid \
         JOIN pg_class t ON t.oid = ix.indrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace \
         WHERE n.nspname = current_schema() \
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid)",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    for r in rows {
        let name: String = r.get(0);
        if POSTGRES_ONLY_INDEXES.contains(&name.as_str()) {
            continue;
        }
        s.indexes
            .insert(name, (r.get(1), r.get(2), r.get(4), r.get(3)));
    }
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT c.relname::text, tg.tgname::text FROM pg_trigger tg \
         JOIN pg_class c ON c.oid = tg.tgrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = current_schema() AND NOT tg.tgisinternal",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    s.triggers = rows
        .into_iter()
        .filter(|(_, name)| {
            !POSTGRES_ONLY_TRIGGERS.contains(&name.as_str())
                && !name.ends_with(POSTGRES_ONLY_TRIGGER_SUFFIX)
        })
        .collect();
    s
}

/// Compares one part of the schemas and names every difference.
fn diff<T: std::fmt::Debug + Ord + Clone>(
    what: &str,
    sqlite: impl IntoIterator<Item = T>,
    postgres: impl IntoIterator<Item = T>,
    out: &mut Vec<String>,
) {
    let a: BTreeSet<T> = sqlite.into_iter().collect();
    let b: BTreeSet<T> = postgres.into_iter().collect();
    for only in a.difference(&b) {
        out.push(format!("{what}: only in SQLite: {only:?}"));
    }
    for only in b.difference(&a) {
        out.push(format!("{what}: only in PostgreSQL: {only:?}"));
    }
}

fn compare(sqlite: &Schema, postgres: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let flat = |s: &Schema| -> Vec<(String, String, String, bool, bool)> {
        s.columns
            .iter()
            .flat_map(|(t, cols)| {
                cols.iter()
                    .map(|(c, (ty, nn, d))| (t.clone(), c.clone(), ty.clone(), *nn, *d))
            })
            .collect()
    };
    diff(
        "tables",
        sqlite.columns.keys().cloned(),
        postgres.columns.keys().cloned(),
        &mut out,
    );
    diff(
        "columns (table, column, type, not null, default)",
        flat(sqlite),
        flat(postgres),
        &mut out,
    );
    diff(
        "primary keys",
        sqlite.primary_keys.clone(),
        postgres.primary_keys.clone(),
        &mut out,
    );
    diff(
        "unique constraints",
        sqlite.uniques.clone(),
        postgres.uniques.clone(),
        &mut out,
    );
    diff(
        "foreign keys",
        sqlite.foreign_keys.clone(),
        postgres.foreign_keys.clone(),
        &mut out,
    );
    diff(
        "check counts",
        sqlite.check_counts.clone(),
        postgres.check_counts.clone(),
        &mut out,
    );
    diff(
        "checks' allowed values",
        sqlite.enums.clone(),
        postgres.enums.clone(),
        &mut out,
    );
    diff(
        "checks' bounds",
        sqlite.bounds.clone(),
        postgres.bounds.clone(),
        &mut out,
    );
    diff(
        "indexes",
        sqlite.indexes.clone(),
        postgres.indexes.clone(),
        &mut out,
    );
    diff(
        "triggers",
        sqlite.triggers.clone(),
        postgres.triggers.clone(),
        &mut out,
    );
    out
}

async fn both_schemas() -> (tempfile::TempDir, Schema, Schema) {
    let (dir, store) = common::temp_sqlite_store().await;
    let sqlite = read_sqlite(store.sqlite_pool().unwrap()).await;
    let url = decima_testkit::postgres::fresh_database("schema_parity").await;
    let location = StoreLocation::parse(&url).unwrap();
    decima_store::Store::migrate(&location).await.unwrap();
    let pool = PgPool::connect(&url).await.unwrap();
    let postgres = read_postgres(&pool).await;
    pool.close().await;
    (dir, sqlite, postgres)
}

#[tokio::test]
async fn the_two_schemas_are_the_same_schema() {
    let (_dir, sqlite, postgres) = both_schemas().await;
    // The reading itself must have found the schema, or an empty comparison would pass.
    assert!(sqlite.columns.len() >= 20, "{:?}", sqlite.columns.keys());
    assert!(sqlite.enums.len() >= 15, "{:?}", sqlite.enums);
    assert!(sqlite.indexes.len() >= 15, "{:?}", sqlite.indexes);
    assert!(sqlite.triggers.len() >= 5, "{:?}", sqlite.triggers);
    assert!(sqlite.foreign_keys.len() >= 20);
    let differences = compare(&sqlite, &postgres);
    assert!(
        differences.is_empty(),
        "the schemas drifted apart:\n{}",
        differences.join("\n")
    );
}

#[tokio::test]
async fn drift_is_found() {
    // The comparison must see a difference of each kind it claims to compare.
    let (_dir, sqlite, postgres) = both_schemas().await;
    let mut drifted = postgres;
    drifted
        .columns
        .get_mut("messages")
        .unwrap()
        .insert("pinned".to_owned(), ("integer".to_owned(), true, true));
    drifted
        .enums
        .retain(|(t, c, _)| !(t == "failures" && c == "resolution"));
    drifted.enums.insert((
        "failures".to_owned(),
        "resolution".to_owned(),
        vec![
            "abort".into(),
            "replan".into(),
            "retry".into(),
            "skip".into(),
        ],
    ));
    drifted
        .triggers
        .remove(&("messages".to_owned(), "messages_advance_seq".to_owned()));
    drifted.indexes.get_mut("messages_pinned").unwrap().3 = false;
    let differences = compare(&sqlite, &drifted).join("\n");
    for expected in [
        "\"messages\", \"pinned\", \"integer\"",
        "\"resolution\", [\"abort\", \"replan\", \"retry\", \"skip\"]",
        "\"messages_advance_seq\"",
        "\"messages_pinned\"",
    ] {
        assert!(
            differences.contains(expected),
            "{expected} missing from:\n{differences}"
        );
    }
}

#[test]
fn every_migration_has_its_twin() {
    // After the PostgreSQL baseline, each schema change is one migration of the same version
    // and name in both folders.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let names = |dir: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect()
    };
    let sqlite = names("sqlite");
    let postgres = names("postgres");
    let baseline = postgres
        .iter()
        .find(|n| n.ends_with("_baseline.sql"))
        .expect("migrations/postgres starts with a baseline")
        .split('_')
        .next()
        .unwrap()
        .to_owned();
    let after = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .filter(|n| n.split('_').next().unwrap() > baseline.as_str())
            .cloned()
            .collect()
    };
    assert_eq!(after(&sqlite), after(&postgres));
    assert!(
        sqlite.iter().any(|n| n.starts_with(&baseline)),
        "the baseline's version is the SQLite migration it equals"
    );
    let (s, p) = known_versions();
    assert_eq!(s, p, "both schemas end at the same version");
}
