//! Claude Desktop's `claude_desktop_config.json`: the `mcpServers` object most analysts
//! already have. Each entry is a stdio server (`command`, `args`, `env`) or, in the form
//! several clients share, a remote one (`url`, `headers`, with `type` "http" or
//! "streamable-http"). An SSE-only server is refused by name: Decima speaks streamable HTTP.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::{MAX_SERVER_NAME_CHARS, Place, ServerConfig, Transport};
use crate::error::{McpError, Result};

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<BTreeMap<String, Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    disabled: bool,
}

/// The servers of a Claude Desktop configuration, validated, in the file's order of names.
/// Names are made into server names (`[A-Za-z0-9_-]`, at most 32 characters); stdio servers
/// are placed at `place`. Any entry that cannot be imported fails the whole import, naming
/// every problem, so nothing is half imported.
pub fn parse(json: &str, place: Place) -> Result<Vec<ServerConfig>> {
    let file: File = serde_json::from_str(json).map_err(|e| {
        McpError::Config(format!(
            "this is not a Claude Desktop configuration ({e}); it is the JSON file with an \
             \"mcpServers\" object"
        ))
    })?;
    let Some(servers) = file.mcp_servers else {
        return Err(McpError::Config(
            "the file has no \"mcpServers\" object, so there is nothing to import".into(),
        ));
    };
    let mut out: Vec<ServerConfig> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for (raw_name, entry) in servers {
        let name = server_name(&raw_name);
        if out.iter().any(|s| s.name == name) {
            problems.push(format!(
                "{raw_name:?} and another entry both become the server name {name:?}"
            ));
            continue;
        }
        let transport = match (entry.command, entry.url) {
            (Some(command), None) => Transport::Stdio {
                command,
                args: entry.args,
                env: entry.env,
                cwd: entry.cwd,
                place,
            },
            (None, Some(url)) => {
                if entry.kind.as_deref() == Some("sse") {
                    problems.push(format!(
                        "{raw_name:?} is an SSE server; Decima speaks streamable HTTP (most \
                         servers offer it at /mcp)"
                    ));
                    continue;
                }
                Transport::Http {
                    url,
                    headers: entry.headers,
                    bearer_token_env: None,
                    bearer_token: None,
                }
            }
            (Some(_), Some(_)) => {
                problems.push(format!("{raw_name:?} has both a command and a url"));
                continue;
            }
            (None, None) => {
                problems.push(format!("{raw_name:?} has neither a command nor a url"));
                continue;
            }
        };
        let mut config = ServerConfig::stdio(name, "", Vec::new());
        config.transport = transport;
        config.enabled = !entry.disabled;
        if let Err(e) = config.validate() {
            problems.push(e.to_string());
            continue;
        }
        out.push(config);
    }
    if !problems.is_empty() {
        return Err(McpError::Config(format!(
            "nothing was imported: {}",
            problems.join("; ")
        )));
    }
    Ok(out)
}

/// A Claude Desktop entry's name as a server name: other characters become '_', and it is cut
/// to the longest server name.
pub fn server_name(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_SERVER_NAME_CHARS)
        .collect();
    if name.is_empty() {
        name.push_str("server");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{
      "globalShortcut": "",
      "mcpServers": {
        "filesystem": {
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ana/Desktop"]
        },
        "postgres db": {
          "command": "uvx",
          "args": ["mcp-server-postgres"],
          "env": {"PGPASSWORD": "s3cret"}
        },
        "tickets": {"type": "http", "url": "https://mcp.example.com/mcp",
                    "headers": {"X-Team": "risk"}}
      }
    }"#;

    #[test]
    fn a_real_shaped_file_imports_every_server() {
        let servers = parse(SAMPLE, Place::Docker).unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["filesystem", "postgres_db", "tickets"]);
        match &servers[1].transport {
            Transport::Stdio {
                command,
                env,
                place,
                ..
            } => {
                assert_eq!(command, "uvx");
                assert_eq!(env.get("PGPASSWORD").map(String::as_str), Some("s3cret"));
                assert_eq!(*place, Place::Docker);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&servers[2].transport, Transport::Http { url, .. } if url.ends_with("/mcp"))
        );
    }

    #[test]
    fn one_bad_entry_imports_nothing_and_says_which() {
        let json = r#"{"mcpServers": {"ok": {"command": "x"}, "broken": {"args": []},
                        "old": {"type": "sse", "url": "http://h/sse"}}}"#;
        let e = parse(json, Place::Host).unwrap_err().to_string();
        assert!(e.contains("nothing was imported"), "{e}");
        assert!(e.contains("\"broken\" has neither"), "{e}");
        assert!(e.contains("SSE"), "{e}");
    }

    #[test]
    fn names_that_collide_once_cleaned_are_refused() {
        let json = r#"{"mcpServers": {"a b": {"command": "x"}, "a_b": {"command": "y"}}}"#;
        assert!(parse(json, Place::Host).is_err());
    }

    #[test]
    fn not_a_config_says_what_was_expected() {
        let e = parse("[1,2]", Place::Host).unwrap_err().to_string();
        assert!(e.contains("mcpServers"), "{e}");
        let e = parse("{}", Place::Host).unwrap_err().to_string();
        assert!(e.contains("nothing to import"), "{e}");
    }
}
