// Drawing only: the skeleton, effector targets, the base and joint limits, from what the server
// sends. No inverse kinematics here; every pose comes from the server.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { TransformControls } from 'three/addons/controls/TransformControls.js';

export const BACKGROUND = 0x1e2126;
const COLORS = {
  joint: 0xd8dce4, bone: 0x7f8ea3, effector: 0xffb000, base: 0x40c0ff, target: 0xff5a36,
  limit: 0x5fbf7f, active: 0xff3040,
};

const v3 = (a) => new THREE.Vector3(a[0], a[1], a[2]);
const q4 = (a) => new THREE.Quaternion(a[0], a[1], a[2], a[3]);

export class SkeletonView {
  constructor(canvas) {
    this.canvas = canvas;
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
    this.renderer.setPixelRatio(window.devicePixelRatio);
    this.renderer.setClearColor(BACKGROUND);
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    this.orbit = new OrbitControls(this.camera, canvas);
    this.orbit.enableDamping = false;
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x303040, 2.0));
    const sun = new THREE.DirectionalLight(0xffffff, 1.5);
    sun.position.set(2, 4, 3);
    this.scene.add(sun);
    this.gizmoTarget = new THREE.Object3D();
    this.scene.add(this.gizmoTarget);
    this.gizmo = new TransformControls(this.camera, canvas);
    this.gizmo.setMode('rotate');
    this.gizmo.setSpace('world');
    this.gizmo.setSize(0.6);
    this.gizmo.addEventListener('dragging-changed', (e) => { this.orbit.enabled = !e.value; });
    this.scene.add(this.gizmo.getHelper());
    this.root = new THREE.Group();
    this.scene.add(this.root);
    this.joints = [];
    this.positions = [];
    this.rotations = [];
    this.resize();
    window.addEventListener('resize', () => this.resize());
  }

  resize() {
    const w = this.canvas.clientWidth || 1, h = this.canvas.clientHeight || 1;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  /** Rebuilds the drawing for a new skeleton; `pose` frames the camera. */
  setSkeleton(skeleton, pose) {
    this.root.clear();
    this.gizmo.detach();
    this.joints = skeleton.joints;
    const box = new THREE.Box3();
    pose.positions.forEach((p) => box.expandByPoint(v3(p)));
    const size = Math.max(box.getSize(new THREE.Vector3()).length(), 1e-3);
    this.size = size;
    const r = size * 0.012;
    this.jointGeometry = new THREE.SphereGeometry(r, 16, 12);
    this.boneGeometry = new THREE.CylinderGeometry(r * 0.45, r * 0.45, 1, 8, 1);
    this.boneGeometry.translate(0, 0.5, 0);
    this.targetGeometry = new THREE.OctahedronGeometry(r * 1.8);
    this.targetMaterial = new THREE.MeshBasicMaterial({ color: COLORS.target, wireframe: true });
    this.jointMeshes = this.joints.map(() => {
      const m = new THREE.Mesh(this.jointGeometry, new THREE.MeshStandardMaterial({ color: COLORS.joint }));
      this.root.add(m);
      return m;
    });
    this.boneMeshes = this.joints.map((j) => {
      if (j.parent === null) return null;
      const m = new THREE.Mesh(this.boneGeometry, new THREE.MeshStandardMaterial({ color: COLORS.bone }));
      this.root.add(m);
      return m;
    });
    this.limitGroups = this.joints.map((j, i) => this.limitGroup(j, i, size * 0.05));
    this.targets = new THREE.Group();
    this.root.add(this.targets);
    const grid = new THREE.GridHelper(size * 2, 20, 0x3a4048, 0x30353c);
    grid.position.y = box.min.y;
    this.root.add(grid);
    const center = box.getCenter(new THREE.Vector3());
    this.orbit.target.copy(center);
    this.camera.near = size / 200;
    this.camera.far = size * 50;
    this.camera.position.copy(center).add(new THREE.Vector3(0, size * 0.1, size * 1.5));
    this.camera.updateProjectionMatrix();
    this.orbit.update();
  }

  /** Moves the camera with the root over the ground (x, z), so a walking motion stays in view. */
  follow(root) {
    const previous = this.positions[0];
    if (!previous) return;
    const shift = new THREE.Vector3(root[0] - previous.x, 0, root[2] - previous.z);
    this.camera.position.add(shift);
    this.orbit.target.add(shift);
    this.orbit.update();
  }

  /** Places joints, bones, targets and limit drawings for a pose reply. */
  setPose(pose) {
    this.positions = pose.positions.map(v3);
    this.rotations = pose.rotations.map(q4);
    const effectors = new Set(pose.effectors.map((e) => e.joint));
    const active = new Set(pose.report?.active_limits ?? []);
    const up = new THREE.Vector3(0, 1, 0);
    this.joints.forEach((joint, i) => {
      const m = this.jointMeshes[i];
      m.position.copy(this.positions[i]);
      const color = joint.name === pose.base ? COLORS.base : effectors.has(joint.name) ? COLORS.effector : COLORS.joint;
      m.material.color.setHex(color);
      m.scale.setScalar(color === COLORS.joint ? 1 : 1.5);
      const bone = this.boneMeshes[i];
      if (bone) {
        const from = this.positions[joint.parent], d = this.positions[i].clone().sub(from);
        bone.position.copy(from);
        bone.scale.set(1, Math.max(d.length(), 1e-9), 1);
        bone.quaternion.setFromUnitVectors(up, d.lengthSq() > 0 ? d.clone().normalize() : up);
      }
      const g = this.limitGroups[i];
      if (g) {
        // The limit's frame: the parent's model rotation times the joint's rest rotation.
        const parent = joint.parent === null ? new THREE.Quaternion() : this.rotations[joint.parent];
        g.position.copy(this.positions[i]);
        g.quaternion.copy(parent).multiply(q4(joint.rest_rotation));
        const c = active.has(joint.name) ? COLORS.active : COLORS.limit;
        g.traverse((o) => o.material?.color.setHex(c));
      }
    });
    // Target markers are pooled: a drag updates them in place, 60 times a second.
    const goals = pose.effectors.filter((e) => e.position);
    while (this.targets.children.length < goals.length) {
      this.targets.add(new THREE.Mesh(this.targetGeometry, this.targetMaterial));
    }
    this.targets.children.forEach((t, k) => {
      t.visible = k < goals.length;
      if (!t.visible) return;
      t.position.copy(v3(goals[k].position));
      t.quaternion.copy(goals[k].orientation ? q4(goals[k].orientation) : new THREE.Quaternion());
    });
  }

  /** Lines showing a joint's limit in its rest frame: hinge arcs, swing cones, Euler arcs. */
  limitGroup(joint, index, radius) {
    const limit = joint.limit;
    if (!limit || limit.kind === 'free' || limit.kind === 'locked') return null;
    const child = this.joints.findIndex((j) => j.parent === index);
    const along = child >= 0 ? v3(this.joints[child].rest_translation) : new THREE.Vector3(0, -1, 0);
    if (along.lengthSq() < 1e-12) along.set(0, -1, 0);
    along.normalize();
    const group = new THREE.Group();
    const line = (points, loop = false) => {
      const geometry = new THREE.BufferGeometry().setFromPoints(points);
      const material = new THREE.LineBasicMaterial({ color: COLORS.limit });
      group.add(loop ? new THREE.LineLoop(geometry, material) : new THREE.Line(geometry, material));
    };
    const arc = (axis, min, max, r) => {
      axis = axis.clone().normalize();
      let start = along.clone().sub(axis.clone().multiplyScalar(along.dot(axis)));
      if (start.lengthSq() < 1e-9) start = new THREE.Vector3(1, 0, 0).cross(axis);
      if (start.lengthSq() < 1e-9) start = new THREE.Vector3(0, 1, 0).cross(axis);
      start.normalize().multiplyScalar(r);
      const points = [new THREE.Vector3()];
      for (let k = 0; k <= 32; k++) {
        const a = min + (max - min) * k / 32;
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
    return group.children.length ? (this.root.add(group), group) : null;
  }

  /** The boundary of a swing–twist limit's swing ellipse, as directions of the twist axis. */
  swingCone(limit, radius, line) {
    const t = v3(limit.twist_axis).normalize(), u = v3(limit.swing_axis).normalize();
    const w = t.clone().cross(u);
    const rim = [];
    for (let k = 0; k < 48; k++) {
      const phi = 2 * Math.PI * k / 48, c = Math.cos(phi), s = Math.sin(phi);
      const su = c >= 0 ? limit.swing_u[1] : -limit.swing_u[0];
      const sv = s >= 0 ? limit.swing_v[1] : -limit.swing_v[0];
      const swing = u.clone().multiplyScalar(su * c).add(w.clone().multiplyScalar(sv * s));
      const angle = swing.length();
      const dir = angle > 1e-9 ? t.clone().applyAxisAngle(swing.normalize(), angle) : t.clone();
      rim.push(dir.multiplyScalar(radius));
    }
    line(rim, true);
    for (let k = 0; k < 48; k += 12) line([new THREE.Vector3(), rim[k]]);
  }

  /** Screen position (CSS pixels, relative to the page) of a model-space point. */
  toScreen(p) {
    const v = p.clone().project(this.camera);
    const rect = this.canvas.getBoundingClientRect();
    return [rect.left + (v.x + 1) / 2 * rect.width, rect.top + (1 - v.y) / 2 * rect.height, v.z];
  }

  /** The joint drawn nearest to a screen point, within `pixels`, or -1. */
  pick(x, y, pixels = 14) {
    let best = -1, bestD = pixels;
    this.positions.forEach((p, i) => {
      const [sx, sy, z] = this.toScreen(p);
      const d = Math.hypot(sx - x, sy - y);
      if (z < 1 && d < bestD) { best = i; bestD = d; }
    });
    return best;
  }

  /** Where the ray under a screen point meets the plane through `point` facing the camera. */
  dragPoint(x, y, point) {
    const rect = this.canvas.getBoundingClientRect();
    const ndc = new THREE.Vector2((x - rect.left) / rect.width * 2 - 1, -((y - rect.top) / rect.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.camera);
    const normal = this.camera.getWorldDirection(new THREE.Vector3());
    const plane = new THREE.Plane().setFromNormalAndCoplanarPoint(normal, point);
    return ray.ray.intersectPlane(plane, new THREE.Vector3());
  }

  render() {
    this.renderer.render(this.scene, this.camera);
  }

  /** Renders and counts pixels that differ from the background (a "something was drawn" check). */
  samplePixels() {
    this.render();
    const gl = this.renderer.getContext();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    const bg = new THREE.Color(BACKGROUND);
    const [r, g, b] = [bg.r * 255, bg.g * 255, bg.b * 255];
    let drawn = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      if (Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b) > 24) drawn++;
    }
    return { width: w, height: h, drawn, fraction: drawn / (w * h) };
  }
}
