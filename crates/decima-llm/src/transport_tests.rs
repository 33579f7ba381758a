use super::*;

#[test]
fn retry_after_in_both_forms() {
    assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
    let soon = std::time::SystemTime::now() + Duration::from_secs(30);
    let parsed = parse_retry_after(&httpdate::fmt_http_date(soon)).unwrap();
    assert!(
        parsed <= Duration::from_secs(30) && parsed >= Duration::from_secs(28),
        "{parsed:?}"
    );
    assert_eq!(
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(Duration::ZERO)
    );
    assert_eq!(parse_retry_after("soon"), None);
}

#[test]
fn error_messages_from_both_shapes() {
    assert_eq!(
            error_message(br#"{"error":{"message":"Invalid key","type":"invalid_request_error","code":"invalid_api_key"}}"#),
            "Invalid key (invalid_api_key)"
        );
    assert_eq!(
        error_message(
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        ),
        "Overloaded"
    );
    assert_eq!(
            error_message(
                br#"[{"error":{"code":400,"message":"Corrupted thought signature.","status":"INVALID_ARGUMENT"}}]"#
            ),
            "Corrupted thought signature. (INVALID_ARGUMENT)"
        );
    assert_eq!(
        error_message(b"<html>\n502 Bad Gateway\n</html>"),
        "<html> 502 Bad Gateway </html>"
    );
}

#[test]
fn keys_are_redacted() {
    assert_eq!(
        redact_key("bad key sk-canary-123", Some("sk-canary-123")),
        "bad key ***"
    );
}
