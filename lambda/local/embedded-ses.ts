import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { lazyLoopback } from './lazy-loopback.js';

const require = createRequire(import.meta.url);

export interface EmbeddedSes {
  /** The SES v2 API; in a browser, the mail it was sent (as JSON at `/store`). */
  readonly url: string;
  close(): Promise<void>;
}

/** The sender the local server's mail comes from when DOERS_EMAIL_FROM is unset (a valid address on a reserved name). */
export const LOCAL_EMAIL_FROM = 'doers@localhost.localdomain';

/** aws-ses-v2-local in a thread of its own, listening on a loopback port the system picks. */
const startWorker = async (): Promise<{ readonly port: number; readonly worker: Worker }> => {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     require(${JSON.stringify(require.resolve('aws-ses-v2-local'))})
       .default({ host: '127.0.0.1', port: 0 })
       .then((server) => parentPort.postMessage(server.address().port));`,
    // Plain JavaScript: without the parent's flags the thread loads no TypeScript loader.
    { eval: true, execArgv: [] },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`The local SES stopped before it listened (exit code ${code})`)));
    });
    return { port, worker };
  } catch (err) {
    await worker.terminate();
    throw err;
  }
};

/**
 * The SES v2 API on loopback, for `npm start` and the tests: aws-ses-v2-local answers the API the
 * e-mail sender (lambda/delivery/email-sender.ts) speaks, keeps what it is sent in memory and shows
 * it in a browser at its URL.
 *
 * Loading it (express, mailparser, nodemailer) is about 180 ms of synchronous work, which measured
 * as 250 ms more for every local server's start even on a thread of its own, while most local
 * servers (each test file's) send no mail. So the port opens at once (lazy-loopback.ts), and the
 * library is started on the first connection, in a worker thread: its store (one per module
 * instance) is then the thread's, so two local servers in one process keep their mail apart, and the
 * local server's thread is not blocked while it loads.
 */
export const startEmbeddedSes = async (): Promise<EmbeddedSes> => {
  const port = await lazyLoopback('The local SES API', startWorker, ({ worker }) => worker.terminate().then(() => undefined));
  return { url: `http://127.0.0.1:${port.port}`, close: port.close };
};
