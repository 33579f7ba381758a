//! The host tools' JSON schemas and argument parsing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use decima_core::FailureClass;
use decima_sandbox::host::tools;

#[test]
fn schemas_name_the_three_tools_with_their_required_fields() {
    let schemas = tools::schemas(decima_process::ShellKind::Posix);
    let names: Vec<_> = schemas
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shell", "read_file", "write_file"]);
    for s in &schemas {
        assert!(s["description"].as_str().unwrap().len() > 20);
        assert_eq!(s["parameters"]["type"], "object");
    }
    assert_eq!(
        schemas[0]["parameters"]["required"],
        serde_json::json!(["command"])
    );
    assert_eq!(
        schemas[0]["parameters"]["properties"]["timeout_s"]["type"],
        "integer"
    );
    assert_eq!(
        schemas[1]["parameters"]["required"],
        serde_json::json!(["path"])
    );
    assert_eq!(
        schemas[1]["parameters"]["properties"]["offset"]["type"],
        "integer"
    );
    assert_eq!(
        schemas[1]["parameters"]["properties"]["limit"]["type"],
        "integer"
    );
    assert_eq!(
        schemas[2]["parameters"]["required"],
        serde_json::json!(["path", "content"])
    );
}

#[test]
fn valid_arguments_parse() {
    let req = tools::parse_shell(r#"{"command": "ls -la", "timeout_s": 5}"#).unwrap();
    assert_eq!(req.command, "ls -la");
    assert_eq!(req.timeout, Some(Duration::from_secs(5)));
    assert_eq!(
        tools::parse_shell(r#"{"command": "ls"}"#).unwrap().timeout,
        None
    );
    let read = tools::parse_read_file(r#"{"path": "a.txt", "offset": 10, "limit": 5}"#).unwrap();
    assert_eq!(
        (read.path.as_str(), read.offset, read.limit),
        ("a.txt", Some(10), Some(5))
    );
    let write = tools::parse_write_file(r#"{"path": "a.txt", "content": ""}"#).unwrap();
    assert_eq!((write.path.as_str(), write.content.as_str()), ("a.txt", ""));
    // Extra fields a model adds are ignored.
    assert!(tools::parse_shell(r#"{"command": "ls", "why": "because"}"#).is_ok());
}

fn data_error(
    result: Result<impl std::fmt::Debug, decima_sandbox::host::ToolError>,
    needles: &[&str],
) {
    let err = result.unwrap_err();
    assert_eq!(err.class, FailureClass::Data, "{err:?}");
    for needle in needles {
        assert!(
            err.message.contains(needle),
            "{:?} does not mention {needle:?}",
            err.message
        );
    }
}

#[test]
fn arguments_that_are_not_json_are_data_failures() {
    data_error(
        tools::parse_shell("ls -la"),
        &["invalid arguments for shell", "not valid JSON"],
    );
    data_error(
        tools::parse_read_file("{\"path\": "),
        &["read_file", "not valid JSON"],
    );
    data_error(
        tools::parse_write_file(""),
        &["write_file", "not valid JSON"],
    );
    data_error(
        tools::parse_shell(r#"["ls"]"#),
        &["expected a JSON object, got an array"],
    );
    data_error(tools::parse_shell("null"), &["got null"]);
}

#[test]
fn missing_fields_are_data_failures_that_name_the_field() {
    data_error(
        tools::parse_shell("{}"),
        &["shell", "missing field `command`"],
    );
    data_error(
        tools::parse_read_file(r#"{"offset": 1}"#),
        &["missing field `path`"],
    );
    data_error(
        tools::parse_write_file(r#"{"path": "a"}"#),
        &["missing field `content`"],
    );
}

#[test]
fn mistyped_or_out_of_range_fields_are_data_failures() {
    data_error(
        tools::parse_shell(r#"{"command": 42}"#),
        &["invalid type for `command`", "got a number"],
    );
    data_error(
        tools::parse_shell(r#"{"command": "ls", "timeout_s": "5"}"#),
        &["`timeout_s`: expected an integer, got a string"],
    );
    data_error(
        tools::parse_shell(r#"{"command": "ls", "timeout_s": -1}"#),
        &["`timeout_s`", "at least 1", "-1"],
    );
    data_error(
        tools::parse_shell(r#"{"command": "ls", "timeout_s": 0}"#),
        &["at least 1"],
    );
    data_error(tools::parse_shell(r#"{"command": "  "}"#), &["empty"]);
    data_error(
        tools::parse_read_file(r#"{"path": "a", "offset": 0}"#),
        &["`offset`", "at least 1"],
    );
    data_error(
        tools::parse_read_file(r#"{"path": "a", "limit": 1.5}"#),
        &["`limit`", "1.5"],
    );
    data_error(
        tools::parse_write_file(r#"{"path": ["a"], "content": "x"}"#),
        &["`path`", "got an array"],
    );
}
