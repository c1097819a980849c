// The full-body solver and grounding in Debian's chromium: the built-in humanoid starts with
// the body solver and its feet pinned; a hand dragged well past its reach draws the pelvis while
// the feet hold (the server's pose replies); a walk grounded on stairs stands on them, the
// terrain drawn (pixels) and played. State is read from window.appState.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { distance, joint, openPage, shots, state } from './page.js';

test('full body: a hand past reach draws the body over pinned feet; a walk grounded on stairs', async ({ page }) => {
  const consoleErrors = await openPage(page);
  let s = await state(page);
  expect(s.solver).toBe('body');
  expect([...s.selected].sort()).toEqual(['leftFoot', 'rightFoot']);
  const start = s.positions;

  // The hand dragged outwards along its arm by 1.5 times the arm's screen length: far past
  // its reach from where the shoulder stood.
  const [sx, sy] = joint(s, 'leftUpperArm').screen, [hx, hy] = joint(s, 'leftHand').screen;
  const poses = s.poses;
  await page.mouse.move(hx, hy);
  await page.mouse.down();
  for (let k = 1; k <= 10; k++) await page.mouse.move(hx + 1.5 * (hx - sx) * k / 10, hy + 1.5 * (hy - sy) * k / 10 + 30 * k / 10);
  await page.mouse.up();
  await expect.poll(async () => (await state(page)).poses).toBeGreaterThan(poses + 1);
  await page.waitForTimeout(300);
  s = await state(page);
  expect(s.lastReport.solver).toBe('body');
  const goal = s.effectors.find((e) => e.joint === 'leftHand').position;
  const reach = distance(start.leftUpperArm, start.leftLowerArm) + distance(start.leftLowerArm, start.leftHand);
  expect(distance(goal, start.leftUpperArm)).toBeGreaterThan(reach + 0.1);
  const pelvis = distance(s.positions.hips, start.hips);
  expect(pelvis, 'the pelvis follows the hand').toBeGreaterThan(0.03);
  for (const foot of ['leftFoot', 'rightFoot']) expect(distance(s.positions[foot], start[foot])).toBeLessThan(1e-3);
  // The hand is nearer its goal than the arm alone could bring it.
  const alone = distance(goal, start.leftUpperArm) - reach;
  expect(distance(s.positions.leftHand, goal)).toBeLessThan(alone);
  console.log(`body reach: pelvis moved ${(pelvis * 100).toFixed(1)} cm, hand ${(distance(s.positions.leftHand, goal) * 100).toFixed(1)} cm from a goal ${(alone * 100).toFixed(1)} cm past the arm's reach, ${s.lastReport.status} in ${s.lastReport.time_us?.toFixed?.(0)} µs`);
  await page.screenshot({ path: path.join(shots, 'body-reach.png') });

  // A walk grounded on stairs laid along its travel.
  const bvh = process.env.IKARUS_BVH;
  test.skip(!bvh, 'IKARUS_BVH not set');
  await page.setInputFiles('#file', bvh);
  await expect.poll(async () => (await state(page)).skeleton).toBe(path.basename(bvh));
  await expect.poll(async () => (await state(page)).joints.length).toBe((await state(page)).jointCount);
  const flat = (await page.evaluate(() => window.samplePixels())).fraction;
  await page.selectOption('#terrain', 'stairs');
  await expect.poll(async () => (await state(page)).grounding !== null, { timeout: 30_000 }).toBe(true);
  s = await state(page);
  expect(s.grounding.unreached).toBe(0);
  expect(s.grounding.pelvis_range[1]).toBeGreaterThan(0.3);
  expect(s.terrain.rows).toBeGreaterThan(10);
  await expect(page.locator('#grounding')).toBeVisible();
  const drawn = (await page.evaluate(() => window.samplePixels())).fraction;
  expect(drawn, 'the stairs are drawn').toBeGreaterThan(flat + 0.05);
  await page.click('#play');
  await expect.poll(async () => (await state(page)).frame ?? 0, { timeout: 20_000 }).toBeGreaterThan(20);
  await page.click('#play');
  console.log(`stairs: ${s.grounding.contacts} contacts, pelvis up to ${(s.grounding.pelvis_range[1] * 100).toFixed(0)} cm, ${s.terrain.rows}×${s.terrain.columns} heights; pixels ${flat.toFixed(3)} → ${drawn.toFixed(3)}`);
  await page.screenshot({ path: path.join(shots, 'body-stairs.png') });

  // Back to its own floor: no terrain, the first frame as loaded.
  await page.selectOption('#terrain', '');
  await expect.poll(async () => (await state(page)).terrain).toBe(null);
  expect((await state(page)).grounding).toBe(null);
  expect(consoleErrors).toEqual([]);
});
