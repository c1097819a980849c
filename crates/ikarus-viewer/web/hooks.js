// What the browser tests read: `window.appState` (published after the first frame drawn with a
// skeleton) and `window.samplePixels()`. The page writes the plain fields as it goes; the
// per-joint ones are computed when read (tests read `appState` through JSON), not for every
// pose and frame.
import * as THREE from 'three';
import { state } from './state.js';

export const appState = {
  ready: false, jointCount: 0, joints: [], selected: [], base: null, lastReport: null,
  lastError: null, errors: 0, frame: null, motion: null, keys: 0, solver: 'ccd', poses: 0,
  skeleton: null, format: null, fps: 0, frames: 0, tracking: null, terrain: null, grounding: null,
};

let view = null, canvas = null;

/** Publishes the hooks on `window` for `view` drawn on `canvasElement`. */
export function installHooks(skeletonView, canvasElement) {
  view = skeletonView;
  canvas = canvasElement;
  appState.renderer = { name: view.gpu.name, software: view.gpu.software, antialias: view.antialias };
  // The joints' screen positions as drawn (for picking), the gizmo's state, and the pose's
  // positions and rotations by joint name.
  const byName = (values) => {
    const { pose, skeleton } = state;
    return pose && skeleton ? Object.fromEntries(skeleton.joints.map((j, i) => [j.name, values(pose)[i]])) : {};
  };
  Object.defineProperties(appState, {
    joints: { enumerable: true, get: () => (state.drawn.pose ? screenJoints() : []) },
    gizmo: { enumerable: true, get: () => (view.gizmo.object ? { axis: view.gizmo.axis, dragging: view.gizmo.dragging } : null) },
    positions: { enumerable: true, get: () => byName((p) => p.positions) },
    rotations: { enumerable: true, get: () => byName((p) => p.rotations) },
  });
  window.appState = appState;
  window.samplePixels = (options) => view.samplePixels(options);
}

/** The joints' screen positions as last drawn (read through `appState.joints`). */
function screenJoints() {
  const { skeleton: shown, pose: at } = state.drawn;
  const rect = canvas.getBoundingClientRect();
  return shown.joints.map((j, i) => {
    const [x, y] = view.toScreen(new THREE.Vector3(...at.positions[i]), rect);
    return { name: j.name, humanoid: shown.humanoid[i], screen: [x, y], world: at.positions[i] };
  });
}

/** A retargeted motion's source beside the target: counts, and screen positions when read. */
export function overlayHook(overlay) {
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
export function publish() {
  state.drawn = { skeleton: state.skeleton, pose: state.pose };
  appState.renderScale = view.renderScale;
  appState.ready = true;
}
