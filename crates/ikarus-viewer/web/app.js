// The page's wiring: the WebSocket to the server (which runs every solver), pointer
// interaction, the buttons, files and the motion controls. State is in `state.js`, the
// server's replies in `replies.js`, the tests' hooks in `hooks.js`.
import * as THREE from 'three';
import { SkeletonView } from './scene.js';
import { SolverPanel } from './panel.js';
import { $, state, send } from './state.js';
import { appState, installHooks, publish } from './hooks.js';
import { replyHandlers } from './replies.js';

const canvas = $('view');
const view = new SkeletonView(canvas);
const panel = new SolverPanel((config) => {
  appState.solver = config.kind;
  send({ type: 'solver', config });
});
installHooks(view, canvas);
const handlers = replyHandlers({ view, panel, setMotion, showError, download, dragDone, attachGizmo });

function connect() {
  state.socket = new WebSocket(`ws://${location.host}/ws`);
  state.socket.onopen = () => { $('status').textContent = `connected to ${location.host}`; };
  state.socket.onclose = () => { $('status').textContent = 'disconnected; reload to reconnect'; };
  state.socket.onmessage = (event) => {
    const reply = JSON.parse(event.data);
    handlers[reply.type]?.(reply);
  };
}

// Drags: one in flight at a time and at most one per displayed frame; the newest pending
// position goes with the next animation frame after the reply arrived, so the server never
// queues stale targets and no pose is solved that no frame would show (replies faster than
// the display took main-thread and server time from drawing: 93 poses/s for 50 frames/s).
function sendDrag(message) {
  if (state.dragInFlight || state.dragSentThisFrame) { state.pendingDrag = message; return; }
  state.dragInFlight = true;
  state.dragSentThisFrame = true;
  send(message);
}

function dragDone() {
  state.dragInFlight = false;
  flushDrag();
}

/** Sends the pending drag, if any and if allowed now (see `sendDrag`). */
function flushDrag() {
  if (state.pendingDrag && !state.dragInFlight && !state.dragSentThisFrame) {
    const m = state.pendingDrag;
    state.pendingDrag = null;
    sendDrag(m);
  }
}

let errorTimer;
function showError(message) {
  appState.lastError = message;
  appState.errors++;
  const box = $('error');
  box.textContent = message;
  box.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => { box.hidden = true; }, 8000);
}

// ---- pointer: click = effector + drag, shift-click = base, alt-click = release --------------
canvas.addEventListener('pointerdown', (event) => {
  const { pose, skeleton } = state;
  if (!pose || event.button !== 0) return;
  const index = view.pick(event.clientX, event.clientY);
  if (index < 0) return;
  const name = skeleton.joints[index].name;
  event.preventDefault();
  event.stopImmediatePropagation();
  if (event.shiftKey) { send({ type: 'set_base', joint: pose.base === name ? null : name }); return; }
  if (event.altKey) { send({ type: 'remove_effector', joint: name }); return; }
  state.selectedJoint = name;
  showJoint(index);
  const effector = pose.effectors.find((e) => e.joint === name);
  const start = new THREE.Vector3(...(effector?.position ?? pose.positions[index]));
  if (!effector) send({ type: 'set_effector', joint: name });
  state.dragging = { name, plane: start, offset: start.clone().sub(new THREE.Vector3(...pose.positions[index])) };
  view.orbit.enabled = false;
  view.beginInteraction();
  canvas.setPointerCapture(event.pointerId);
}, { capture: true });

canvas.addEventListener('pointermove', (event) => {
  if (!state.dragging) return;
  const p = view.dragPoint(event.clientX, event.clientY, state.dragging.plane);
  if (p) sendDrag({ type: 'drag', joint: state.dragging.name, position: p.toArray() });
});

canvas.addEventListener('pointerup', (event) => {
  if (!state.dragging) return;
  state.dragging = null;
  view.orbit.enabled = true;
  view.endInteraction();
  canvas.releasePointerCapture(event.pointerId);
  send({ type: 'trace' });
});

// ---- rotate gizmo: orientation goals ---------------------------------------------------------
function attachGizmo(target) {
  view.gizmoTarget.position.set(...target.position);
  const index = state.skeleton.joints.findIndex((j) => j.name === target.joint);
  view.gizmoTarget.quaternion.set(...(target.orientation ?? state.pose.rotations[index]));
  view.gizmo.attach(view.gizmoTarget);
}
/** The effector the gizmo turns: the joint picked last, else the newest effector. */
const gizmoEffector = () => {
  const name = state.selectedJoint ?? appState.selected.at(-1);
  return state.pose?.effectors.find((e) => e.joint === name);
};
view.gizmo.addEventListener('objectChange', () => {
  const target = gizmoEffector();
  if (!target) return;
  sendDrag({ type: 'drag', joint: target.joint, position: target.position, orientation: view.gizmoTarget.quaternion.toArray() });
});
view.gizmo.addEventListener('mouseUp', () => send({ type: 'trace' }));
$('rotate').addEventListener('change', () => {
  const target = gizmoEffector();
  if ($('rotate').checked && target) attachGizmo(target); else view.gizmo.detach();
});

// ---- buttons and keys ------------------------------------------------------------------------
$('undo').onclick = () => send({ type: 'undo' });
$('redo').onclick = () => send({ type: 'redo' });
$('reset').onclick = () => { state.selectedJoint = null; send({ type: 'reset' }); };
window.addEventListener('keydown', (event) => {
  // Keys belong to text fields and menus while they have focus; sliders and buttons pass them.
  const t = event.target;
  if (t.tagName === 'SELECT' || (t.tagName === 'INPUT' && ['text', 'number'].includes(t.type))) return;
  const key = event.key.toLowerCase();
  if ((event.ctrlKey || event.metaKey) && key === 'z') send({ type: event.shiftKey ? 'redo' : 'undo' });
  else if ((event.ctrlKey || event.metaKey) && key === 'y') send({ type: 'redo' });
  else if (key === 'r') { $('rotate').checked = !$('rotate').checked; $('rotate').dispatchEvent(new Event('change')); }
});
$('source').onchange = () => send({ type: 'load', source: $('source').value });
$('ik').onchange = () => send({ type: 'ik', enabled: $('ik').checked });

/** The picked joint's name, with its humanoid bone (VRM name) and IK chain when it has them. */
function showJoint(index) {
  const { skeleton } = state;
  const joint = skeleton.joints[index], bone = skeleton.humanoid[index];
  const chain = skeleton.ik_chains.find((c) => c.goal === joint.name);
  $('joint').textContent = [joint.name, bone && `humanoid ${bone}`, chain && `IK → ${chain.effector}`].filter(Boolean).join(' · ');
}

// ---- files: input or drop --------------------------------------------------------------------
/** False, after saying so, when `file` is over the server's upload limit (it would refuse it). */
function withinLimit(file) {
  if (file.size <= state.maxUpload) return true;
  showError(`${file.name}: ${file.size} bytes is larger than the ${state.maxUpload} byte upload limit`);
  return false;
}

/** A file's bytes as base64 (in chunks: `String.fromCharCode` takes a bounded argument list). */
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(binary);
}

async function upload(file) {
  if (!withinLimit(file)) return;
  if (/\.(bvh|urdf)$/i.test(file.name)) {
    send({ type: 'load', name: file.name, text: await file.text() });
    return;
  }
  // Binary formats (PMX, PMD, VMD, GLB, VRM, VRMA; glTF with embedded buffers) as base64.
  send({ type: 'load', name: file.name, base64: await base64Of(file) });
}
$('file').onchange = () => { if ($('file').files[0]) upload($('file').files[0]); $('file').value = ''; };

// A motion retargeted onto the loaded humanoid (the server runs ikarus_anim::retarget). A .vmd
// plays on the .pmx/.pmd chosen with it, else on the loaded MMD model.
async function retargetUpload(files) {
  const isModel = (f) => /\.(pmx|pmd)$/i.test(f.name);
  const motion = files.find((f) => !isModel(f)), model = files.find(isModel);
  if (!motion) {
    showError('choose the motion to retarget (with its .pmx/.pmd model for a .vmd)');
    return;
  }
  if (![motion, model].every((file) => !file || withinLimit(file))) return;
  const request = { type: 'retarget', name: motion.name };
  if (/\.bvh$/i.test(motion.name)) request.text = await motion.text();
  else request.base64 = await base64Of(motion);
  if (model && /\.vmd$/i.test(motion.name)) {
    request.model_name = model.name;
    request.model_base64 = await base64Of(model);
  }
  appState.retargeting = motion.name;
  send(request);
}
$('retarget-file').onchange = () => {
  const files = [...$('retarget-file').files];
  if (files.length) retargetUpload(files);
  $('retarget-file').value = '';
};
// The loaded humanoid posed from trackers (the server runs ikarus_anim::track): a recording,
// or a motion whose own bones give them (drawn beside as the truth).
async function trackUpload(file) {
  if (!withinLimit(file)) return;
  const request = { type: 'track', name: file.name };
  const points = $('track-points').value;
  if (points) request.points = Number(points);
  if (/\.(json|csv|bvh)$/i.test(file.name)) request.text = await file.text();
  else request.base64 = await base64Of(file);
  send(request);
}
$('track-file').onchange = () => {
  if ($('track-file').files[0]) trackUpload($('track-file').files[0]);
  $('track-file').value = '';
};
// The playing motion grounded on a terrain (the server runs ikarus_anim::ground).
$('terrain').onchange = () => {
  const preset = $('terrain').value;
  send(preset ? { type: 'ground', preset } : { type: 'ground' });
};
$('terrain-file').onchange = async () => {
  const file = $('terrain-file').files[0];
  $('terrain-file').value = '';
  if (!file || !withinLimit(file)) return;
  if (/\.json$/i.test(file.name)) send({ type: 'ground', name: file.name, text: await file.text() });
  else send({ type: 'ground', name: file.name, base64: await base64Of(file) });
};
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => {
  e.preventDefault();
  if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]);
});

// ---- motion: play/scrub (the page asks for frame N at its clock), keys, generate, export --------
function setMotion(motion) {
  appState.motion = motion;
  state.playing = false;
  $('play').textContent = 'Play';
  $('play').disabled = $('scrub').disabled = !motion;
  $('scrub').max = motion ? motion.frames - 1 : 0;
  $('frame').textContent = motion ? `– / ${motion.frames}` : '–';
}
$('play').onclick = () => {
  state.playing = !state.playing;
  $('play').textContent = state.playing ? 'Pause' : 'Play';
  state.playStart = performance.now();
  state.playFrom = Number($('scrub').value);
};
$('scrub').oninput = () => {
  state.playing = false;
  $('play').textContent = 'Play';
  send({ type: 'frame', index: Number($('scrub').value) });
};
function playTick(now) {
  if (!state.playing || !appState.motion || state.frameInFlight) return;
  const m = appState.motion;
  const elapsed = Math.max(0, now - state.playStart) / 1000;
  const index = (state.playFrom + Math.floor(elapsed / m.frame_time)) % m.frames;
  if (index === state.pose?.frame) return;
  state.frameInFlight = true;
  send({ type: 'frame', index });
}
$('capture').onclick = () => send({ type: 'capture_key' });
$('clear-keys').onclick = () => send({ type: 'clear_keys' });
$('generate').onclick = () => send({ type: 'generate', duration: Number($('duration').value), profile: $('profile').value });
$('export').onclick = () => send({ type: 'export_bvh' });

function download(name, text) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// ---- render loop: renders on demand, publishes screen coordinates, counts drawn frames --------
// `appState.frames` counts frames that were rendered (not animation callbacks), `appState.fps`
// is rendered frames per second over the last second: 0 while nothing changes.
let rendered = 0, fpsStart = performance.now();
// A frame's main-thread cost: from the animation callback to the first task after it, which
// runs once the frame is committed (with a software compositor, after the canvas was read
// back). Feeds the dynamic resolution while dragging.
const afterFrame = new MessageChannel();
let frameStart = 0;
afterFrame.port1.onmessage = () => view.frameCost(performance.now() - frameStart);
function loop(now) {
  requestAnimationFrame(loop);
  frameStart = performance.now();
  state.dragSentThisFrame = false;
  flushDrag();
  playTick(now);
  if (view.needsRender) {
    view.render();
    afterFrame.port2.postMessage(null);
    rendered++;
    appState.frames = (appState.frames ?? 0) + 1;
    if (state.pose) publish();
  }
  if (now - fpsStart > 1000) { appState.fps = rendered * 1000 / (now - fpsStart); rendered = 0; fpsStart = now; }
}
requestAnimationFrame(loop);
connect();
