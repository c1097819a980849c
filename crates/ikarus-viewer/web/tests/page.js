// What the browser tests share: the page's state, opening it and timing a drag. Not a spec
// itself (Playwright runs only `*.spec.js`).
import { expect } from '@playwright/test';

/** Where screenshots go. */
export const shots = process.env.IKARUS_SCREENSHOTS || 'test-results';
/** The distance between two points `[x, y, z]`. */
export const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
/** A copy of the page's `window.appState`. */
export const state = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.appState)));
/** The joint called `name` in a state read by `state`. */
export const joint = (s, name) => s.joints.find((j) => j.name === name);

/**
 * Opens the page and waits until it is ready. Returns the list the page's uncaught errors are
 * collected in (empty at the end of a clean test).
 */
export async function openPage(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('/');
  await expect.poll(() => page.evaluate(() => window.appState?.ready === true), { timeout: 30_000 }).toBe(true);
  return errors;
}

/**
 * Presses on joint `name`'s screen position and drags by (dx, dy) pixels in eight steps.
 * Returns the state read before the press.
 */
export async function dragBy(page, name, dx, dy) {
  const before = await state(page);
  const [x, y] = joint(before, name).screen;
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let k = 1; k <= 8; k++) await page.mouse.move(x + dx * k / 8, y + dy * k / 8);
  await page.mouse.up();
  return before;
}

/**
 * Holds the pointer down on joint `name` and moves it on a circle of `radius` pixels for two
 * seconds at 125 Hz (a common mouse rate), counting frames rendered and poses received; also
 * returns the render scale at the end. The press and release are real; the moves are
 * dispatched in the page to the same handlers, because Playwright's `mouse.move` waits for a
 * round trip per event (about 30 ms here), which would be a pointer slower than any real mouse.
 */
export async function dragFrameRate(page, name, radius) {
  const [x, y] = joint(await state(page), name).screen;
  await page.mouse.move(x, y);
  await page.mouse.down();
  const result = await page.evaluate(([x, y, radius]) => new Promise((resolve) => {
    const canvas = document.getElementById('view');
    const start = performance.now(), frames = window.appState.frames, poses = window.appState.poses;
    let moves = 0;
    const timer = setInterval(() => {
      moves++;
      const at = { clientX: x + radius * Math.sin(moves / 20), clientY: y + radius * Math.cos(moves / 20) - radius };
      canvas.dispatchEvent(new PointerEvent('pointermove', { ...at, pointerId: 1, pointerType: 'mouse', isPrimary: true, buttons: 1, bubbles: true }));
      const seconds = (performance.now() - start) / 1000;
      if (seconds < 2) return;
      clearInterval(timer);
      const drawn = window.appState.frames - frames;
      resolve({ moves, seconds, frames: drawn, fps: drawn / seconds, poses: window.appState.poses - poses, scale: window.appState.renderScale });
    }, 8);
  }), [x, y, radius]);
  await page.mouse.up();
  return result;
}
