//! A server as the analyst configured it. The configuration is stored in SQLite without its
//! values that may be secret (environment values, header values, a bearer token): those go to
//! the secret store, and [`ServerConfig::secrets`] / [`ServerConfig::with_secrets`] split and
//! join them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{McpError, Result};

/// The handshake's timeout when none is set: long enough for `node` to load a server.
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 30;
/// A call's timeout when none is set.
pub const DEFAULT_CALL_TIMEOUT_SECS: u64 = 120;
/// Longest server name: it is part of every tool name offered, which may have 64 characters.
pub const MAX_SERVER_NAME_CHARS: usize = 32;

/// One MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerConfig {
    /// Unique among the app's servers; part of every tool name offered.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// Seconds the handshake may take.
    #[serde(default = "default_startup")]
    pub startup_timeout_secs: u64,
    /// Seconds one call may take.
    #[serde(default = "default_call")]
    pub call_timeout_secs: u64,
    /// The server's tools offered (its own names); empty offers all that are not denied.
    #[serde(default)]
    pub allow: Vec<String>,
    /// The server's tools never offered.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Whether runs use it (each conversation may still switch it off).
    #[serde(default = "yes")]
    pub enabled: bool,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transport {
    /// A process spoken to over stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Variables the analyst set; the rest of the environment is cleared.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// Its working directory; the workspace when unset.
        #[serde(default)]
        cwd: Option<String>,
        /// Where it runs.
        #[serde(default)]
        place: Place,
    },
    /// A streamable-HTTP endpoint, reached from the host.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// The environment variable that holds the bearer token, read when the server starts.
        #[serde(default)]
        bearer_token_env: Option<String>,
        /// The bearer token itself (without `Bearer `), kept in the secret store; blank in
        /// the stored form when one is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bearer_token: Option<String>,
    },
}

/// Where a stdio server runs.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Place {
    /// In the conversation's Docker sandbox, seeing `/workspace` and no network: the default,
    /// since a server is code the analyst did not write.
    #[default]
    Docker,
    /// On the host, with the analyst's rights: only when they say so.
    Host,
}

impl Place {
    /// The word the CLI and the window use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

fn default_startup() -> u64 {
    DEFAULT_STARTUP_TIMEOUT_SECS
}

fn default_call() -> u64 {
    DEFAULT_CALL_TIMEOUT_SECS
}

fn yes() -> bool {
    true
}

/// The values of a configuration that may be secret, by where they go.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Secrets {
    /// Environment values by variable.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Header values by header.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// An HTTP server's bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
}

impl Secrets {
    /// Whether there is nothing to keep.
    pub fn is_empty(&self) -> bool {
        self.env.is_empty() && self.headers.is_empty() && self.bearer_token.is_none()
    }
}

impl ServerConfig {
    /// A stdio server with the default timeouts.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        Self::with_transport(
            name,
            Transport::Stdio {
                command: command.into(),
                args,
                env: BTreeMap::new(),
                cwd: None,
                place: Place::default(),
            },
        )
    }

    /// A streamable-HTTP server with the default timeouts.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::with_transport(
            name,
            Transport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
                bearer_token: None,
            },
        )
    }

    fn with_transport(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            transport,
            startup_timeout_secs: DEFAULT_STARTUP_TIMEOUT_SECS,
            call_timeout_secs: DEFAULT_CALL_TIMEOUT_SECS,
            allow: Vec::new(),
            deny: Vec::new(),
            enabled: true,
        }
    }

    /// The same stdio server placed at `place` (an HTTP server is unchanged).
    pub fn at(mut self, place: Place) -> Self {
        if let Transport::Stdio { place: p, .. } = &mut self.transport {
            *p = place;
        }
        self
    }

    /// The handshake's timeout.
    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.startup_timeout_secs.max(1))
    }

    /// A call's timeout.
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs.max(1))
    }

    /// Whether a tool of this server (by its own name) is offered.
    pub fn offers(&self, tool: &str) -> bool {
        !self.deny.iter().any(|d| d == tool)
            && (self.allow.is_empty() || self.allow.iter().any(|a| a == tool))
    }

    /// Checks what a person typed before anything is stored or started.
    pub fn validate(&self) -> Result<()> {
        validate_name(&self.name)?;
        if self.startup_timeout_secs == 0 || self.call_timeout_secs == 0 {
            return Err(McpError::Config(format!(
                "MCP server {:?}: timeouts are whole seconds above 0",
                self.name
            )));
        }
        match &self.transport {
            Transport::Stdio { command, env, .. } => {
                if command.trim().is_empty() {
                    return Err(McpError::Config(format!(
                        "MCP server {:?} has no command: give the program that runs it, e.g. \
                         `node /path/to/server.js`",
                        self.name
                    )));
                }
                for key in env.keys() {
                    validate_env_name(key)?;
                }
            }
            Transport::Http {
                url,
                headers,
                bearer_token_env,
                ..
            } => {
                let parsed = reqwest::Url::parse(url).map_err(|e| {
                    McpError::Config(format!(
                        "MCP server {:?}: {:?} is not a URL ({e}); give the full endpoint, \
                         e.g. http://127.0.0.1:3001/mcp",
                        self.name,
                        decima_core::names::echo_untrusted(url)
                    ))
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(McpError::Config(format!(
                        "MCP server {:?}: only http and https URLs are reached, not {}",
                        self.name,
                        parsed.scheme()
                    )));
                }
                for (name, value) in headers {
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                        McpError::Config(format!(
                            "MCP server {:?}: {:?} is not a header name",
                            self.name,
                            decima_core::names::echo_untrusted(name)
                        ))
                    })?;
                    reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                        McpError::Config(format!(
                            "MCP server {:?}: the value of header {name} has characters a \
                             header cannot carry",
                            self.name
                        ))
                    })?;
                }
                if let Some(var) = bearer_token_env {
                    validate_env_name(var)?;
                }
            }
        }
        Ok(())
    }

    /// The values that go to the secret store.
    pub fn secrets(&self) -> Secrets {
        match &self.transport {
            Transport::Stdio { env, .. } => Secrets {
                env: env.clone(),
                ..Secrets::default()
            },
            Transport::Http {
                headers,
                bearer_token,
                ..
            } => Secrets {
                headers: headers.clone(),
                bearer_token: bearer_token.clone().filter(|t| !t.is_empty()),
                ..Secrets::default()
            },
        }
    }

    /// The configuration as SQLite keeps it: every value from [`Self::secrets`] blanked, the
    /// names kept (so a list can say which variables are set).
    pub fn without_secrets(&self) -> Self {
        let mut out = self.clone();
        match &mut out.transport {
            Transport::Stdio { env, .. } => env.values_mut().for_each(String::clear),
            Transport::Http {
                headers,
                bearer_token,
                ..
            } => {
                headers.values_mut().for_each(String::clear);
                if let Some(t) = bearer_token {
                    t.clear();
                }
            }
        }
        out
    }

    /// A stored configuration with its secret values put back (a name whose value is gone
    /// stays blank).
    pub fn with_secrets(mut self, secrets: &Secrets) -> Self {
        match &mut self.transport {
            Transport::Stdio { env, .. } => {
                for (k, v) in env.iter_mut() {
                    if let Some(s) = secrets.env.get(k) {
                        v.clone_from(s);
                    }
                }
            }
            Transport::Http {
                headers,
                bearer_token,
                ..
            } => {
                for (k, v) in headers.iter_mut() {
                    if let Some(s) = secrets.headers.get(k) {
                        v.clone_from(s);
                    }
                }
                if bearer_token.is_some() {
                    bearer_token.clone_from(&secrets.bearer_token);
                }
            }
        }
        self
    }

    /// One line for a list: where it runs and what it runs.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                place,
                ..
            } => {
                let mut line = format!("stdio on {}: {command}", place.as_str());
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
            Transport::Http { url, .. } => format!("http: {url}"),
        }
    }
}

/// A server name: 1 to 32 characters of `[A-Za-z0-9_-]`, since it goes into tool names that a
/// provider checks against that set.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_SERVER_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(McpError::Config(format!(
            "{:?} is not a server name: use 1 to {MAX_SERVER_NAME_CHARS} letters, digits, '_' \
             or '-' (it becomes part of each tool's name, e.g. mcp__db__query)",
            decima_core::names::echo_untrusted(name)
        )))
    }
}

fn validate_env_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(McpError::Config(format!(
            "{:?} is not an environment variable name: use letters, digits and '_'",
            decima_core::names::echo_untrusted(name)
        )))
    }
}

/// Parses `KEY=VALUE` as typed on a command line.
pub fn parse_assignment(text: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(McpError::Config(format!(
            "{:?} is not KEY=VALUE",
            decima_core::names::echo_untrusted(text)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_break_a_tool_name_are_refused() {
        assert!(validate_name("db").is_ok());
        assert!(validate_name("my-server_2").is_ok());
        for bad in ["", "my server", "a.b", "ü", &"x".repeat(33)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn secrets_leave_the_stored_form_and_come_back() {
        let mut c = ServerConfig::stdio("db", "node", vec!["s.js".into()]);
        if let Transport::Stdio { env, .. } = &mut c.transport {
            env.insert("PGPASSWORD".into(), "hunter2".into());
        }
        let stored = serde_json::to_string(&c.without_secrets()).unwrap();
        assert!(!stored.contains("hunter2"), "{stored}");
        assert!(stored.contains("PGPASSWORD"));
        let back: ServerConfig = serde_json::from_str(&stored).unwrap();
        assert_eq!(back.with_secrets(&c.secrets()), c);
    }

    #[test]
    fn a_stdio_server_runs_in_the_sandbox_unless_told() {
        let c: ServerConfig = serde_json::from_value(serde_json::json!({
            "name": "fs",
            "transport": {"kind": "stdio", "command": "node"}
        }))
        .unwrap();
        assert!(matches!(
            c.transport,
            Transport::Stdio {
                place: Place::Docker,
                ..
            }
        ));
        assert_eq!(c.startup_timeout_secs, 30);
        assert_eq!(c.call_timeout_secs, 120);
        assert!(c.enabled);
    }

    #[test]
    fn bad_urls_headers_and_variables_are_refused() {
        assert!(ServerConfig::http("h", "not a url").validate().is_err());
        assert!(ServerConfig::http("h", "file:///etc").validate().is_err());
        let mut c = ServerConfig::http("h", "http://127.0.0.1:1/mcp");
        assert!(c.validate().is_ok());
        if let Transport::Http { headers, .. } = &mut c.transport {
            headers.insert("X-Key".into(), "a\nb".into());
        }
        assert!(c.validate().is_err());
        assert!(parse_assignment("A=b=c").unwrap() == ("A".into(), "b=c".into()));
        assert!(parse_assignment("=x").is_err());
    }

    #[test]
    fn allow_and_deny_lists_pick_the_tools() {
        let mut c = ServerConfig::stdio("s", "x", vec![]);
        assert!(c.offers("a"));
        c.deny = vec!["a".into()];
        assert!(!c.offers("a") && c.offers("b"));
        c.allow = vec!["b".into()];
        assert!(c.offers("b") && !c.offers("c"));
    }
}
