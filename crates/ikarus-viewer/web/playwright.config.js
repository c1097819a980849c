// Run by crates/ikarus-cli/tests/browser.rs (`cargo test`), which builds `ikarus` first and sets
// IKARUS_BIN, IKARUS_VIEWER_PORT, IKARUS_SCREENSHOTS and IKARUS_BVH.
import { defineConfig } from '@playwright/test';

const port = process.env.IKARUS_VIEWER_PORT || '8766';
const bin = process.env.IKARUS_BIN || '../../../target/release/ikarus';

export default defineConfig({
  testDir: './tests',
  timeout: 120_000,
  workers: 1,
  reporter: 'list',
  use: {
    browserName: 'chromium',
    headless: true,
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1280, height: 720 },
    launchOptions: { executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium' },
  },
  webServer: {
    command: `"${bin}" serve --port ${port}`,
    url: `http://127.0.0.1:${port}/`,
    timeout: 30_000,
    reuseExistingServer: false,
    stdout: 'pipe',
  },
});
