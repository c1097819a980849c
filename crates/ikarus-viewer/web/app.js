// The page: a WebSocket to the server (which runs every solver), pointer interaction, the motion
// controls, and `window.appState` / `window.samplePixels()` for tests.
import * as THREE from 'three';
import { SkeletonView } from './scene.js';
import { SolverPanel } from './panel.js';

const $ = (id) => document.getElementById(id);
const view = new SkeletonView($('view'));
const panel = new SolverPanel((config) => {
  appState.solver = config.kind;
  send({ type: 'solver', config });
});

/** What tests read: published after the first frame drawn with a skeleton. */
const appState = {
  ready: false, jointCount: 0, joints: [], selected: [], base: null, lastReport: null,
  lastError: null, errors: 0, frame: null, motion: null, keys: 0, solver: 'ccd', poses: 0,
  skeleton: null, format: null, fps: 0, frames: 0,
};
appState.renderer = { name: view.gpu.name, software: view.gpu.software, antialias: view.antialias };
// The per-joint hooks are computed when read (tests read `appState` through JSON), not for
// every pose and frame: the joints' screen positions as drawn (for picking), the gizmo's
// state, and the pose's positions and rotations by joint name.
const byName = (values) => (pose && skeleton ? Object.fromEntries(skeleton.joints.map((j, i) => [j.name, values(pose)[i]])) : {});
Object.defineProperties(appState, {
  joints: { enumerable: true, get: () => (drawn.pose ? screenJoints() : []) },
  gizmo: { enumerable: true, get: () => (view.gizmo.object ? { axis: view.gizmo.axis, dragging: view.gizmo.dragging } : null) },
  positions: { enumerable: true, get: () => byName((p) => p.positions) },
  rotations: { enumerable: true, get: () => byName((p) => p.rotations) },
});
window.appState = appState;
window.samplePixels = (options) => view.samplePixels(options);

let socket, skeleton = null, pose = null, mesh = null, maxUpload = Infinity;

function connect() {
  socket = new WebSocket(`ws://${location.host}/ws`);
  socket.onopen = () => { $('status').textContent = `connected to ${location.host}`; };
  socket.onclose = () => { $('status').textContent = 'disconnected; reload to reconnect'; };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
}

function send(message) {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

// Drags: one in flight at a time and at most one per displayed frame; the newest pending
// position goes with the next animation frame after the reply arrived, so the server never
// queues stale targets and no pose is solved that no frame would show (replies faster than
// the display took main-thread and server time from drawing: 93 poses/s for 50 frames/s).
let dragInFlight = false, pendingDrag = null, dragSentThisFrame = false;
function sendDrag(message) {
  if (dragInFlight || dragSentThisFrame) { pendingDrag = message; return; }
  dragInFlight = true;
  dragSentThisFrame = true;
  send(message);
}

function receive(reply) {
  switch (reply.type) {
    case 'welcome':
      panel.setChoices(reply.solvers, 'ccd');
      $('source').replaceChildren(...reply.sources.map((s) => new Option(s, s)));
      maxUpload = reply.max_upload;
      break;
    case 'skeleton':
      skeleton = reply;
      appState.skeleton = reply.name;
      appState.format = reply.format;
      appState.jointCount = reply.joints.length;
      appState.motion = reply.motion;
      // The server's solver after the load (its default for this skeleton, or the choice).
      if (reply.solver && reply.solver !== appState.solver) {
        appState.solver = reply.solver;
        panel.select(reply.solver);
      }
      if (![...$('source').options].some((o) => o.value === reply.name)) {
        // An upload: shown, but reloading it means dropping the file again.
        const option = new Option(reply.name, reply.name);
        option.disabled = true;
        $('source').add(option);
      }
      $('source').value = reply.name;
      $('report').textContent = 'no solve yet';
      panel.drawTrace({ position_errors: [] });
      $('report').className = '';
      setMotion(reply.motion);
      // MMD models: the IK switch (the server evaluates the rig with or without its chains).
      $('ik-box').hidden = !reply.ik_chains.length;
      appState.ikChains = reply.ik_chains;
      appState.mesh = null;
      mesh = null;
      pose = null;
      break;
    case 'mesh':
      // Drawn with the skeleton at the first pose after it.
      mesh = reply;
      appState.mesh = {
        vertices: reply.vertices, materials: reply.materials.length, textures: reply.materials.filter((m) => m.texture).length,
        // Triangles of the skin drawn while dragging on a software renderer (null: the full skin).
        get dragTriangles() { return view.skin?.lod?.triangles ?? null; },
      };
      break;
    case 'pose':
      onPose(reply);
      break;
    case 'trace':
      panel.drawTrace(reply);
      appState.trace = reply.position_errors;
      break;
    case 'keys':
      appState.keys = reply.count;
      $('keys').textContent = `${reply.count} key${reply.count === 1 ? '' : 's'}`;
      break;
    case 'motion':
      setMotion(reply);
      break;
    case 'bvh':
      download(reply.name, reply.text);
      appState.exported = reply.text.length;
      break;
    case 'error':
      showError(reply.message);
      frameInFlight = false;
      dragDone();
      break;
  }
}

function onPose(reply) {
  const first = pose === null;
  pose = reply;
  if (first) {
    view.setSkeleton(skeleton, reply);
    if (mesh) view.setMesh(mesh);
  }
  view.queuePose(reply, !first && reply.frame !== null);
  appState.poses++;
  appState.selected = reply.effectors.map((e) => e.joint);
  appState.effectors = reply.effectors;
  appState.base = reply.base;
  appState.frame = reply.frame;
  appState.ik = reply.ik;
  // A retargeted motion's source drawn beside the target (screen positions in `publish`).
  appState.overlay = reply.overlay ? overlayHook(reply.overlay) : null;
  if (reply.ik) $('ik').checked = reply.ik.enabled;
  if (reply.report) {
    appState.lastReport = reply.report;
    panel.showReport(reply.report);
  }
  if (reply.frame !== null) {
    $('scrub').value = reply.frame;
    $('frame').textContent = `${reply.frame + 1} / ${appState.motion?.frames ?? 0}`;
  }
  $('undo').disabled = !reply.can_undo;
  $('redo').disabled = !reply.can_redo;
  const gizmoJoint = selectedJoint ?? appState.selected.at(-1);
  const target = reply.effectors.find((e) => e.joint === gizmoJoint);
  if (target && $('rotate').checked && !view.gizmo.dragging) attachGizmo(target);
  if (!$('rotate').checked) view.gizmo.detach();
  frameInFlight = false;
  dragDone();
}

function dragDone() {
  dragInFlight = false;
  flushDrag();
}

/** Sends the pending drag, if any and if allowed now (see `sendDrag`). */
function flushDrag() {
  if (pendingDrag && !dragInFlight && !dragSentThisFrame) {
    const m = pendingDrag;
    pendingDrag = null;
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
let selectedJoint = null, dragging = null;
const canvas = $('view');
canvas.addEventListener('pointerdown', (event) => {
  if (!pose || event.button !== 0) return;
  const index = view.pick(event.clientX, event.clientY);
  if (index < 0) return;
  const name = skeleton.joints[index].name;
  event.preventDefault();
  event.stopImmediatePropagation();
  if (event.shiftKey) { send({ type: 'set_base', joint: pose.base === name ? null : name }); return; }
  if (event.altKey) { send({ type: 'remove_effector', joint: name }); return; }
  selectedJoint = name;
  showJoint(index);
  const effector = pose.effectors.find((e) => e.joint === name);
  const start = new THREE.Vector3(...(effector?.position ?? pose.positions[index]));
  if (!effector) send({ type: 'set_effector', joint: name });
  dragging = { name, plane: start, offset: start.clone().sub(new THREE.Vector3(...pose.positions[index])) };
  view.orbit.enabled = false;
  view.beginInteraction();
  canvas.setPointerCapture(event.pointerId);
}, { capture: true });

canvas.addEventListener('pointermove', (event) => {
  if (!dragging) return;
  const p = view.dragPoint(event.clientX, event.clientY, dragging.plane);
  if (p) sendDrag({ type: 'drag', joint: dragging.name, position: p.toArray() });
});

canvas.addEventListener('pointerup', (event) => {
  if (!dragging) return;
  dragging = null;
  view.orbit.enabled = true;
  view.endInteraction();
  canvas.releasePointerCapture(event.pointerId);
  send({ type: 'trace' });
});

// ---- rotate gizmo: orientation goals ---------------------------------------------------------
function attachGizmo(target) {
  view.gizmoTarget.position.set(...target.position);
  const index = skeleton.joints.findIndex((j) => j.name === target.joint);
  view.gizmoTarget.quaternion.set(...(target.orientation ?? pose.rotations[index]));
  view.gizmo.attach(view.gizmoTarget);
}
view.gizmo.addEventListener('objectChange', () => {
  const name = selectedJoint ?? appState.selected.at(-1);
  const target = pose?.effectors.find((e) => e.joint === name);
  if (!target) return;
  sendDrag({ type: 'drag', joint: name, position: target.position, orientation: view.gizmoTarget.quaternion.toArray() });
});
view.gizmo.addEventListener('mouseUp', () => send({ type: 'trace' }));
$('rotate').addEventListener('change', () => {
  const target = pose?.effectors.find((e) => e.joint === (selectedJoint ?? appState.selected.at(-1)));
  if ($('rotate').checked && target) attachGizmo(target); else view.gizmo.detach();
});

// ---- buttons and keys ------------------------------------------------------------------------
$('undo').onclick = () => send({ type: 'undo' });
$('redo').onclick = () => send({ type: 'redo' });
$('reset').onclick = () => { selectedJoint = null; send({ type: 'reset' }); };
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
  const joint = skeleton.joints[index], bone = skeleton.humanoid[index];
  const chain = skeleton.ik_chains.find((c) => c.goal === joint.name);
  $('joint').textContent = [joint.name, bone && `humanoid ${bone}`, chain && `IK → ${chain.effector}`].filter(Boolean).join(' · ');
}

// ---- files: input or drop --------------------------------------------------------------------
async function upload(file) {
  if (file.size > maxUpload) {
    // The server refuses it too; saying so here spares sending it.
    showError(`${file.name}: ${file.size} bytes is larger than the ${maxUpload} byte upload limit`);
    return;
  }
  if (/\.(bvh|urdf)$/i.test(file.name)) {
    send({ type: 'load', name: file.name, text: await file.text() });
    return;
  }
  // Binary formats (PMX, PMD, VMD, GLB, VRM, VRMA; glTF with embedded buffers) as base64.
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  send({ type: 'load', name: file.name, base64: btoa(binary) });
}
$('file').onchange = () => { if ($('file').files[0]) upload($('file').files[0]); $('file').value = ''; };
/** A file's bytes as base64 (in chunks: `String.fromCharCode` takes a bounded argument list). */
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(binary);
}

// A motion retargeted onto the loaded humanoid (the server runs ikarus_anim::retarget). A .vmd
// plays on the .pmx/.pmd chosen with it, else on the loaded MMD model.
async function retargetUpload(files) {
  const isModel = (f) => /\.(pmx|pmd)$/i.test(f.name);
  const motion = files.find((f) => !isModel(f)), model = files.find(isModel);
  if (!motion) {
    showError('choose the motion to retarget (with its .pmx/.pmd model for a .vmd)');
    return;
  }
  for (const file of [motion, model]) {
    if (file && file.size > maxUpload) {
      showError(`${file.name}: ${file.size} bytes is larger than the ${maxUpload} byte upload limit`);
      return;
    }
  }
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
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => {
  e.preventDefault();
  if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]);
});

// ---- motion: play/scrub (the page asks for frame N at its clock), keys, generate, export --------
let playing = false, playStart = 0, playFrom = 0, frameInFlight = false;
function setMotion(motion) {
  appState.motion = motion;
  playing = false;
  $('play').textContent = 'Play';
  $('play').disabled = $('scrub').disabled = !motion;
  $('scrub').max = motion ? motion.frames - 1 : 0;
  $('frame').textContent = motion ? `– / ${motion.frames}` : '–';
}
$('play').onclick = () => {
  playing = !playing;
  $('play').textContent = playing ? 'Pause' : 'Play';
  playStart = performance.now();
  playFrom = Number($('scrub').value);
};
$('scrub').oninput = () => { playing = false; $('play').textContent = 'Play'; send({ type: 'frame', index: Number($('scrub').value) }); };
function playTick(now) {
  if (!playing || !appState.motion || frameInFlight) return;
  const m = appState.motion;
  const elapsed = Math.max(0, now - playStart) / 1000;
  const index = (playFrom + Math.floor(elapsed / m.frame_time)) % m.frames;
  if (index === pose?.frame) return;
  frameInFlight = true;
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
  dragSentThisFrame = false;
  flushDrag();
  playTick(now);
  if (view.needsRender) {
    view.render();
    afterFrame.port2.postMessage(null);
    rendered++;
    appState.frames = (appState.frames ?? 0) + 1;
    if (pose) publish();
  }
  if (now - fpsStart > 1000) { appState.fps = rendered * 1000 / (now - fpsStart); rendered = 0; fpsStart = now; }
}

/** The joints' screen positions as last drawn (read through `appState.joints`). */
function screenJoints() {
  const { skeleton: shown, pose: at } = drawn;
  const rect = canvas.getBoundingClientRect();
  return shown.joints.map((j, i) => {
    const [x, y] = view.toScreen(new THREE.Vector3(...at.positions[i]), rect);
    return { name: j.name, humanoid: shown.humanoid[i], screen: [x, y], world: at.positions[i] };
  });
}

/** A retargeted motion's source beside the target, for tests: counts, and screen positions when read. */
function overlayHook(overlay) {
  const hook = { joints: overlay.source.length, contacts: overlay.contacts.length };
  Object.defineProperty(hook, 'screen', {
    enumerable: true,
    get: () => {
      const rect = canvas.getBoundingClientRect();
      return overlay.source.map((p) => view.toScreen(new THREE.Vector3(...p), rect).slice(0, 2));
    },
  });
  return hook;
}

/** After a frame drawn with a pose: what was drawn (for the hooks), the render scale, ready. */
let drawn = { skeleton: null, pose: null };
function publish() {
  drawn = { skeleton, pose };
  appState.renderScale = view.renderScale;
  appState.ready = true;
}
requestAnimationFrame(loop);
connect();
