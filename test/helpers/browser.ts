import { existsSync, mkdirSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * Headless Chromium for tests, the way CI provides Java: `.ci/run` installs Debian's `chromium`
 * with apt-get when absent. A missing browser fails the test loudly; it is never a skip.
 */

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'] as const;

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');

/** `DOERS_CHROMIUM` when set (it must exist), else the first installed candidate. */
const chromiumPath = (): string => {
  const fromEnv = process.env.DOERS_CHROMIUM;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`chromium is missing: DOERS_CHROMIUM=${fromEnv} does not exist`);
    return fromEnv;
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `chromium is missing: none of ${CANDIDATES.join(', ')} exists and DOERS_CHROMIUM is unset. ` +
        '.ci/run installs it (apt-get install -y chromium); or point DOERS_CHROMIUM at a Chromium binary.',
    );
  }
  return found;
};

/** Launches headless Chromium. The caller closes it. */
export const launchBrowser = async (): Promise<Browser> => {
  const args = ['--disable-dev-shm-usage'];
  // Chromium refuses to run its sandbox as root (the usual container case).
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return puppeteer.launch({ executablePath: chromiumPath(), headless: true, args });
};

/** Launches a browser, opens one page, runs `fn` on it and always closes the browser. */
export const withPage = async <T>(
  fn: (page: Page) => Promise<T>,
  opts: { viewport?: { width: number; height: number } } = {},
): Promise<T> => {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    if (opts.viewport) await page.setViewport(opts.viewport);
    return await fn(page);
  } finally {
    await browser.close();
  }
};

/**
 * Writes a full-page PNG of `page` to docs/screenshots/`file` (a relative path; `.png` is added
 * when missing; directories are created). Returns the absolute path written.
 */
export const screenshot = async (page: Page, file: string): Promise<string> => {
  const target = resolve(SCREENSHOTS, file.endsWith('.png') ? file : `${file}.png`);
  const rel = relative(SCREENSHOTS, target);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`screenshot path must be under docs/screenshots/: ${file}`);
  mkdirSync(dirname(target), { recursive: true });
  await page.screenshot({ path: target as `${string}.png`, type: 'png', fullPage: true });
  return target;
};
