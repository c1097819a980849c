//! # ikarus-viewer
//!
//! The web viewer behind `ikarus serve`: an axum server that serves a three.js page and runs
//! every solver for it over a WebSocket. All inverse kinematics runs here, in Rust, through
//! [`ikarus_solve::solve`]; the page only draws and edits targets.
//!
//! ## Conventions
//!
//! Model space, right-handed, the skeleton's length unit (metres for the built-in humanoid and
//! URDF robots, the file's unit for BVH), radians, quaternions `[x, y, z, w]`. Up is +Y, except
//! for URDF robots, whose own +Z-up frames are kept: the `skeleton` reply says which (`up`), and
//! only the page's drawing turns it to the screen's up.
//!
//! ## Protocol
//!
//! `GET /` is the page, `GET /ws` the WebSocket. Every message is a JSON text object tagged by
//! `type` ([`protocol::Request`] from the page, [`protocol::Reply`] from the server). Each
//! connection has its own [`Session`] (skeleton, pose, effectors, base, solver, undo/redo,
//! motion, key postures): one client's input never changes another's state.
//!
//! On connection the server sends `welcome` (`solvers`: every `SolverConfig` kind with its
//! default parameters; `sources`; `max_upload`), `skeleton` (`name`, `format`: `builtin` /
//! `bvh` / `urdf` / `mmd` / `gltf`, `up`: `[0, 1, 0]`, or `[0, 0, 1]` for URDF; per joint `name`,
//! `parent`, `rest_translation`, `rest_rotation`, `limit` as `{"kind": "hinge", "axis", "min",
//! "max"}` / `swing_twist` / `euler` / `mmd` / `free` / `locked`; `motion`: frames and frame
//! time; `humanoid`: per joint its VRM bone name or `null`; `ik_chains`: the file's declared IK
//! chains, `name`, `goal`, `effector`, `links`), for characters `mesh` ([`protocol::MeshInfo`]:
//! `vertices`, base64 little-endian `positions`/`normals` f32×3, `uvs` f32×2, `joints` u16×4,
//! `weights` f32×4, `indices` u32; `inverse_bind` column-major 4×4 per joint; `materials` with
//! `base_color`, `texture` as a data URL, `first_index`, `index_count`), and `pose`
//! (`positions` and `rotations` of every joint in model space, `effectors`, `base`, `report`,
//! `frame`, `can_undo`, `can_redo`, and for MMD models `ik`: `enabled` and per chain
//! `distance`, `iterations`, `limited`).
//!
//! | request | reply |
//! |---|---|
//! | `{"type":"load","source":"builtin:humanoid"}`, `{"type":"load","name":"a.bvh","text":"…"}` (`.bvh`, `.urdf`) or `{"type":"load","name":"a.vrm","base64":"…"}` (any format) | `skeleton`, `mesh` (characters), `keys`, `pose` |
//! | `{"type":"load","name":"m.vmd","base64":"…"}` on an MMD model, `….vrma` on a humanoid | `motion`, `pose` (frame 0) |
//! | `{"type":"ik","enabled":false}` (MMD models) | `pose` re-evaluated |
//! | `{"type":"set_effector","joint":"leftHand","position":[x,y,z]?,"orientation":[x,y,z,w]?}` | `pose` with `report` |
//! | `{"type":"remove_effector","joint":"leftHand"}` | `pose` |
//! | `{"type":"set_base","joint":"hips"}` (`null`: the root stays fixed) | `pose` |
//! | `{"type":"drag","joint":"leftHand","position":[x,y,z],"orientation":[x,y,z,w]?}` | `pose` with `report` |
//! | `{"type":"solver","config":{"kind":"ccd", …}}` | `pose` with `report` |
//! | `{"type":"trace"}` | `trace` (`position_errors`, `rotation_errors` after iteration 1, 2, …) |
//! | `{"type":"undo"}`, `{"type":"redo"}`, `{"type":"reset"}` | `pose` |
//! | `{"type":"frame","index":N}` | `pose` with `frame` |
//! | `{"type":"capture_key"}`, `{"type":"clear_keys"}` | `keys` (`count`) |
//! | `{"type":"generate","duration":T,"fps":30?,"profile":"minimum_acceleration"\|"minimum_jerk"?}` | `motion`, `pose` |
//! | `{"type":"export_bvh"}` | `bvh` (`name`, `text`) |
//! | `{"type":"retarget","name":"walk.bvh","text":"…"}` (or `base64`: `.bvh`, `.glb`, `.vrm`, `.vrma`) on a humanoid (VRM, built-in, BVH, PMX/PMD) | `motion`, `pose` (frame 0); each frame's `pose` has `overlay`: `source` joints beside the target, their `parents`, held `contacts` |
//! | `{"type":"retarget","name":"m.vmd","base64":"…","model_name":"m.pmx","model_base64":"…"}` (the VMD played with IK on that model; without `model_*`, on the loaded PMX/PMD) | as above; the VMD's frames at 30 fps |
//!
//! MMD models evaluate every pose through their rig (`frame` samples the VMD, then inheritance
//! and the declared IK chains run, [`ikarus_anim::mmd::MmdEvaluator`]); a `drag` or
//! `set_effector` on a chain's IK bone (e.g. `左足ＩＫ`) moves that bone to the position and
//! re-evaluates, so the MMD IK runs live; other joints use the chosen solver. A `.vrma` on a
//! humanoid goes through both normalised humanoid views, bone by VRM name, the hips path scaled
//! by the ratio of hips heights. `export_bvh` on an MMD model with a motion writes every frame
//! evaluated with IK.
//!
//! `retarget` runs [`ikarus_anim::retarget::retarget`] with the default configuration, the
//! maps as the page shows them (a VRM's own, else recognised from the names). A `.vmd` source
//! is played by [`ikarus_jobs::MmdPlayer`] (what `ikarus retarget --model` plays: compatible
//! IK, frames `0..=` the last bone key at 30 fps). Onto a PMX/PMD model the source is first
//! resampled to 30 fps, and the result is written by [`ikarus_jobs::vmd_bytes`] (each IK bone
//! on its effector, [`ikarus_anim::retarget::follow_ik_goals`]; the bytes `ikarus retarget …
//! --out x.vmd` writes), read back and bound like a loaded VMD: frames play through the
//! model's own IK, and the IK switch and IK-bone drags work on it.
//!
//! The `report` is the solver's [`ikarus_solve::SolveReport`] (`status`, `position_error` and
//! `rotation_error` measured by forward kinematics, `iterations`, `restarts`, `active_limits`,
//! `swivel` and `feasible_swivels` for `limb7`) plus `solver` and `time_us`. Consecutive drags
//! of one joint form one undo step. The `trace` re-runs the last solve with iteration budgets
//! 1, 2, … (at most 64; the solvers are deterministic), so each point is a real FK residual.
//!
//! Anything wrong — text that is not JSON, an unknown `type` or field, an unknown joint, a
//! non-finite or non-unit goal, an upload over [`MAX_UPLOAD_BYTES`], a file that does not
//! parse (the message names the file, line and column) — gets `{"type":"error","message":…}`
//! and leaves the session as it was; the connection and the server keep serving. The message
//! is the text of a [`RequestError`] (a file that does not load: [`LoadError`]), which
//! [`Session::handle`] returns as a value.

//! Solver configurations asking for more than 100,000 iterations are refused. Each message is
//! handled to the end before the next; on a multi-thread runtime the solve runs under
//! `block_in_place`, so other connections keep being served meanwhile.
//!
//! ## The page
//!
//! `web/index.html` with plain ES modules: `app.js` (socket, pointer interaction, file input
//! and drop, motion controls), `state.js` (the page's mutable state in one object),
//! `replies.js` (one handler per server reply type), `hooks.js` (`window.appState` and
//! `window.samplePixels()` for the browser tests),
//! `scene.js` (three.js drawing: bones, joints, targets, limit arcs and cones from the skeleton
//! reply, turned so the skeleton's `up` is the page's +Y and framed on its bounding box; picking
//! by the joints' projected screen positions), `batch.js` (the merged buffers it draws with) and
//! `panel.js` (solver menu and parameter inputs built from the welcome's default
//! configurations, report, residual chart, limb7 swivel slider).
//!
//! Characters are drawn as a three.js `SkinnedMesh`: one bone per joint, placed at the pose
//! reply's model transform, with the mesh's inverse binds, so the vertex shader skins by
//! `model_from_joint · inverse_bind`; the skeleton is drawn over it. `samplePixels({meshOnly:
//! true})` counts the mesh's pixels alone, with a 16 × 9 grid of counts for "where".
//!
//! The page keeps 60 fps while dragging even on software WebGL (the headless browser test's
//! SwiftShader): the skeleton is three draw calls (joints as shaded point sprites, bones as one
//! triangle buffer, grid, limits and targets as one line buffer), multisampling is off when the
//! WebGL renderer is a software one, it renders only when something changed, places only the
//! newest pose per drawn frame and rewrites the report text at most every 100 ms.
//! three.js comes from npm at the version pinned in `web/package-lock.json`: `build.rs` runs
//! `npm ci --omit=dev` into `OUT_DIR` and the files are embedded in the binary.

#![warn(missing_docs)]

mod catalog;
mod error;
mod mesh;
mod mmd;
pub mod protocol;
mod server;
mod session;

use std::net::SocketAddr;
use std::sync::Arc;

pub use catalog::{Catalog, solver_choices};
pub use error::{LoadError, RequestError};
pub use server::router;
pub use session::Session;

/// Largest uploaded file, in bytes (16 MiB; binary files arrive as base64, a third larger).
pub const MAX_UPLOAD_BYTES: usize = 16 * 1024 * 1024;

/// Serves the viewer on `listener` until the process ends.
///
/// # Errors
/// When accepting connections fails.
pub async fn serve(listener: tokio::net::TcpListener, catalog: Catalog) -> std::io::Result<()> {
    axum::serve(listener, router(Arc::new(catalog))).await
}

/// Binds `127.0.0.1:port` (0 picks a free port) and returns the listener and its address.
///
/// # Errors
/// When the port is taken or cannot be bound.
pub async fn bind(port: u16) -> std::io::Result<(tokio::net::TcpListener, SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let address = listener.local_addr()?;
    Ok((listener, address))
}

/// Binds `127.0.0.1:port`, calls `ready` with the bound address, and serves until the process
/// ends, on a tokio runtime of its own (for callers that are not async, like the CLI).
///
/// # Errors
/// When the runtime cannot start, the port cannot be bound, or serving fails.
pub fn run(port: u16, catalog: Catalog, ready: impl FnOnce(SocketAddr)) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (listener, address) = bind(port).await?;
        ready(address);
        serve(listener, catalog).await
    })
}
