//! The workspace panel's refresh after a call, whole: listing a workspace of 1,000 files (40
//! folders of 25) and joining them with the 1,000 `workspace.changed` events that name who
//! wrote each, newest first, on the host and in a running Docker container of the busybox
//! test image (start an engine and build the image with scripts/test.sh first). The bare
//! listing is measured beside it as the baseline. Goals: ≤ 50 ms on the host, ≤ 150 ms in
//! Docker.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_runtime::conversation_options::{self, ConversationOptions};
use decima_runtime::workspace;
use decima_sandbox::host::ShellRequest;
use decima_store::Store;
use serde_json::json;

const MAKE: &str = "for d in $(seq -w 0 39); do mkdir -p part-$d; for f in $(seq -w 0 24); do \
                    echo 'a,b' > part-$d/table-$f.csv; done; done";

fn panel(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (store, host, docker, on_host, in_docker) = rt.block_on(async {
        let store = Store::open_in_dir(dir.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let on_host = store.conversations().create("host", None).await.unwrap().id;
        let in_docker = store
            .conversations()
            .create("docker", None)
            .await
            .unwrap()
            .id;
        conversation_options::save(
            &store,
            in_docker,
            ConversationOptions {
                sandbox: Some("docker".into()),
                ..ConversationOptions::default()
            },
        )
        .await
        .unwrap();
        store
            .conversations()
            .set_sandbox_config(in_docker, Some(&json!({"image": "decima-test:busybox"})))
            .await
            .unwrap();
        let host = workspace::place(&store, dir.path(), on_host).await.unwrap();
        let docker = workspace::place(&store, dir.path(), in_docker)
            .await
            .unwrap();
        for place in [&host, &docker] {
            let made = place.sandbox.exec(ShellRequest::new(MAKE)).await.unwrap();
            assert_eq!(made.exit_code, Some(0), "{}", made.output);
        }
        for conversation in [on_host, in_docker] {
            for i in 0..1000 {
                let path = format!("part-{:02}/table-{:02}.csv", i / 25, i % 25);
                store
                    .events()
                    .append(
                        None,
                        Some(conversation),
                        workspace::CHANGED_EVENT,
                        &json!({"call_id": format!("call_{i}"), "name": "shell",
                                "files": [{"path": path, "size": 4, "created": true}]}),
                    )
                    .await
                    .unwrap();
            }
        }
        (store, host, docker, on_host, in_docker)
    });
    for (place, id) in [(&host, on_host), (&docker, in_docker)] {
        let listed = rt
            .block_on(workspace::entries(&store, place, id, false))
            .unwrap();
        assert_eq!(listed.len(), 1000);
        assert!(listed.iter().all(|e| e.written_by.is_some()));
    }

    let mut group = c.benchmark_group("workspace_panel_1000");
    for (name, place, id) in [("host", &host, on_host), ("docker", &docker, in_docker)] {
        group.bench_function(format!("{name}/refresh"), |b| {
            b.to_async(&rt).iter(|| async {
                black_box(workspace::entries(&store, place, id, false).await.unwrap())
            })
        });
        group.bench_function(format!("{name}/bare_listing"), |b| {
            b.to_async(&rt)
                .iter(|| async { black_box(place.sandbox.list_files().await.unwrap()) })
        });
    }
    group.finish();
    rt.block_on(async {
        if let Ok(engine) = decima_runtime::docker::engine(dir.path()).await {
            let _ = engine
                .remove_conversation(&in_docker.to_string(), true)
                .await;
        }
    });
}

criterion_group!(benches, panel);
criterion_main!(benches);
