//! The client against an in-process `rmcp` server, where the server's side can be watched:
//! an abandoned call (the run stopped, or the call timed out) reaches the server as
//! `notifications/cancelled` for that request, and the server's tool stops.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_mcp::host_process::StderrTail;
use decima_mcp::{McpClient, McpError, ServerConfig};
use rmcp::ServerHandler;
use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A server with a tool that answers and one that waits until it is cancelled.
#[derive(Clone)]
struct Probe {
    /// Every `notifications/cancelled` the server received.
    cancelled: mpsc::UnboundedSender<CancelledNotificationParam>,
    /// Told when the waiting tool saw its request cancelled.
    stopped: mpsc::UnboundedSender<()>,
}

impl ServerHandler for Probe {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: serde_json::Map<String, serde_json::Value> =
            serde_json::from_value(serde_json::json!({"type": "object"})).unwrap();
        let schema = Arc::new(schema);
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("quick", "Answers at once", schema.clone()),
            Tool::new("wait", "Waits until cancelled", schema),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "wait" {
            context.ct.cancelled().await;
            let _ = self.stopped.send(());
            return Err(ErrorData::internal_error("cancelled", None));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text("quick answer")]).into())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        let _ = self.cancelled.send(notification);
    }
}

struct Connected {
    client: McpClient,
    cancelled: mpsc::UnboundedReceiver<CancelledNotificationParam>,
    stopped: mpsc::UnboundedReceiver<()>,
}

async fn connect(call_timeout_secs: u64) -> Connected {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let (stopped_tx, stopped) = mpsc::unbounded_channel();
    let probe = Probe {
        cancelled: cancelled_tx,
        stopped: stopped_tx,
    };
    tokio::spawn(async move {
        if let Ok(server) = probe.serve(server_side).await {
            let _ = server.waiting().await;
        }
    });
    let mut config = ServerConfig::stdio("probe", "in-process", Vec::new());
    config.call_timeout_secs = call_timeout_secs;
    let (read, write) = tokio::io::split(client_side);
    let client = McpClient::attach(&config, read, write, StderrTail::default(), None)
        .await
        .unwrap();
    Connected {
        client,
        cancelled,
        stopped,
    }
}

async fn next<T>(rx: &mut mpsc::UnboundedReceiver<T>, what: &str) -> T {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen"))
        .unwrap()
}

#[tokio::test]
async fn a_stopped_call_is_cancelled_on_the_server() {
    let mut c = connect(120).await;
    let names: Vec<&str> = c.client.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["quick", "wait"]);
    let stop = CancellationToken::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let e = c
        .client
        .call("wait", serde_json::Map::new(), &stop)
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::Cancelled { .. }), "{e}");
    let notice = next(&mut c.cancelled, "notifications/cancelled").await;
    assert!(notice.request_id.is_some(), "{notice:?}");
    next(&mut c.stopped, "the server's tool stopping").await;
    // The connection is fine afterwards.
    let out = c
        .client
        .call("quick", serde_json::Map::new(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.text, "quick answer");
    c.client.shutdown().await;
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled_on_the_server() {
    let mut c = connect(1).await;
    let e = c
        .client
        .call("wait", serde_json::Map::new(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::CallTimeout { seconds: 1, .. }), "{e}");
    next(&mut c.cancelled, "notifications/cancelled").await;
    next(&mut c.stopped, "the server's tool stopping").await;
    c.client.shutdown().await;
}
