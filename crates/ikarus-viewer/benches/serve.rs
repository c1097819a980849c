//! Drag → pose reply over loopback: a real WebSocket client sends a `drag` for the built-in
//! humanoid's left hand and waits for the server's `pose` reply (solve, FK, JSON both ways).
//! The target alternates between two points so every solve has work to do.
//!
//! ## What explains the numbers
//!
//! - The solve is 7.6 µs (CCD) and 2.3 µs (limb7) of the reply; the rest is the socket, tokio
//!   wake-ups (the solve runs under `block_in_place`) and JSON.
//! - The solve on tokio's blocking pool, tried first, took 125 µs a reply under a load of 4–7,
//!   against 60–107 µs with `block_in_place`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::{SinkExt, StreamExt};
use ikarus_viewer::Catalog;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const TARGETS: [[f64; 3]; 2] = [[0.45, 1.15, 0.25], [0.40, 1.05, 0.30]];

async fn reply(socket: &mut Socket) -> Value {
    loop {
        if let Some(Ok(Message::Text(text))) = socket.next().await {
            return serde_json::from_str(text.as_str()).expect("JSON reply");
        }
    }
}

async fn round_trip(socket: &mut Socket, request: &str) -> Value {
    socket
        .send(Message::Text(request.into()))
        .await
        .expect("send");
    reply(socket).await
}

fn drag_reply(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut socket = runtime.block_on(async {
        let (listener, address) = ikarus_viewer::bind(0).await.unwrap();
        tokio::spawn(ikarus_viewer::serve(listener, Catalog::open(&[]).unwrap()));
        let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{address}/ws"))
            .await
            .unwrap();
        for _ in 0..3 {
            reply(&mut socket).await; // welcome, skeleton, pose
        }
        socket
    });
    let drags: Vec<String> = TARGETS
        .iter()
        .map(|t| json!({"type": "drag", "joint": "leftHand", "position": t}).to_string())
        .collect();
    let mut group = c.benchmark_group("drag_reply");
    for config in [json!({"kind": "ccd"}), json!({"kind": "limb7"})] {
        let kind = config["kind"].as_str().unwrap().to_owned();
        let select = json!({"type": "solver", "config": config}).to_string();
        let pose = runtime.block_on(round_trip(&mut socket, &select));
        assert_eq!(pose["type"], "pose");
        // The solve's own share, as the server reports it (`time_us`), for comparison.
        let mut solve_us: Vec<f64> = (0..1000)
            .map(|k| {
                let pose = runtime.block_on(round_trip(&mut socket, &drags[k % 2]));
                pose["report"]["time_us"].as_f64().unwrap()
            })
            .collect();
        solve_us.sort_by(f64::total_cmp);
        eprintln!(
            "{kind}: median solve time in the server {:.1} µs",
            solve_us[500]
        );
        let mut k = 0;
        group.bench_function(&kind, |b| {
            b.iter(|| {
                k += 1;
                let pose = runtime.block_on(round_trip(&mut socket, &drags[k % 2]));
                black_box(pose)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, drag_reply);
criterion_main!(benches);
