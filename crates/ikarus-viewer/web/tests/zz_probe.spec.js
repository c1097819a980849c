import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
const state = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.appState)));
test('probe', async ({ page }) => {
  await page.route('**/app.js', async (route) => {
    const r = await route.fetch(); const body = await r.text();
    await route.fulfill({ response: r, body: body + '\nwindow.ikarusView = view;\n' });
  });
  await page.route('**/scene.js', async (route) => {
    const r = await route.fetch(); const body = await r.text();
    await route.fulfill({ response: r, body: body + '\nwindow.THREE = THREE;\n' });
  });
  await page.goto('/');
  await expect.poll(() => page.evaluate(() => window.appState?.ready === true), { timeout: 30_000 }).toBe(true);
  const file = process.env.IKARUS_VRM;
  const base64 = fs.readFileSync(file).toString('base64');
  await page.evaluate(([name, base64]) => {
    const raw = atob(base64), bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    const data = new DataTransfer(); data.items.add(new File([bytes], name));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, [path.basename(file), base64]);
  await expect.poll(async () => (await state(page)).mesh?.vertices ?? 0, { timeout: 20000 }).toBeGreaterThan(0);
  await page.waitForTimeout(1500);
  const out = await page.evaluate(() => {
    const v = window.ikarusView, THREE = window.THREE;
    const gl = v.renderer.getContext(); const px = new Uint8Array(4);
    const time = (n) => { const t0 = performance.now(); for (let i = 0; i < n; i++) { v.render(); gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); } return ((performance.now() - t0) / n).toFixed(1); };
    const r = {};
    r.info = JSON.stringify({ tris: v.skin.mesh.geometry.index.count / 3, verts: v.skin.vertices, size: [gl.drawingBufferWidth, gl.drawingBufferHeight], mats: v.skin.materials.length, tex: v.skin.materials.map((m) => m.map?.image ? [m.map.image.width, m.map.image.height] : null) });
    time(3);
    const setFilter = (f, mip) => { v.skin.materials.forEach((m) => { if (m.map) { m.map.minFilter = f; m.map.generateMipmaps = mip; m.map.needsUpdate = true; } }); time(1); };
    const variants = {
      base: [() => {}, () => {}],
      linearNoMip: [() => setFilter(THREE.LinearFilter, false), () => setFilter(THREE.LinearMipmapLinearFilter, true)],
      front: [() => { v.skin.materials.forEach((m) => { m.side = THREE.FrontSide; m.needsUpdate = true; }); time(1); }, () => { v.skin.materials.forEach((m) => { m.side = THREE.DoubleSide; m.needsUpdate = true; }); time(1); }],
      noSkin: [() => { v.skin.mesh.visible = false; }, () => { v.skin.mesh.visible = true; }],
      noTex: [() => { v.skin.materials.forEach((m) => { m.userData.map = m.map; m.map = null; m.needsUpdate = true; }); time(1); }, () => { v.skin.materials.forEach((m) => { m.map = m.userData.map; m.needsUpdate = true; }); time(1); }],
      res75: [() => { v.renderer.setPixelRatio(0.75); v.resize(); time(1); }, () => { v.renderer.setPixelRatio(1); v.resize(); time(1); }],
      noSpheres: [() => { v.spheres.points.visible = false; }, () => { v.spheres.points.visible = true; }],
      noSolids: [() => { v.solids.mesh.visible = false; }, () => { v.solids.mesh.visible = true; }],
      noLines: [() => { v.overlay.lines.visible = false; }, () => { v.overlay.lines.visible = true; }],
    };
    for (const k of Object.keys(variants)) r[k] = Infinity;
    for (let rep = 0; rep < 6; rep++) {
      for (const [k, [on, off]] of Object.entries(variants)) { on(); r[k] = Math.min(r[k], Number(time(4))); off(); }
    }
    return r;
  });
  console.log('PROBE', JSON.stringify(out));
});
