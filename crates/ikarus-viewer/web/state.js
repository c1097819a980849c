// The page's mutable state in one place (the rest of the page is wiring): what the server last
// sent, the drag pipeline, the pointer, playback, and what the last drawn frame showed.

/** The element with `id`. */
export const $ = (id) => document.getElementById(id);

export const state = {
  /** The WebSocket to the server. */
  socket: null,
  /** The last `skeleton` reply, the last `pose` reply (null until the first after a load), the
   * last `mesh` reply, the server's upload limit in bytes. */
  skeleton: null, pose: null, mesh: null, maxUpload: Infinity,
  /** Drags: one in flight, at most one sent per displayed frame, the newest waiting. */
  dragInFlight: false, pendingDrag: null, dragSentThisFrame: false,
  /** The joint picked last (the gizmo's), and the drag under way ({ name, plane, offset }). */
  selectedJoint: null, dragging: null,
  /** Playback at the page's clock; a frame request in flight. */
  playing: false, playStart: 0, playFrom: 0, frameInFlight: false,
  /** What the last rendered frame showed (the test hooks read screen positions from it). */
  drawn: { skeleton: null, pose: null },
};

/** Sends `message` to the server when connected. */
export function send(message) {
  if (state.socket?.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(message));
}
