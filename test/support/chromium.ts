/**
 * Debian's Chromium driven by playwright-core (installed by `.ci/run`): headless, no
 * sandbox (CI runs as root), a fresh profile per browser.
 */
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumBinary(): string {
  const found = [process.env.ENGRAM_TEST_CHROMIUM, ...CANDIDATES].find((file): file is string => !!file && fs.existsSync(file));
  if (!found) throw new Error(`No Chromium found (looked at ${CANDIDATES.join(', ')}): install Debian's package, \`apt-get install chromium\` (.ci/run does)`);
  return found;
}

export interface TestBrowser {
  browser: Browser;
  context: BrowserContext;
  close(): Promise<void>;
}

export async function openBrowser(options: { clipboard?: boolean } = {}): Promise<TestBrowser> {
  // Playwright gives every launch a fresh, temporary profile (its own --user-data-dir).
  const browser = await chromium.launch({
    executablePath: chromiumBinary(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  return {
    browser,
    context,
    async close() {
      await browser.close();
    },
  };
}
