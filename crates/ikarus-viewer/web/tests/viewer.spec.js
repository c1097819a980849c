// The viewer in Debian's chromium: the humanoid is drawn, a dragged hand reaches its target,
// solvers switch, a BVH plays, bad input shows an error. State is read from window.appState.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import fs from 'node:fs';
import { distance, dragBy, dragFrameRate, joint, openPage, shots, state } from './page.js';

/** Presses on a joint's screen position and drags by (dx, dy) pixels in steps. */
async function drag(page, name, dx, dy) {
  const before = await dragBy(page, name, dx, dy);
  // The last drag's reply: the effector's goal is where the pointer let go.
  await expect.poll(async () => (await state(page)).trace !== undefined && (await state(page)).poses > before.poses + 1).toBe(true);
  await page.waitForTimeout(300);
  return state(page);
}

test('drag, solvers, base, bad input, BVH playback, keys, generate, export', async ({ page }) => {
  const consoleErrors = await openPage(page);
  const start = await state(page);
  expect(start.jointCount).toBe(26);
  const drawn = await page.evaluate(() => window.samplePixels());
  expect(drawn.fraction).toBeGreaterThan(0.005);

  // Left hand: click makes it an effector, dragging moves its target; the built-in humanoid's
  // default solver, the full-body solver with both feet pinned, follows.
  expect(start.solver).toBe('body');
  await expect(page.locator('#solver')).toHaveValue('body');
  expect([...start.selected].sort()).toEqual(['leftFoot', 'rightFoot']);
  const handStart = start.positions.leftHand;
  let s = await drag(page, 'leftHand', -70, 60);
  expect(s.selected).toContain('leftHand');
  expect(s.lastReport.solver).toBe('body');
  console.log(`body drag: ${JSON.stringify(s.lastReport)} goal ${JSON.stringify(s.effectors.find((e) => e.joint === 'leftHand'))} start ${JSON.stringify(handStart)}`);
  expect(s.lastReport.status).toBe('converged');
  const goal = s.effectors.find((e) => e.joint === 'leftHand').position;
  expect(distance(goal, handStart)).toBeGreaterThan(0.05);
  expect(distance(s.positions.leftHand, goal)).toBeLessThan(1e-4);
  expect(s.trace.length).toBeGreaterThan(0);
  // Frame rate while dragging: frames rendered per second (the page renders on demand, so
  // only frames that drew count) while the pointer moves and poses arrive.
  console.log(`renderer: ${JSON.stringify(s.renderer)}; frames rendered in the last second while idle: ${(await state(page)).fps.toFixed(1)}`);
  // The best of up to three two-second drags (a window on a shared VM can lose frames to the
  // host; a failure of all three on a busy machine should be rerun when it is idle).
  let fps = await dragFrameRate(page, 'leftHand', 40);
  for (let again = 0; again < 2 && (fps.fps < 55 || fps.poses / fps.seconds <= 55); again++) {
    console.log(`while dragging: ${fps.fps.toFixed(1)} fps, ${(fps.poses / fps.seconds).toFixed(1)} poses/s; measured again`);
    fps = await dragFrameRate(page, 'leftHand', 40);
  }
  console.log(`while dragging: ${fps.frames} frames rendered in ${fps.seconds.toFixed(2)} s = ${fps.fps.toFixed(1)} fps; ${fps.moves} pointer moves, ${fps.poses} poses (${(fps.poses / fps.seconds).toFixed(1)}/s)`);
  expect(fps.poses / fps.seconds, 'poses arrive at least at the display rate').toBeGreaterThan(55);
  expect(fps.fps, 'the page keeps 60 fps while dragging').toBeGreaterThanOrEqual(55);
  s = await state(page);
  await page.screenshot({ path: path.join(shots, 'viewer-drag-body.png') });

  // Another solver: the analytic 7-DOF limb, with its swivel slider. From the rest pose (the
  // body solver turned the clavicle, which limb7 — upper arm, forearm, hand — cannot undo);
  // the reset pins the feet again, and another solver releases them.
  await page.click('#reset');
  await expect.poll(async () => [...(await state(page)).selected].sort().join()).toBe('leftFoot,rightFoot');
  await page.selectOption('#solver', 'limb7');
  await expect.poll(async () => (await state(page)).selected.length).toBe(0);
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

test('a URDF robot dropped on the page stands up, is framed and solves', async ({ page }) => {
  const urdf = process.env.IKARUS_URDF;
  test.skip(!urdf, 'IKARUS_URDF not set');
  const consoleErrors = await openPage(page);
  // Dropped like a file from the desktop: a drop event carrying the file.
  const text = fs.readFileSync(urdf, 'utf8');
  const links = (text.match(/<link\s/g) ?? []).length;
  await page.evaluate(([name, text]) => {
    const data = new DataTransfer();
    data.items.add(new File([text], name, { type: 'application/xml' }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, [path.basename(urdf), text]);
  await expect.poll(async () => (await state(page)).skeleton).toBe(path.basename(urdf));
  await expect.poll(async () => (await state(page)).joints.length).toBe(links);
  let s = await state(page);
  expect(s.jointCount).toBe(links);
  expect(s.format).toBe('urdf');
  expect((await page.evaluate(() => window.samplePixels())).fraction).toBeGreaterThan(0.002);
  // Standing up: at q = 0 the arm points up its +Z, so the flange is well above the base on
  // screen; and every joint is in view.
  const box = await page.locator('#view').boundingBox();
  const base = joint(s, 'panda_link0').screen, flange = joint(s, 'panda_link8').screen;
  expect(base[1] - flange[1]).toBeGreaterThan(0.3 * box.height);
  for (const j of s.joints) {
    expect(j.screen[0]).toBeGreaterThan(box.x);
    expect(j.screen[0]).toBeLessThan(box.x + box.width);
    expect(j.screen[1]).toBeGreaterThan(box.y);
    expect(j.screen[1]).toBeLessThan(box.y + box.height);
  }
  await page.screenshot({ path: path.join(shots, 'viewer-urdf.png') });
  // Levenberg–Marquardt drags the flange: converged, and the flange is on its target.
  await page.selectOption('#solver', 'lm');
  await expect.poll(async () => (await state(page)).solver).toBe('lm');
  s = await drag(page, 'panda_link8', 80, 120);
  expect(s.lastReport.solver).toBe('lm');
  expect(s.lastReport.status, JSON.stringify(s.lastReport)).toBe('converged');
  const goal = s.effectors.find((e) => e.joint === 'panda_link8').position;
  expect(distance(goal, s.joints.find((j) => j.name === 'panda_link8').world)).toBeLessThan(1e-4);
  expect(distance(s.positions.panda_link8, goal)).toBeLessThan(1e-4);
  console.log(`urdf: ${s.jointCount} links, lm ${s.lastReport.status} in ${s.lastReport.iterations} iterations, position error ${s.lastReport.position_error}`);
  await page.screenshot({ path: path.join(shots, 'viewer-urdf-drag.png') });
  expect(consoleErrors).toEqual([]);
});
