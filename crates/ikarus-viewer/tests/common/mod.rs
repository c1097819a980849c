//! The WebSocket client the protocol tests share: a server on a free port, replies read until
//! one of a given type, requests sent.

#![allow(dead_code, reason = "each test file uses its own part")]

use futures_util::{SinkExt, StreamExt};
use ikarus_viewer::Catalog;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Serves `catalog` on a free port; returns the WebSocket URL.
pub async fn start(catalog: Catalog) -> String {
    let (listener, address) = ikarus_viewer::bind(0).await.unwrap();
    tokio::spawn(ikarus_viewer::serve(listener, catalog));
    format!("ws://{address}/ws")
}

/// Serves `catalog` and connects: the socket and the greeting replies (up to the first pose).
pub async fn connect(catalog: Catalog) -> (Socket, Vec<Value>) {
    let (mut socket, _) = tokio_tungstenite::connect_async(start(catalog).await)
        .await
        .unwrap();
    let greeting = until(&mut socket, "pose").await;
    (socket, greeting)
}

/// Serves the built-in catalog (the humanoid) and connects, past the greeting.
pub async fn connect_builtin() -> Socket {
    connect(Catalog::open(&[]).unwrap()).await.0
}

/// The next text reply (within 120 s: debug builds on a shared machine are slow).
pub async fn next(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(120), socket.next())
            .await
            .expect("a reply within 120 s")
            .expect("the connection stays open")
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// The next reply, which must be an error: its message.
pub async fn next_error(socket: &mut Socket) -> String {
    let reply = next(socket).await;
    assert_eq!(reply["type"], "error", "{reply}");
    reply["message"].as_str().unwrap().to_owned()
}

/// Sends `request`, which the server must refuse: the error's message.
pub async fn refused(socket: &mut Socket, request: &Value) -> String {
    send(socket, request).await;
    next_error(socket).await
}

/// Replies up to and including the first of type `until` (an error fails the test).
pub async fn until(socket: &mut Socket, until: &str) -> Vec<Value> {
    let mut replies = Vec::new();
    loop {
        let reply = next(socket).await;
        assert_ne!(reply["type"], "error", "{reply}");
        let done = reply["type"] == until;
        replies.push(reply);
        if done {
            return replies;
        }
    }
}

/// Sends a request.
pub async fn send(socket: &mut Socket, request: &Value) {
    socket
        .send(Message::Text(request.to_string().into()))
        .await
        .unwrap();
}

/// The file at `path`, base64-encoded as the page uploads binary files.
pub fn base64_file(path: &std::path::Path) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(std::fs::read(path).unwrap())
}

/// Uploads the binary file at `path` as `name`; returns the replies up to the next pose.
pub async fn upload(socket: &mut Socket, path: &std::path::Path, name: &str) -> Vec<Value> {
    let request = serde_json::json!({"type": "load", "name": name, "base64": base64_file(path)});
    send(socket, &request).await;
    until(socket, "pose").await
}

/// Loads the text file `text` as `name`; returns the replies up to the next pose.
pub async fn load_text(socket: &mut Socket, name: &str, text: &str) -> Vec<Value> {
    let request = serde_json::json!({"type": "load", "name": name, "text": text});
    send(socket, &request).await;
    until(socket, "pose").await
}

/// Retargets the text motion file at `path`, sent as `name`, onto the loaded character;
/// returns the replies up to the next pose.
pub async fn retarget_text(socket: &mut Socket, name: &str, path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let request = serde_json::json!({"type": "retarget", "name": name, "text": text});
    send(socket, &request).await;
    until(socket, "pose").await
}

/// The first reply of type `kind`.
pub fn of<'a>(replies: &'a [Value], kind: &str) -> &'a Value {
    replies.iter().find(|r| r["type"] == kind).unwrap()
}

/// The index of the joint called `name` in a `skeleton` reply.
///
/// # Panics
/// When the skeleton has no such joint.
pub fn joint_index(skeleton: &Value, name: &str) -> usize {
    skeleton["joints"]
        .as_array()
        .unwrap()
        .iter()
        .position(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("no joint {name}"))
}

/// A 3-vector in a reply (`[x, y, z]`).
pub fn vec3(value: &Value) -> glam::DVec3 {
    glam::DVec3::from_array(serde_json::from_value(value.clone()).unwrap())
}

/// The shared Bandai Namco walk (BVH): its path, or `None` when the shared data is missing
/// outside CI (`test` names the test in the skip message).
pub fn walk(test: &str) -> Option<std::path::PathBuf> {
    ikarus_testdata::require_file("bvh", "bandainamco_ds1_walk_normal_002.bvh", test)
}

/// The text of the shared walk ([`walk`]).
pub fn walk_text(test: &str) -> Option<String> {
    Some(std::fs::read_to_string(walk(test)?).unwrap())
}
