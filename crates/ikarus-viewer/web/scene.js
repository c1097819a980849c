// Drawing only: the skeleton, effector targets, the base and joint limits, from what the server
// sends. No inverse kinematics here; every pose comes from the server.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { TransformControls } from 'three/addons/controls/TransformControls.js';
import { MeshoptSimplifier } from 'meshoptimizer/simplifier';
import { LineBatch, SphereBatch, TriangleBatch } from './batch.js';

export const BACKGROUND = 0x1e2126;
const COLORS = {
  joint: 0xd8dce4, bone: 0x7f8ea3, effector: 0xffb000, base: 0x40c0ff, target: 0xff5a36,
  limit: 0x5fbf7f, active: 0xff3040, grid: 0x30353c, gridAxis: 0x3a4048,
  source: 0x9a7fd0, contact: 0x30e0a0, terrain: 0x6b6352,
};
const GRID_DIVISIONS = 20;
/** Angle per segment of limit arcs and cones (15°: smooth at their size on screen). */
const ARC_STEP = Math.PI / 12;

const v3 = (a) => new THREE.Vector3(a[0], a[1], a[2]);
const q4 = (a) => new THREE.Quaternion(a[0], a[1], a[2], a[3]);
const Y = new THREE.Vector3(0, 1, 0);
/** The twelve edges of an octahedron (the target marker) between its six vertices ±x, ±y, ±z. */
const OCTAHEDRON = [[0, 2], [0, 3], [0, 4], [0, 5], [1, 2], [1, 3], [1, 4], [1, 5], [2, 4], [2, 5], [3, 4], [3, 5]];
const OCTAHEDRON_VERTICES = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]].map(v3);

/**
 * The skeleton is two draw calls whatever its size (see batch.js): joints and bones in one
 * triangle buffer, grid, limit drawings and targets in one line buffer, both rewritten per pose.
 * The page renders on demand: `needsRender` is set by poses, camera moves, the gizmo and
 * resizes, and the loop in app.js renders only then.
 */
/**
 * The WebGL renderer's name, and whether it rasterises on the CPU (SwiftShader, llvmpipe,
 * Microsoft's WARP): there multisampling costs most of a frame — on a headless chromium with
 * SwiftShader it halves the frame rate of this scene — so the page draws without it.
 */
export function webglRenderer() {
  const gl = document.createElement('canvas').getContext('webgl2');
  if (!gl) return { name: 'none', software: false };
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  gl.getExtension('WEBGL_lose_context')?.loseContext();
  return { name, software: /swiftshader|llvmpipe|softpipe|software|warp/i.test(name) };
}

/**
 * The smallest drawing-buffer scale per side while dragging: 0.75³. On SwiftShader, Godette's
 * frame costs 6.3 ms at 0.5 and 5.1 ms at 0.4 (in-page probe: render + a one-pixel read).
 */
const MIN_RENDER_SCALE = 0.42;
/**
 * A skin with more triangles than this is drawn simplified while the user drags on a software
 * renderer: SwiftShader pays about a microsecond per triangle whatever the resolution, so a
 * 23,000-triangle MMD model cannot keep 60 Hz at any scale.
 */
const LOD_MIN_TRIANGLES = 8000;
/** The simplified skin's triangles (each material's part in proportion). */
const LOD_TRIANGLES = 4000;
/** Largest deviation the simplification may make, relative to the mesh's extent. */
const LOD_ERROR = 0.02;
/** Mean main-thread cost of recent dragged frames above which the resolution drops (ms). */
const SLOW_FRAME_MS = 11;
/** A dragged frame this costly (ms) is likely to miss its vsync; two in eight drop the resolution. */
const MISSED_FRAME_MS = 14;
/** Sixty dragged frames all cheaper than this (ms) raise the resolution a step. */
const FAST_FRAME_MS = 7;

export class SkeletonView {
  constructor(canvas) {
    this.canvas = canvas;
    this.gpu = webglRenderer();
    this.antialias = !this.gpu.software;
    // An opaque canvas without stencil: the compositor need not blend it, and nothing here
    // uses a stencil buffer.
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: this.antialias, alpha: false, stencil: false });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.setClearColor(BACKGROUND);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    this.orbit = new OrbitControls(this.camera, canvas);
    this.orbit.enableDamping = false;
    this.orbit.addEventListener('change', () => this.invalidate());
    this.orbit.addEventListener('start', () => this.beginInteraction());
    this.orbit.addEventListener('end', () => this.endInteraction());
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x303040, 2.0));
    const sun = new THREE.DirectionalLight(0xffffff, 1.5);
    sun.position.set(2, 4, 3);
    this.scene.add(sun);
    // Model space: the skeleton's own frame, turned so its `up` points along the page's +Y.
    this.root = new THREE.Group();
    this.scene.add(this.root);
    this.gizmoTarget = new THREE.Object3D();
    this.root.add(this.gizmoTarget);
    this.gizmo = new TransformControls(this.camera, canvas);
    this.gizmo.setMode('rotate');
    this.gizmo.setSpace('world');
    this.gizmo.setSize(0.6);
    this.gizmo.addEventListener('dragging-changed', (e) => {
      this.orbit.enabled = !e.value;
      if (e.value) this.beginInteraction(); else this.endInteraction();
    });
    this.gizmo.addEventListener('change', () => this.invalidate());
    this.scene.add(this.gizmo.getHelper());
    this.joints = [];
    this.positions = [];
    this.rotations = [];
    this.needsRender = true;
    this.renderScale = 1;
    this.interactionScale = 1;
    this.interacting = false;
    this.resize();
    window.addEventListener('resize', () => this.resize());
  }

  /** Asks the loop for a new frame. */
  invalidate() {
    this.needsRender = true;
  }

  /**
   * Dynamic resolution while the user drags (a joint, the gizmo, the camera), driven by what
   * each drawn frame costs the page's main thread (`frameCost`: the script, the drawing, and
   * — with a software compositor — the read-back of the canvas, which waits for the WebGL
   * work to finish). A 60 Hz frame leaves the main thread about 13 ms once the display
   * compositor has its share (~3 ms on SwiftShader), so when the recent frames average over
   * `SLOW_FRAME_MS`, or two of the last eight went over `MISSED_FRAME_MS`, the drawing buffer
   * shrinks by a step of 0.75 per side, down to `MIN_RENDER_SCALE`; when 60 frames in a row
   * stayed under `FAST_FRAME_MS` (room for the 1.8× pixels of the next step) it grows a
   * step; a skin of many triangles is drawn simplified meanwhile (`buildLod`). The first
   * frame after the drag is drawn at full resolution again; the next drag
   * starts at the scale the last one settled at, so each drag does not pay the slow frames
   * again. A GPU that keeps up never leaves full resolution. The frame intervals are no
   * guide: at 60 Hz they only say whether a frame made the vsync, not by how much, so
   * alternating fast and missed frames never looked like "three slow in a row".
   */
  beginInteraction() {
    this.interacting = true;
    this.costs = [];
    this.showLod(true);
    if (this.renderScale !== this.interactionScale) this.setRenderScale(this.interactionScale);
  }

  /** One drawn frame's main-thread cost in milliseconds (see `beginInteraction`). */
  frameCost(ms) {
    if (!this.interacting) return;
    const costs = this.costs;
    costs.push(ms);
    if (costs.length > 60) costs.shift();
    const recent = costs.slice(-8);
    const mean = recent.reduce((sum, c) => sum + c, 0) / recent.length;
    const missed = recent.filter((c) => c > MISSED_FRAME_MS).length;
    if (this.renderScale > MIN_RENDER_SCALE && recent.length >= 3 && (mean > SLOW_FRAME_MS || missed >= 2)) {
      this.setRenderScale(Math.max(MIN_RENDER_SCALE, this.renderScale * 0.75));
      this.costs = [];
    } else if (this.renderScale < 1 && costs.length === 60 && costs.every((c) => c < FAST_FRAME_MS)) {
      this.setRenderScale(Math.min(1, this.renderScale / 0.75));
      this.costs = [];
    }
    this.interactionScale = this.renderScale;
  }

  /** Ends a drag: full resolution again (see `beginInteraction`). */
  endInteraction() {
    this.interacting = false;
    this.showLod(false);
    if (this.renderScale !== 1) this.setRenderScale(1);
  }

  /** Draws at `scale` times the page's pixel ratio (per side). */
  setRenderScale(scale) {
    this.renderScale = scale;
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2) * scale);
    this.resize();
  }

  resize() {
    const w = this.canvas.clientWidth || 1, h = this.canvas.clientHeight || 1;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.invalidate();
  }

  /** Model space to the page's world (+Y up). */
  toWorld(p) {
    return p.clone().applyQuaternion(this.root.quaternion);
  }

  /** The page's world to model space. */
  toModel(p) {
    return p.clone().applyQuaternion(this.root.quaternion.clone().invert());
  }

  /**
   * Rebuilds the drawing for a new skeleton: `skeleton.up` (model space, `[0, 0, 1]` for URDF
   * robots) is turned to the page's +Y, and the camera frames the pose's bounding box.
   */
  setSkeleton(skeleton, pose) {
    for (const o of [...this.root.children]) if (o !== this.gizmoTarget) this.dispose(o);
    this.terrain = null;
    this.skin = null;
    this.retarget = null;
    this.gizmo.detach();
    this.joints = skeleton.joints;
    this.root.quaternion.setFromUnitVectors(v3(skeleton.up ?? [0, 1, 0]).normalize(), Y);
    this.root.updateMatrixWorld();
    const box = new THREE.Box3();
    pose.positions.forEach((p) => box.expandByPoint(this.toWorld(v3(p))));
    const size = Math.max(box.getSize(new THREE.Vector3()).length(), 1e-3);
    this.size = size;
    const r = size * 0.012;
    this.markerSize = r * 1.8;
    this.jointRadius = r;
    this.spheres = new SphereBatch(this.joints.length);
    this.root.add(this.spheres.points);
    // Few triangles: software WebGL pays about a microsecond per triangle, and at a bone's
    // width on screen (a few pixels) more segments do not show; the joints cover the ends.
    const cylinder = new THREE.CylinderGeometry(r * 0.45, r * 0.45, 1, 6, 1, true);
    cylinder.translate(0, 0.5, 0);
    this.bones = this.joints.flatMap((j, i) => (j.parent === null ? [] : [i]));
    this.solids = new TriangleBatch(this.bones.map(() => cylinder));
    this.root.add(this.solids.mesh);
    // The line buffer: the grid first (kept), then each pose's limits and targets.
    this.limitShapes = this.limitShapesOf(size * 0.05);
    const limitSegments = this.limitShapes.reduce((sum, s) => sum + s.points.length / 2, 0);
    this.overlay = new LineBatch(GRID_DIVISIONS * 2 + 2 + limitSegments + OCTAHEDRON.length * this.joints.length);
    this.root.add(this.overlay.lines);
    const center = box.getCenter(new THREE.Vector3());
    this.addGrid(new THREE.Vector3(center.x, box.min.y, center.z), size * 2);
    this.overlay.freeze();
    this.frame(center, size / 2);
  }

  /**
   * The character's skinned mesh from a `mesh` reply: base64 buffers to typed arrays, one
   * three.js bone per joint placed at the pose's model-space transform (no hierarchy: the
   * server's FK already composed them), the reply's inverse bind matrices, so three.js skins
   * each vertex by `model_from_joint · inverse_bind` in the vertex shader. Materials draw their
   * index ranges with the base colour and the texture when the reply has one. The skeleton is
   * then drawn over the mesh (no depth test) so joints stay visible and pickable.
   */
  setMesh(info) {
    const bytes = (text) => {
      const raw = atob(text), out = new Uint8Array(raw.length);
      for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
      return out.buffer;
    };
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(bytes(info.positions)), 3));
    if (info.normals) geometry.setAttribute('normal', new THREE.BufferAttribute(new Float32Array(bytes(info.normals)), 3));
    else geometry.computeVertexNormals();
    if (info.uvs) geometry.setAttribute('uv', new THREE.BufferAttribute(new Float32Array(bytes(info.uvs)), 2));
    geometry.setAttribute('skinIndex', new THREE.Uint16BufferAttribute(new Uint16Array(bytes(info.joints)), 4));
    geometry.setAttribute('skinWeight', new THREE.BufferAttribute(new Float32Array(bytes(info.weights)), 4));
    geometry.setIndex(new THREE.BufferAttribute(new Uint32Array(bytes(info.indices)), 1));
    const materials = info.materials.map((m, k) => {
      geometry.addGroup(m.first_index, m.index_count, k);
      const [r, g, b, a] = m.base_color;
      // Back faces are culled unless the file says otherwise: software WebGL spends about as
      // long on the culled half as on the visible one (Godette: 22.5 → 13.6 ms a frame).
      const material = new THREE.MeshLambertMaterial({
        color: new THREE.Color().setRGB(r, g, b), side: m.double_sided ? THREE.DoubleSide : THREE.FrontSide,
        transparent: a < 0.999, opacity: a,
      });
      if (m.texture) {
        // glTF and PMX put v = 0 at the image's top: no flip.
        material.map = new THREE.TextureLoader().load(m.texture, () => this.invalidate());
        material.map.flipY = false;
        material.map.colorSpace = THREE.SRGBColorSpace;
        material.map.wrapS = material.map.wrapT = THREE.RepeatWrapping;
        // Bilinear from the nearest mip level instead of trilinear on a software renderer:
        // half the texel fetches (SwiftShader: Godette's textures cost 1.6 ms of a 4.8 ms
        // frame at half resolution, 0.6 ms less this way).
        if (this.gpu.software) material.map.minFilter = THREE.LinearMipmapNearestFilter;
      }
      return material;
    });
    if (!materials.length) materials.push(new THREE.MeshLambertMaterial({ color: 0xb0b8c8, side: THREE.DoubleSide }));
    const bones = this.joints.map(() => new THREE.Bone());
    const inverses = info.inverse_bind.map((m) => new THREE.Matrix4().fromArray(m));
    const mesh = new THREE.SkinnedMesh(geometry, materials.length === 1 ? materials[0] : materials);
    bones.forEach((b) => this.root.add(b));
    this.root.add(mesh);
    mesh.bind(new THREE.Skeleton(bones, inverses), new THREE.Matrix4());
    // The bind pose's bounding sphere says nothing about a posed character.
    mesh.frustumCulled = false;
    this.skin = { mesh, bones, materials, vertices: info.vertices, lod: null };
    if (this.gpu.software && geometry.index.count / 3 > LOD_MIN_TRIANGLES) this.buildLod(this.skin);
    // Over a skin the bones are lines, as a stick figure: the cylinders' 800-odd shaded
    // triangles cost SwiftShader about 1.2 ms a frame at half resolution (Godette), a line
    // buffer next to nothing; the joints stay sprites (picking).
    this.solids.mesh.visible = false;
    if (this.boneLines?.lines.parent) this.dispose(this.boneLines.lines);
    this.boneLines = new LineBatch(this.bones.length);
    this.root.add(this.boneLines.lines);
    for (const drawn of [this.spheres.points, this.boneLines.lines]) {
      drawn.material.depthTest = false;
      drawn.renderOrder = 2;
    }
    if (this.positions.length === this.joints.length) {
      this.placeBones();
      this.placeBoneLines(new THREE.Color(COLORS.bone));
    }
    this.invalidate();
  }

  /**
   * The skin simplified for drags on a software renderer: each material's triangles reduced
   * in proportion to `LOD_TRIANGLES` by meshoptimizer (borders between materials locked, so
   * no seam opens), as a second skinned mesh on the same vertices and skeleton, shown instead
   * of the full one while the user drags (`beginInteraction`).
   */
  async buildLod(skin) {
    await MeshoptSimplifier.ready;
    if (this.skin !== skin || !MeshoptSimplifier.supported) return;
    const full = skin.mesh.geometry, index = full.index.array, positions = full.attributes.position.array;
    const ratio = LOD_TRIANGLES / (index.length / 3);
    const geometry = new THREE.BufferGeometry();
    for (const [name, attribute] of Object.entries(full.attributes)) geometry.setAttribute(name, attribute);
    const groups = full.groups.length ? full.groups : [{ start: 0, count: index.length, materialIndex: 0 }];
    const parts = groups.map((g) => {
      const part = index.subarray(g.start, g.start + g.count);
      const target = Math.max(3, Math.floor(part.length / 3 * ratio) * 3);
      return MeshoptSimplifier.simplify(part, positions, 3, target, LOD_ERROR, ['LockBorder'])[0];
    });
    const merged = new Uint32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    parts.forEach((p, k) => {
      merged.set(p, at);
      geometry.addGroup(at, p.length, groups[k].materialIndex);
      at += p.length;
    });
    geometry.setIndex(new THREE.BufferAttribute(merged, 1));
    const mesh = new THREE.SkinnedMesh(geometry, skin.mesh.material);
    mesh.bind(skin.mesh.skeleton, skin.mesh.bindMatrix);
    mesh.frustumCulled = false;
    mesh.visible = false;
    this.root.add(mesh);
    skin.lod = { mesh, triangles: merged.length / 3 };
    if (this.interacting) this.showLod(true);
  }

  /** Draws the simplified skin (during a drag) or the full one. */
  showLod(on) {
    const lod = this.skin?.lod;
    if (!lod) return;
    lod.mesh.visible = on;
    this.skin.mesh.visible = !on;
    this.invalidate();
  }

  /** The skin's bones at the pose's model-space transforms. */
  placeBones() {
    this.skin.bones.forEach((bone, i) => {
      bone.position.copy(this.positions[i]);
      bone.quaternion.copy(this.rotations[i]);
    });
  }

  /** Hides or shows everything but the skin (the skeleton, grid, limits, targets). */
  showOverlay(visible) {
    const bones = this.skin ? this.boneLines?.lines : this.solids?.mesh;
    for (const o of [this.spheres?.points, bones, this.overlay?.lines]) if (o) o.visible = visible;
    this.invalidate();
  }

  /** A square grid on the floor (world +Y up) around `middle`, as model-space segments. */
  addGrid(middle, extent) {
    const line = new THREE.Color(COLORS.grid), axis = new THREE.Color(COLORS.gridAxis);
    for (let k = 0; k <= GRID_DIVISIONS; k++) {
      const t = -extent / 2 + extent * k / GRID_DIVISIONS;
      const color = 2 * k === GRID_DIVISIONS ? axis : line;
      const at = (x, z) => this.toModel(new THREE.Vector3(middle.x + x, middle.y, middle.z + z));
      this.overlay.segment(at(t, -extent / 2), at(t, extent / 2), color);
      this.overlay.segment(at(-extent / 2, t), at(extent / 2, t), color);
    }
  }

  /** Puts the camera in front of a sphere (world centre, radius) so all of it is in view. */
  frame(center, radius) {
    const vertical = THREE.MathUtils.degToRad(this.camera.fov) / 2;
    const horizontal = Math.atan(Math.tan(vertical) * this.camera.aspect);
    const distance = radius / Math.sin(Math.min(vertical, horizontal)) * 1.05;
    this.orbit.target.copy(center);
    this.camera.near = distance / 100;
    this.camera.far = distance * 50;
    this.camera.position.copy(center).add(new THREE.Vector3(0, 0.1, 1).normalize().multiplyScalar(distance));
    this.camera.updateProjectionMatrix();
    this.orbit.update();
    this.invalidate();
  }

  /**
   * The ground a grounded motion stands on (model space, +Y up): `terrain.heights[i][j]` at
   * x = origin[0] + j·cell, z = origin[1] + i·cell, as triangles; `null` removes it.
   */
  setTerrain(terrain) {
    if (this.terrain) this.dispose(this.terrain);
    this.terrain = null;
    if (terrain) {
      const rows = terrain.heights.length, columns = terrain.heights[0].length;
      const positions = new Float32Array(rows * columns * 3);
      terrain.heights.forEach((row, i) => row.forEach((h, j) => {
        const k = (i * columns + j) * 3;
        positions[k] = terrain.origin[0] + j * terrain.cell;
        positions[k + 1] = h;
        positions[k + 2] = terrain.origin[1] + i * terrain.cell;
      }));
      const index = [];
      for (let i = 0; i + 1 < rows; i++) {
        for (let j = 0; j + 1 < columns; j++) {
          const a = i * columns + j, b = a + 1, c = a + columns, d = c + 1;
          index.push(a, c, b, b, c, d);
        }
      }
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
      geometry.setIndex(index);
      geometry.computeVertexNormals();
      // Half see-through, so a character behind a riser or under a bump stays in view.
      const material = new THREE.MeshStandardMaterial({ color: COLORS.terrain, roughness: 0.95, side: THREE.DoubleSide, transparent: true, opacity: 0.6, depthWrite: false });
      this.terrain = new THREE.Mesh(geometry, material);
      this.root.add(this.terrain);
    }
    this.invalidate();
  }

  dispose(object) {
    object.removeFromParent();
    object.traverse((o) => { o.geometry?.dispose(); o.material?.dispose(); });
  }

  /** Moves the grid by a world-space shift (it is drawn in model space, in the line buffer). */
  shiftGrid(shift) {
    const model = this.toModel(shift), P = this.overlay.geometry.attributes.position.array;
    for (let k = 0; k < this.overlay.fixed * 6; k += 3) {
      P[k] += model.x; P[k + 1] += model.y; P[k + 2] += model.z;
    }
  }

  /** Moves the camera with the root over the ground, so a walking motion stays in view. */
  follow(root) {
    const previous = this.positions[0];
    if (!previous) return;
    const shift = this.toWorld(v3(root).sub(previous));
    shift.y = 0;
    this.camera.position.add(shift);
    this.orbit.target.add(shift);
    this.shiftGrid(shift);
    this.orbit.update();
  }

  /**
   * Shows a pose reply with the next frame; when poses arrive faster than frames are drawn,
   * only the newest is placed. `follow` moves the camera with the root (motion playback).
   */
  queuePose(pose, follow) {
    this.pendingPose = pose;
    this.pendingFollow ||= follow;
    this.invalidate();
  }

  /** Places joints, bones, targets and limit drawings for a pose reply. */
  setPose(pose) {
    this.positions = pose.positions.map(v3);
    this.rotations = pose.rotations.map(q4);
    if (this.skin) this.placeBones();
    const effectors = new Set(pose.effectors.map((e) => e.joint));
    const color = new THREE.Color();
    this.joints.forEach((joint, i) => {
      const hex = joint.name === pose.base ? COLORS.base : effectors.has(joint.name) ? COLORS.effector : COLORS.joint;
      this.spheres.place(i, this.positions[i], this.jointRadius * (hex === COLORS.joint ? 1 : 1.5), color.setHex(hex));
    });
    this.spheres.commit();
    color.setHex(COLORS.bone);
    if (this.skin) this.placeBoneLines(color);
    else this.placeSolids(color);
    this.overlay.clear();
    this.placeLimits(new Set(pose.report?.active_limits ?? []));
    this.placeTargets(pose.effectors.filter((e) => e.position));
    this.overlay.commit();
    this.placeRetarget(pose.overlay);
    this.invalidate();
  }

  /** Each bone as a cylinder from its parent joint. */
  placeSolids(color) {
    const matrix = new THREE.Matrix4(), scale = new THREE.Vector3(), turn = new THREE.Quaternion();
    this.bones.forEach((i, k) => {
      const from = this.positions[this.joints[i].parent], d = this.positions[i].clone().sub(from);
      const length = d.length();
      turn.setFromUnitVectors(Y, length > 0 ? d.divideScalar(length) : Y);
      scale.set(1, Math.max(length, 1e-9), 1);
      this.solids.place(k, matrix.compose(from, turn, scale), color);
    });
    this.solids.commit();
  }

  /** Each bone as a line from its parent joint (over a skin). */
  placeBoneLines(color) {
    this.boneLines.clear();
    for (const i of this.bones) this.boneLines.segment(this.positions[this.joints[i].parent], this.positions[i], color);
    this.boneLines.commit();
  }

  /**
   * A retargeted motion's source, drawn beside the target as lines between its joints, and
   * the contacts held at this frame as octahedra on the target's planted points; hidden when
   * the pose has no `overlay`. The line buffer is sized for the source on its first frame.
   */
  placeRetarget(overlay) {
    if (!overlay) {
      if (this.retarget) this.retarget.lines.visible = false;
      return;
    }
    const needed = overlay.parents.length + 12 * 8;
    if (!this.retarget || this.retarget.capacity < needed) {
      if (this.retarget) this.dispose(this.retarget.lines);
      this.retarget = new LineBatch(needed);
      this.root.add(this.retarget.lines);
    }
    const batch = this.retarget;
    batch.lines.visible = true;
    batch.clear();
    const source = overlay.source.map(v3), line = new THREE.Color(COLORS.source);
    overlay.parents.forEach((p, i) => { if (p !== null) batch.segment(source[p], source[i], line); });
    const mark = new THREE.Color(COLORS.contact);
    for (const at of overlay.contacts.map(v3)) {
      const corners = OCTAHEDRON_VERTICES.map((c) => c.clone().multiplyScalar(this.markerSize * 0.6).add(at));
      for (const [a, b] of OCTAHEDRON) batch.segment(corners[a], corners[b], mark);
    }
    batch.commit();
  }

  /** A wireframe octahedron at each goal position, turned by the goal orientation if any. */
  placeTargets(goals) {
    const color = new THREE.Color(COLORS.target), turn = new THREE.Quaternion();
    const corners = OCTAHEDRON_VERTICES.map(() => new THREE.Vector3());
    for (const goal of goals) {
      turn.set(...(goal.orientation ?? [0, 0, 0, 1]));
      const at = v3(goal.position);
      corners.forEach((c, k) => c.copy(OCTAHEDRON_VERTICES[k]).multiplyScalar(this.markerSize).applyQuaternion(turn).add(at));
      for (const [a, b] of OCTAHEDRON) this.overlay.segment(corners[a], corners[b], color);
    }
  }

  /** Each joint's limit drawing (segment pairs in its rest frame), kept for `placeLimits`. */
  limitShapesOf(radius) {
    return this.joints
      .map((joint, i) => ({ joint: i, points: this.limitSegments(joint, i, radius) }))
      .filter((s) => s.points.length);
  }

  /** Each limit drawn in its frame (the parent's model rotation times the joint's rest rotation) at the joint; active ones red. */
  placeLimits(active) {
    const frame = new THREE.Quaternion(), a = new THREE.Vector3(), b = new THREE.Vector3();
    const normal = new THREE.Color(COLORS.limit), highlighted = new THREE.Color(COLORS.active);
    for (const { joint: i, points } of this.limitShapes) {
      const joint = this.joints[i];
      if (joint.parent === null) frame.identity(); else frame.copy(this.rotations[joint.parent]);
      frame.multiply(q4(joint.rest_rotation));
      const color = active.has(joint.name) ? highlighted : normal;
      for (let k = 0; k < points.length; k += 2) {
        a.copy(points[k]).applyQuaternion(frame).add(this.positions[i]);
        b.copy(points[k + 1]).applyQuaternion(frame).add(this.positions[i]);
        this.overlay.segment(a, b, color);
      }
    }
  }

  /** A joint's limit as segment end-point pairs in its rest frame: hinge arcs, swing cones, Euler arcs. */
  limitSegments(joint, index, radius) {
    const limit = joint.limit;
    const segments = [];
    if (!limit || limit.kind === 'free' || limit.kind === 'locked') return segments;
    const child = this.joints.findIndex((j) => j.parent === index);
    const along = child >= 0 ? v3(this.joints[child].rest_translation) : new THREE.Vector3(0, -1, 0);
    if (along.lengthSq() < 1e-12) along.set(0, -1, 0);
    along.normalize();
    const line = (points, loop = false) => {
      for (let k = 0; k + 1 < points.length; k++) segments.push(points[k], points[k + 1]);
      if (loop) segments.push(points.at(-1), points[0]);
    };
    const arc = (axis, min, max, r) => {
      axis = axis.clone().normalize();
      let start = along.clone().sub(axis.clone().multiplyScalar(along.dot(axis)));
      if (start.lengthSq() < 1e-9) start = new THREE.Vector3(1, 0, 0).cross(axis);
      if (start.lengthSq() < 1e-9) start = new THREE.Vector3(0, 1, 0).cross(axis);
      start.normalize().multiplyScalar(r);
      const points = [new THREE.Vector3()];
      const steps = Math.max(4, Math.ceil((max - min) / ARC_STEP));
      for (let k = 0; k <= steps; k++) {
        const a = min + (max - min) * k / steps;
        points.push(start.clone().applyAxisAngle(axis, a));
      }
      points.push(new THREE.Vector3());
      line(points);
    };
    const axes = [new THREE.Vector3(1, 0, 0), new THREE.Vector3(0, 1, 0), new THREE.Vector3(0, 0, 1)];
    if (limit.kind === 'hinge') arc(v3(limit.axis), limit.min, limit.max, radius);
    if (limit.kind === 'euler') {
      const order = { x: 0, y: 1, z: 2 };
      [...limit.order].forEach((c, k) => arc(axes[order[c]], limit.min[k], limit.max[k], radius * (0.7 + 0.15 * k)));
    }
    if (limit.kind === 'mmd') {
      ['x', 'y', 'z'].forEach((c, k) => arc(axes[k], limit.min[c] ?? limit.min[k], limit.max[c] ?? limit.max[k], radius * (0.7 + 0.15 * k)));
    }
    if (limit.kind === 'swing_twist') this.swingCone(limit, radius * 1.6, line);
    return segments;
  }

  /** The boundary of a swing–twist limit's swing ellipse, as directions of the twist axis. */
  swingCone(limit, radius, line) {
    const t = v3(limit.twist_axis).normalize(), u = v3(limit.swing_axis).normalize();
    const w = t.clone().cross(u);
    const rim = [];
    const steps = Math.round(2 * Math.PI / ARC_STEP);
    for (let k = 0; k < steps; k++) {
      const phi = 2 * Math.PI * k / steps, c = Math.cos(phi), s = Math.sin(phi);
      const su = c >= 0 ? limit.swing_u[1] : -limit.swing_u[0];
      const sv = s >= 0 ? limit.swing_v[1] : -limit.swing_v[0];
      const swing = u.clone().multiplyScalar(su * c).add(w.clone().multiplyScalar(sv * s));
      const angle = swing.length();
      const dir = angle > 1e-9 ? t.clone().applyAxisAngle(swing.normalize(), angle) : t.clone();
      rim.push(dir.multiplyScalar(radius));
    }
    line(rim, true);
    for (let k = 0; k < steps; k += steps / 4) line([new THREE.Vector3(), rim[k]]);
  }

  /** Screen position (CSS pixels, relative to the page) of a model-space point. */
  toScreen(p, rect = this.canvas.getBoundingClientRect()) {
    const v = this.toWorld(p).project(this.camera);
    return [rect.left + (v.x + 1) / 2 * rect.width, rect.top + (1 - v.y) / 2 * rect.height, v.z];
  }

  /** The joint drawn nearest to a screen point, within `pixels`, or -1. */
  pick(x, y, pixels = 14) {
    let best = -1, bestD = pixels;
    const rect = this.canvas.getBoundingClientRect();
    this.positions.forEach((p, i) => {
      const [sx, sy, z] = this.toScreen(p, rect);
      const d = Math.hypot(sx - x, sy - y);
      if (z < 1 && d < bestD) { best = i; bestD = d; }
    });
    return best;
  }

  /** Where the ray under a screen point meets the plane through `point` facing the camera (model space). */
  dragPoint(x, y, point) {
    const rect = this.canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2((x - rect.left) / rect.width * 2 - 1, -((y - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const normal = this.camera.getWorldDirection(new THREE.Vector3());
    const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(normal, this.toWorld(point));
    const hit = ray.ray.intersectPlane(plane, new THREE.Vector3());
    return hit && this.toModel(hit);
  }

  render() {
    if (this.pendingPose) {
      if (this.pendingFollow) this.follow(this.pendingPose.positions[0]);
      this.setPose(this.pendingPose);
      this.pendingPose = null;
      this.pendingFollow = false;
    }
    this.needsRender = false;
    this.spheres?.setView(this.camera, this.renderer.getContext().drawingBufferHeight);
    this.renderer.render(this.scene, this.camera);
  }

  /**
   * Renders and counts pixels that differ from the background (a "something was drawn" check).
   * `meshOnly` hides the skeleton, grid, targets and a retargeted motion's source first, so
   * only the skinned mesh counts; `withoutSource` hides the source alone (what it adds);
   * `grid` is the drawn count per cell of a 16 × 9 grid over the canvas (bottom row first),
   * for comparing where things were drawn.
   */
  samplePixels({ meshOnly = false, withoutSource = false } = {}) {
    if (meshOnly) this.showOverlay(false);
    const source = this.retarget?.lines, shown = source?.visible;
    if ((withoutSource || meshOnly) && source) source.visible = false;
    this.render();
    if (meshOnly) this.showOverlay(true);
    if (source) source.visible = shown;
    // The canvas now holds the sampled frame: draw the scene as shown again on the next frame
    // (else a screenshot would show the sample without the hidden parts).
    if (withoutSource || meshOnly) this.invalidate();
    const gl = this.renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    // The clear colour as written to the canvas: the hex's sRGB bytes (a `THREE.Color` holds
    // linear values).
    const [r, g, b] = [(BACKGROUND >> 16) & 255, (BACKGROUND >> 8) & 255, BACKGROUND & 255];
    let drawn = 0;
    const grid = new Array(16 * 9).fill(0);
    for (let i = 0; i < pixels.length; i += 4) {
      if (Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b) > 24) {
        drawn++;
        const p = i / 4, x = p % w, y = Math.floor(p / w);
        grid[Math.floor(y * 9 / h) * 16 + Math.floor(x * 16 / w)]++;
      }
    }
    return { width: w, height: h, drawn, fraction: drawn / (w * h), grid };
  }
}
