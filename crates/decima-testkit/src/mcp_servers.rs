//! Where the reference MCP servers are for tests and benches: installed by `scripts/test.sh`
//! (`ensure_mcp_servers`) at fixed versions under `target/mcp-servers`, or where
//! `$DECIMA_MCP_SERVERS` says, and run with `node` by path.

use std::path::{Path, PathBuf};

/// The entry script of a reference server (`"server-everything"`, `"server-filesystem"`).
/// Panics, naming how to install them, when they are missing: a test that needs them fails.
#[allow(clippy::panic)]
pub fn reference_server(name: &str) -> PathBuf {
    let dir = std::env::var_os("DECIMA_MCP_SERVERS").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/mcp-servers/node_modules/@modelcontextprotocol")
        },
        PathBuf::from,
    );
    let script = dir.join(name).join("dist/index.js");
    if !script.is_file() {
        panic!(
            "the reference MCP server {name} is not installed at {}: run scripts/test.sh, or \
             `source scripts/lib.sh && ensure_mcp_servers`",
            dir.display()
        );
    }
    script
}
