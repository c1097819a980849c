//! The HTTP routes: the page, its modules, the vendored three.js and meshoptimizer files, and
//! the WebSocket.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::catalog::Catalog;
use crate::session::{Session, error};

/// A page file: URL path, content type, contents.
type Asset = (&'static str, &'static str, &'static [u8]);

const JS: &str = "text/javascript; charset=utf-8";

/// The page and the modules it imports (three.js and meshoptimizer's simplifier from npm,
/// fetched by the build script).
const ASSETS: &[Asset] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("../web/index.html"),
    ),
    ("/app.js", JS, include_bytes!("../web/app.js")),
    ("/state.js", JS, include_bytes!("../web/state.js")),
    ("/replies.js", JS, include_bytes!("../web/replies.js")),
    ("/hooks.js", JS, include_bytes!("../web/hooks.js")),
    ("/scene.js", JS, include_bytes!("../web/scene.js")),
    ("/batch.js", JS, include_bytes!("../web/batch.js")),
    ("/panel.js", JS, include_bytes!("../web/panel.js")),
    (
        "/style.css",
        "text/css; charset=utf-8",
        include_bytes!("../web/style.css"),
    ),
    (
        "/vendor/three.module.js",
        JS,
        include_bytes!(concat!(
            env!("IKARUS_VIEWER_THREE"),
            "/build/three.module.js"
        )),
    ),
    (
        "/vendor/three.core.js",
        JS,
        include_bytes!(concat!(env!("IKARUS_VIEWER_THREE"), "/build/three.core.js")),
    ),
    (
        "/vendor/addons/controls/OrbitControls.js",
        JS,
        include_bytes!(concat!(
            env!("IKARUS_VIEWER_THREE"),
            "/examples/jsm/controls/OrbitControls.js"
        )),
    ),
    (
        "/vendor/addons/controls/TransformControls.js",
        JS,
        include_bytes!(concat!(
            env!("IKARUS_VIEWER_THREE"),
            "/examples/jsm/controls/TransformControls.js"
        )),
    ),
    (
        "/vendor/meshopt_simplifier.js",
        JS,
        include_bytes!(concat!(
            env!("IKARUS_VIEWER_MESHOPT"),
            "/meshopt_simplifier.js"
        )),
    ),
];

/// The viewer's routes over a shared catalog.
pub fn router(catalog: Arc<Catalog>) -> Router {
    let mut router = Router::new().route("/ws", get(upgrade));
    for &(path, content_type, body) in ASSETS {
        router = router.route(
            path,
            get(move || async move { ([(header::CONTENT_TYPE, content_type)], body) }),
        );
    }
    router
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .with_state(catalog)
}

async fn upgrade(State(catalog): State<Arc<Catalog>>, ws: WebSocketUpgrade) -> Response {
    // Messages up to four times the upload limit are read and answered with an error; only
    // larger ones close the connection.
    ws.max_message_size(4 * crate::MAX_UPLOAD_BYTES)
        .max_frame_size(4 * crate::MAX_UPLOAD_BYTES)
        .on_upgrade(move |socket| connection(socket, catalog))
        .into_response()
}

/// One page connection: its own [`Session`], one reply batch per message.
async fn connection(mut socket: WebSocket, catalog: Arc<Catalog>) {
    let mut session = Session::new(catalog);
    if send_all(&mut socket, session.greeting()).await.is_err() {
        return;
    }
    while let Some(Ok(message)) = socket.recv().await {
        let replies = match message {
            Message::Text(text) => {
                // On a multi-thread runtime the solve tells tokio it blocks, so the worker's
                // other tasks (the other connections) move to another thread meanwhile.
                if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
                    tokio::task::block_in_place(|| session.handle_text(text.as_str()))
                } else {
                    session.handle_text(text.as_str())
                }
            }
            Message::Binary(_) => vec![error(
                "binary messages are not part of the protocol; send JSON text".to_owned(),
            )],
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if send_all(&mut socket, replies).await.is_err() {
            return;
        }
    }
}

async fn send_all(
    socket: &mut WebSocket,
    replies: Vec<crate::protocol::Reply>,
) -> Result<(), axum::Error> {
    for reply in replies {
        let text = serde_json::to_string(&reply).unwrap_or_else(|e| {
            format!(r#"{{"type":"error","message":"cannot encode the reply: {e}"}}"#)
        });
        socket.send(Message::Text(text.into())).await?;
    }
    Ok(())
}
