// Merged drawing buffers: the whole skeleton is three draw calls — joint spheres as shaded
// point sprites, bone cylinders as one triangle buffer, and every line (grid, limit arcs and
// cones, target markers) as one line buffer. Software WebGL (SwiftShader, as in the headless
// browser test) pays for every draw call and about a microsecond per triangle; a sphere sprite
// is one vertex. Measured there: sphere meshes for the humanoid's joints cost more than the rest
// of the frame together. The buffers are rewritten in place for each pose and never reallocated
// while the skeleton stays the same.
import * as THREE from 'three';

/** Copies of template geometries (spheres, cylinders), each placed by a matrix per pose. */
export class TriangleBatch {
  /** `parts`: one template `BufferGeometry` (indexed) per copy, in drawing order. */
  constructor(parts) {
    const vertices = parts.reduce((n, g) => n + g.attributes.position.count, 0);
    const indices = parts.reduce((n, g) => n + g.index.count, 0);
    const index = new (vertices > 65535 ? Uint32Array : Uint16Array)(indices);
    this.parts = [];
    let v = 0, i = 0;
    for (const g of parts) {
      for (let k = 0; k < g.index.count; k++) index[i++] = g.index.getX(k) + v;
      this.parts.push({ template: g, first: v });
      v += g.attributes.position.count;
    }
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setIndex(new THREE.BufferAttribute(index, 1));
    for (const name of ['position', 'normal', 'color']) {
      this.geometry.setAttribute(name, new THREE.BufferAttribute(new Float32Array(vertices * 3), 3));
    }
    this.mesh = new THREE.Mesh(this.geometry, new THREE.MeshStandardMaterial({ vertexColors: true }));
    this.mesh.frustumCulled = false; // the vertices move every pose; bounds would be stale
    this.normalMatrix = new THREE.Matrix3();
  }

  /** Places copy `k` by `matrix` (rotation, translation, any scale) and paints it `color`. */
  place(k, matrix, color) {
    const { template, first } = this.parts[k];
    const from = template.attributes, to = this.geometry.attributes;
    const e = matrix.elements, n = this.normalMatrix.getNormalMatrix(matrix).elements;
    const p = from.position.array, q = from.normal.array;
    const P = to.position.array, N = to.normal.array, C = to.color.array;
    for (let a = 0, b = first * 3; a < p.length; a += 3, b += 3) {
      const x = p[a], y = p[a + 1], z = p[a + 2];
      P[b] = e[0] * x + e[4] * y + e[8] * z + e[12];
      P[b + 1] = e[1] * x + e[5] * y + e[9] * z + e[13];
      P[b + 2] = e[2] * x + e[6] * y + e[10] * z + e[14];
      const u = q[a], v = q[a + 1], w = q[a + 2];
      const nx = n[0] * u + n[3] * v + n[6] * w, ny = n[1] * u + n[4] * v + n[7] * w, nz = n[2] * u + n[5] * v + n[8] * w;
      const l = Math.hypot(nx, ny, nz) || 1;
      N[b] = nx / l; N[b + 1] = ny / l; N[b + 2] = nz / l;
      C[b] = color.r; C[b + 1] = color.g; C[b + 2] = color.b;
    }
  }

  /** Call after placing: uploads the changed buffers with the next frame. */
  commit() {
    for (const name of ['position', 'normal', 'color']) this.geometry.attributes[name].needsUpdate = true;
  }
}

/** Coloured line segments refilled from the start for each pose, up to a fixed capacity. */
export class LineBatch {
  constructor(capacity) {
    this.capacity = capacity;
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(capacity * 6), 3));
    this.geometry.setAttribute('color', new THREE.BufferAttribute(new Float32Array(capacity * 6), 3));
    this.lines = new THREE.LineSegments(this.geometry, new THREE.LineBasicMaterial({ vertexColors: true }));
    this.lines.frustumCulled = false;
    this.count = 0;
    this.fixed = 0;
  }

  /** Keeps the segments added so far (the grid) and refills only what follows them. */
  freeze() {
    this.fixed = this.count;
  }

  /** Starts a new fill after the frozen segments. */
  clear() {
    this.count = this.fixed;
  }

  /** Adds the segment `a`–`b` (model space) in `color`; ignored past the capacity. */
  segment(a, b, color) {
    if (this.count >= this.capacity) return;
    const P = this.geometry.attributes.position.array, C = this.geometry.attributes.color.array;
    const k = this.count * 6;
    P[k] = a.x; P[k + 1] = a.y; P[k + 2] = a.z; P[k + 3] = b.x; P[k + 4] = b.y; P[k + 5] = b.z;
    C[k] = C[k + 3] = color.r; C[k + 1] = C[k + 4] = color.g; C[k + 2] = C[k + 5] = color.b;
    this.count++;
  }

  /** Call after filling: draws exactly the segments added. */
  commit() {
    this.geometry.setDrawRange(0, this.count * 2);
    this.geometry.attributes.position.needsUpdate = true;
    this.geometry.attributes.color.needsUpdate = true;
  }
}

const SPHERE_VERTEX = `
attribute float radius;
attribute vec3 tint;
uniform float pixelsPerUnit;
varying vec3 vTint;
void main() {
  vec4 view = modelViewMatrix * vec4(position, 1.0);
  gl_Position = projectionMatrix * view;
  gl_PointSize = max(2.0, 2.0 * radius * pixelsPerUnit / max(-view.z, 1e-6));
  vTint = tint;
}`;

const SPHERE_FRAGMENT = `
varying vec3 vTint;
void main() {
  vec2 p = gl_PointCoord * 2.0 - 1.0;
  float d = dot(p, p);
  if (d > 1.0) discard;
  vec3 normal = vec3(p.x, -p.y, sqrt(1.0 - d));
  float light = 0.3 + 0.7 * max(dot(normal, normalize(vec3(0.35, 0.6, 0.7))), 0.0);
  gl_FragColor = vec4(vTint * light, 1.0);
  #include <colorspace_fragment>
}`;

/** Spheres drawn as shaded point sprites (one vertex each), sized in model units. */
export class SphereBatch {
  constructor(count) {
    this.geometry = new THREE.BufferGeometry();
    this.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(count * 3), 3));
    this.geometry.setAttribute('tint', new THREE.BufferAttribute(new Float32Array(count * 3), 3));
    this.geometry.setAttribute('radius', new THREE.BufferAttribute(new Float32Array(count), 1));
    this.material = new THREE.ShaderMaterial({
      uniforms: { pixelsPerUnit: { value: 1 } },
      vertexShader: SPHERE_VERTEX,
      fragmentShader: SPHERE_FRAGMENT,
    });
    this.points = new THREE.Points(this.geometry, this.material);
    this.points.frustumCulled = false;
  }

  /** Sphere `k` at `center` (model space) with `radius`, in `color`. */
  place(k, center, radius, color) {
    this.geometry.attributes.position.setXYZ(k, center.x, center.y, center.z);
    this.geometry.attributes.tint.setXYZ(k, color.r, color.g, color.b);
    this.geometry.attributes.radius.setX(k, radius);
  }

  /** Call after placing: uploads the changed buffers with the next frame. */
  commit() {
    for (const name of ['position', 'tint', 'radius']) this.geometry.attributes[name].needsUpdate = true;
  }

  /** Pixels per model unit at unit distance, for `camera` drawing into `height` pixels. */
  setView(camera, height) {
    this.material.uniforms.pixelsPerUnit.value = height / (2 * Math.tan(THREE.MathUtils.degToRad(camera.fov) / 2));
  }
}
