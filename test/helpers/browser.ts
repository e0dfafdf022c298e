import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * Headless Chromium for tests, found in this order: `DOERS_CHROMIUM` (it must exist: a macOS or
 * Windows developer points it at their Chrome), the system's Chromium, else the one that arrives
 * with `npm ci` from the npm registry (`@sparticuz/chromium`, a dev dependency that ships the binary
 * inside the package and unpacks it to the temp directory on first use). A browser test never skips.
 */

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'] as const;

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');

/** Where the browser comes from, for the test log. */
export let chromiumSource = '';

const chromiumPath = async (): Promise<string> => {
  const fromEnv = process.env.DOERS_CHROMIUM;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`chromium is missing: DOERS_CHROMIUM=${fromEnv} does not exist`);
    chromiumSource = `DOERS_CHROMIUM (${fromEnv})`;
    return fromEnv;
  }
  const system = CANDIDATES.find((p) => existsSync(p));
  if (system) {
    chromiumSource = `system (${system})`;
    return system;
  }
  if (process.platform !== 'linux') {
    throw new Error('chromium is missing: set DOERS_CHROMIUM to your Chrome or Chromium binary (the npm-installed one runs on Linux only)');
  }
  packagedChromium ??= unpackChromium();
  const path = await packagedChromium;
  chromiumSource = `@sparticuz/chromium (${path})`;
  return path;
};

let packagedChromium: Promise<string> | undefined;

/**
 * Unpacks the npm-installed Chromium once per machine, race-free: test files run in parallel
 * processes, and the package's own unpacking writes straight to `<tmp>/chromium`, which another
 * process would start while it is still being written (ETXTBSY), or forever after a run killed
 * mid-write. So each process unpacks into a private directory of its own (the package writes
 * where `os.tmpdir()` points, which reads TMPDIR) and renames it into place in one step; a
 * process that loses the race drops its copy and uses the winner's.
 */
const unpackChromium = async (): Promise<string> => {
  const require = createRequire(import.meta.url);
  const pkg = require(resolve(dirname(require.resolve('@sparticuz/chromium')), '..', 'package.json')) as { version: string };
  const target = join(tmpdir(), `doers-chromium-${pkg.version}`);
  const binary = join(target, 'chromium');
  if (existsSync(binary)) return binary;
  const staging = mkdtempSync(join(tmpdir(), 'doers-chromium-unpacking-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    await packaged.executablePath();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  try {
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(binary)) throw error;
  }
  return binary;
};

/** Launches headless Chromium. The caller closes it. */
export const launchBrowser = async (): Promise<Browser> => {
  const args = [
    '--disable-dev-shm-usage',
    // This machine's network is closed: no background connections for updates, sync or telemetry.
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ];
  // Chromium refuses to run its sandbox as root (the usual container case).
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return puppeteer.launch({ executablePath: await chromiumPath(), headless: true, args });
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
