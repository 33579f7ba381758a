//! The JSON schemas of the host tools and parsing their arguments from the model's raw JSON.
//!
//! Arguments that are not JSON, or miss or mistype a field, are [`ToolError`]s of class
//! `Data` with a message that names the tool and the problem. Unknown extra fields are ignored.

use std::time::Duration;

use decima_process::ShellKind;
use serde_json::{Map, Value, json};

use super::{ReadFileRequest, ShellRequest, WriteFileRequest};
use crate::error::ToolError;

/// The `shell` tool's name.
pub const SHELL: &str = "shell";
/// The `read_file` tool's name.
pub const READ_FILE: &str = "read_file";
/// The `write_file` tool's name.
pub const WRITE_FILE: &str = "write_file";
/// The Python kernel tool's name.
pub const PYTHON: &str = "python";

/// What the model is told about the language of `shell` commands: a model writes Bash unless
/// told it is in PowerShell or `cmd.exe`.
fn shell_wording(kind: ShellKind) -> (&'static str, &'static str) {
    match kind {
        ShellKind::Posix => (
            "Run a command with `sh -c` in the workspace directory.",
            "The shell command line, run as `sh -c COMMAND`.",
        ),
        ShellKind::PowerShell => (
            "Run a PowerShell command in the workspace directory (this is Windows: write \
             PowerShell, not Bash).",
            "The PowerShell script to run; it may have several lines.",
        ),
        ShellKind::Cmd => (
            "Run a command with `cmd.exe /C` in the workspace directory (this is Windows \
             without PowerShell: write cmd.exe commands, not Bash).",
            "The command line for `cmd.exe /C`; several lines run as a batch file.",
        ),
    }
}

/// `{name, description, parameters}` for `shell`, in the words of the shell that runs it.
pub fn shell_schema(kind: ShellKind) -> Value {
    let (what, command) = shell_wording(kind);
    json!({
        "name": SHELL,
        "description": format!("{what} Stdout and stderr come back interleaved, with the exit code. Default timeout 120 s; at the timeout the command and all its children are killed. Background processes do not outlive the call. Long output is cut to a head and a tail and saved whole to a file you can grep."),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": command
                },
                "timeout_s": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 3600,
                    "description": "Seconds before the command is killed (default 120, at most 3600)."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }
    })
}

/// `{name, description, parameters}` for `python`.
pub fn python_schema() -> Value {
    json!({
        "name": PYTHON,
        "description": "Run Python code as one cell of this conversation's IPython kernel, in the workspace. Variables, imports and loaded data frames persist from call to call (the request lists what is in memory); load a file once and keep working on it. The value of the last expression comes back as IPython shows it, with what the cell printed. Charts drawn with matplotlib are saved under charts/ and shown. An exception comes back with its traceback. Default timeout 120 s; at the timeout the cell is interrupted (and the kernel restarted, its variables lost, if it does not stop).",
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The Python code of the cell (IPython: `%magic` and `!command` work)."
                },
                "timeout_s": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 3600,
                    "description": "Seconds before the cell is interrupted (default 120, at most 3600)."
                }
            },
            "required": ["code"],
            "additionalProperties": false
        }
    })
}

/// A `python` call's arguments: the cell's code and its timeout, if the model gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonArguments {
    /// The cell.
    pub code: String,
    /// Seconds before the cell is interrupted.
    pub timeout: Option<Duration>,
}

/// Parses `python` arguments. Empty code is refused.
pub fn parse_python(raw: &str) -> Result<PythonArguments, ToolError> {
    let args = object(PYTHON, raw)?;
    let code = string(PYTHON, &args, "code")?;
    if code.trim().is_empty() {
        return Err(ToolError::data(
            "invalid arguments for python: `code` is empty",
        ));
    }
    let timeout = positive(PYTHON, &args, "timeout_s")?.map(Duration::from_secs);
    Ok(PythonArguments { code, timeout })
}

/// `{name, description, parameters}` for `read_file`.
pub fn read_file_schema() -> Value {
    json!({
        "name": READ_FILE,
        "description": "Read lines of a text file in the workspace. Paths are relative to the workspace and may not leave it. Returns at most 2000 lines and 256 KiB at a time; a note says how to read on.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file, relative to the workspace."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The first line to return, counting from 1 (default 1)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines at most (default 2000)."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        }
    })
}

/// `{name, description, parameters}` for `write_file`.
pub fn write_file_schema() -> Value {
    json!({
        "name": WRITE_FILE,
        "description": "Write a whole file in the workspace, replacing it if it exists. Parent directories are created. Paths are relative to the workspace and may not leave it.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file, relative to the workspace."
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }
    })
}

/// The three schemas, in the order shell, read_file, write_file, for commands in `kind`.
pub fn schemas(kind: ShellKind) -> Vec<Value> {
    vec![shell_schema(kind), read_file_schema(), write_file_schema()]
}

/// The arguments as a JSON object, or a `Data` error naming the tool.
fn object(tool: &str, raw: &str) -> Result<Map<String, Value>, ToolError> {
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        ToolError::data(format!(
            "invalid arguments for {tool}: not valid JSON ({e})"
        ))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ToolError::data(format!(
            "invalid arguments for {tool}: expected a JSON object, got {}",
            kind(&other)
        ))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn string(tool: &str, args: &Map<String, Value>, field: &str) -> Result<String, ToolError> {
    match args.get(field) {
        Some(Value::String(s)) => Ok(s.clone()),
        None => Err(ToolError::data(format!(
            "invalid arguments for {tool}: missing field `{field}`"
        ))),
        Some(other) => Err(ToolError::data(format!(
            "invalid arguments for {tool}: invalid type for `{field}`: expected a string, got {}",
            kind(other)
        ))),
    }
}

/// An optional integer of at least 1 (`null` counts as absent).
fn positive(tool: &str, args: &Map<String, Value>, field: &str) -> Result<Option<u64>, ToolError> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v >= 1 => Ok(Some(v)),
            _ => Err(ToolError::data(format!(
                "invalid arguments for {tool}: `{field}` must be a whole number of at least 1, got {n}"
            ))),
        },
        Some(other) => Err(ToolError::data(format!(
            "invalid arguments for {tool}: invalid type for `{field}`: expected an integer, got {}",
            kind(other)
        ))),
    }
}

fn to_usize(v: Option<u64>) -> Option<usize> {
    v.map(|v| usize::try_from(v).unwrap_or(usize::MAX))
}

/// Parses `shell` arguments. An empty command or a timeout under 1 is refused; a timeout over
/// the maximum is cut to it when the command runs.
pub fn parse_shell(raw: &str) -> Result<ShellRequest, ToolError> {
    let args = object(SHELL, raw)?;
    let command = string(SHELL, &args, "command")?;
    if command.trim().is_empty() {
        return Err(ToolError::data(
            "invalid arguments for shell: `command` is empty",
        ));
    }
    let timeout = positive(SHELL, &args, "timeout_s")?.map(Duration::from_secs);
    Ok(ShellRequest {
        command,
        timeout,
        cwd: None,
    })
}

/// Parses `read_file` arguments. `offset` (counting lines from 1) and `limit` must be at
/// least 1.
pub fn parse_read_file(raw: &str) -> Result<ReadFileRequest, ToolError> {
    let args = object(READ_FILE, raw)?;
    Ok(ReadFileRequest {
        path: string(READ_FILE, &args, "path")?,
        offset: to_usize(positive(READ_FILE, &args, "offset")?),
        limit: to_usize(positive(READ_FILE, &args, "limit")?),
    })
}

/// Parses `write_file` arguments.
pub fn parse_write_file(raw: &str) -> Result<WriteFileRequest, ToolError> {
    let args = object(WRITE_FILE, raw)?;
    Ok(WriteFileRequest {
        path: string(WRITE_FILE, &args, "path")?,
        content: string(WRITE_FILE, &args, "content")?,
    })
}
