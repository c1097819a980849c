// The viewer in Debian's chromium: the humanoid is drawn, a dragged hand reaches its target,
// solvers switch, a BVH plays, bad input shows an error. State is read from window.appState.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import fs from 'node:fs';

const shots = process.env.IKARUS_SCREENSHOTS || 'test-results';
const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const state = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.appState)));
const joint = (s, name) => s.joints.find((j) => j.name === name);

/** Presses on a joint's screen position and drags by (dx, dy) pixels in steps. */
async function drag(page, name, dx, dy) {
  const before = await state(page);
  const [x, y] = joint(before, name).screen;
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let k = 1; k <= 8; k++) await page.mouse.move(x + dx * k / 8, y + dy * k / 8);
  await page.mouse.up();
  // The last drag's reply: the effector's goal is where the pointer let go.
  await expect.poll(async () => (await state(page)).trace !== undefined && (await state(page)).poses > before.poses + 1).toBe(true);
  await page.waitForTimeout(300);
  return state(page);
}

test('drag, solvers, base, bad input, BVH playback, keys, generate, export', async ({ page }) => {
  const consoleErrors = [];
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto('/');
  await expect.poll(() => page.evaluate(() => window.appState?.ready === true), { timeout: 30_000 }).toBe(true);
  const start = await state(page);
  expect(start.jointCount).toBe(26);
  const drawn = await page.evaluate(() => window.samplePixels());
  expect(drawn.fraction).toBeGreaterThan(0.005);

  // Left hand: click makes it an effector, dragging moves its target; CCD follows.
  const handStart = start.positions.leftHand;
  let s = await drag(page, 'leftHand', -70, 60);
  expect(s.selected).toContain('leftHand');
  expect(s.lastReport.solver).toBe('ccd');
  expect(s.lastReport.status).toBe('converged');
  const goal = s.effectors.find((e) => e.joint === 'leftHand').position;
  expect(distance(goal, handStart)).toBeGreaterThan(0.05);
  expect(distance(s.positions.leftHand, goal)).toBeLessThan(1e-4);
  expect(s.trace.length).toBeGreaterThan(0);
  // Frame rate while dragging (software WebGL here; printed, not asserted: it depends on the
  // machine's load, and the 60 fps goal is for a real GPU).
  console.log(`fps idle: ${(await state(page)).fps.toFixed(1)}`);
  const [hx, hy] = joint(s, 'leftHand').screen;
  await page.mouse.move(hx, hy);
  await page.mouse.down();
  const fpsStart = await page.evaluate(() => [performance.now(), window.appState.frames]);
  for (let k = 1; k <= 60; k++) await page.mouse.move(hx + 20 * Math.sin(k / 6), hy + 20 * Math.cos(k / 6) - 20);
  const fpsEnd = await page.evaluate(() => [performance.now(), window.appState.frames]);
  await page.mouse.up();
  console.log(`fps while dragging: ${((fpsEnd[1] - fpsStart[1]) * 1000 / (fpsEnd[0] - fpsStart[0])).toFixed(1)}`);
  s = await state(page);
  await page.screenshot({ path: path.join(shots, 'viewer-drag-ccd.png') });

  // Another solver: the analytic 7-DOF limb, with its swivel slider. From the rest pose: CCD
  // turned the clavicle, which limb7 (upper arm, forearm, hand) cannot undo.
  await page.click('#reset');
  await expect.poll(async () => (await state(page)).selected.length).toBe(0);
  await page.selectOption('#solver', 'limb7');
  await expect.poll(async () => (await state(page)).solver).toBe('limb7');
  await expect(page.locator('#swivel-box')).toBeVisible();
  // The slider asks for the feasible swivel nearest 0.8 rad (the limits exclude the default 0
  // for this target).
  await page.locator('#swivel').fill('0.8');
  s = await drag(page, 'leftHand', -50, 40);
  expect(s.lastReport.solver).toBe('limb7');
  expect(s.lastReport.status, JSON.stringify(s.lastReport)).toBe('converged');
  const goal2 = s.effectors.find((e) => e.joint === 'leftHand').position;
  expect(distance(s.positions.leftHand, goal2)).toBeLessThan(1e-4);
  expect(s.lastReport.feasible_swivels.length).toBeGreaterThan(0);
  await page.screenshot({ path: path.join(shots, 'viewer-limb7.png') });

  // The rotate gizmo: hover outwards along the diagonal from the target until the gizmo
  // highlights its Z ring (the one facing the camera), then drag along the ring.
  await page.keyboard.press('r');
  await expect.poll(async () => (await state(page)).gizmo !== null).toBe(true);
  const [gx, gy] = joint(s, 'leftHand').screen;
  let ring = null;
  for (let r = 20; r < 400 && !ring; r += 3) {
    await page.mouse.move(gx + r * Math.SQRT1_2, gy - r * Math.SQRT1_2);
    if ((await state(page)).gizmo?.axis === 'Z') ring = r * Math.SQRT1_2;
  }
  expect(ring, 'the gizmo Z ring was found').not.toBeNull();
  const before = await state(page);
  await page.mouse.down();
  for (let k = 1; k <= 6; k++) await page.mouse.move(gx + ring + 5 * k, gy - ring + 5 * k);
  await page.mouse.up();
  await expect.poll(async () => (await state(page)).effectors[0].orientation !== null).toBe(true);
  await page.waitForTimeout(300);
  s = await state(page);
  const goalQ = s.effectors[0].orientation;
  expect(s.lastReport.status, JSON.stringify(s.lastReport)).toBe('converged');
  // The hand's model rotation is the goal (either sign of the quaternion).
  const dot = goalQ.reduce((sum, x, i) => sum + x * s.rotations.leftHand[i], 0);
  expect(Math.abs(dot)).toBeGreaterThan(1 - 1e-9);
  expect(Math.abs(goalQ[3])).toBeLessThan(1 - 1e-3); // the gizmo really turned it
  expect(s.poses).toBeGreaterThan(before.poses);
  console.log(`gizmo: orientation goal ${JSON.stringify(goalQ.map((x) => +x.toFixed(3)))}, ${s.lastReport.solver} ${s.lastReport.status}, rotation error ${s.lastReport.rotation_error}`);
  await page.screenshot({ path: path.join(shots, 'viewer-gizmo.png') });
  await page.keyboard.press('r');

  // Shift-click: the right foot becomes the base.
  const foot = joint(s, 'rightFoot').screen;
  await page.keyboard.down('Shift');
  await page.mouse.click(foot[0], foot[1]);
  await page.keyboard.up('Shift');
  await expect.poll(async () => (await state(page)).base).toBe('rightFoot');

  // Bad input: a malformed BVH shows an error naming the file and line; the page keeps working.
  await page.setInputFiles('#file', { name: 'broken.bvh', mimeType: 'text/plain', buffer: Buffer.from('HIERARCHY\nROOT Hips\n{\n  OFFSET 0 zero 0\n') });
  await expect.poll(async () => (await state(page)).lastError ?? '').toMatch(/^broken\.bvh:4:/);
  await expect(page.locator('#error')).toBeVisible();
  await page.click('#undo');
  await expect.poll(async () => (await state(page)).base).toBe(null);

  // A real BVH: loads, draws, plays a few frames.
  const bvh = process.env.IKARUS_BVH;
  test.skip(!bvh, 'IKARUS_BVH not set');
  await page.setInputFiles('#file', bvh);
  await expect.poll(async () => (await state(page)).skeleton).toBe(path.basename(bvh));
  s = await state(page);
  expect(s.motion.frames).toBeGreaterThan(10);
  await expect.poll(async () => (await state(page)).joints.length).toBe(s.jointCount);
  const first = JSON.stringify((await state(page)).positions);
  await page.click('#play');
  await expect.poll(async () => (await state(page)).frame ?? 0, { timeout: 20_000 }).toBeGreaterThan(3);
  await page.click('#play');
  s = await state(page);
  expect(JSON.stringify(s.positions)).not.toBe(first);
  expect((await page.evaluate(() => window.samplePixels())).fraction).toBeGreaterThan(0.002);
  await page.screenshot({ path: path.join(shots, 'viewer-bvh.png') });

  // Keys at two frames, a generated motion between them, exported as BVH.
  for (const frame of [2, 25]) {
    await page.locator('#scrub').fill(String(frame));
    await expect.poll(async () => (await state(page)).frame).toBe(frame);
    const keys = (await state(page)).keys;
    await page.click('#capture');
    await expect.poll(async () => (await state(page)).keys).toBe(keys + 1);
  }
  await page.fill('#duration', '1');
  await page.click('#generate');
  await expect.poll(async () => (await state(page)).motion.frames).toBe(31);
  const download = page.waitForEvent('download');
  await page.click('#export');
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/\.ikarus\.bvh$/);
  const text = fs.readFileSync(await file.path(), 'utf8');
  expect(text).toMatch(/^HIERARCHY/);
  expect(text).toMatch(/Frames:\s+31/);
  expect(consoleErrors).toEqual([]);
});
